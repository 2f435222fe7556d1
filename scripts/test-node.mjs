// npm run test:node -- <line> [spec paths and jest options]
//
// Runs specs on another Node line than the one installed, e.g. `npm run test:node -- 24`: the
// newest release of that line (or the exact version given, `24.22.3`) comes from the npm
// registry's node-<platform>-<arch> package, is unpacked once into the temporary folder and is put
// first on PATH, so the agents' own `#!/usr/bin/env node` run on it too. Without more arguments it
// runs SUBSET; with them, one jest run with those arguments.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// What runs on every Node line: the pure and marble specs, the property tests, the process layer
// on real child processes, the sessions, and the AI SDK entry (the AI SDK itself declares Node 22):
// its mappings, and its UI message streams read by the SDK's own transport with the real pi end to
// end (a Node program, so it runs on that Node too). The provider's spec runs on the installed Node:
// most of the CLIs it drives are native binaries, the same on every line.
const SUBSET = ['spec/operators/', 'spec/properties/', 'spec/process/', 'spec/sessions/', 'spec/ai-sdk/parts.spec.ts', 'spec/ai-sdk/ui-stream.spec.ts'];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(tmpdir(), 'agent-rx-node');
const PACKAGE = `node-${process.platform}-${process.arch}`;

function fail(message) {
  process.stderr.write(`test:node: ${message}\n`);
  process.exit(2);
}

const byVersion = (a, b) => {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
};

const cached = (version) => join(CACHE, `${PACKAGE}-${version}`, 'bin', 'node');

// The newest release of the line on the registry; offline, the newest one already unpacked.
function resolve(line) {
  const inLine = (version) => /^\d+\.\d+\.\d+$/.test(version) && `${version}.`.startsWith(`${line}.`);
  let versions;
  try {
    const answer = JSON.parse(execFileSync('npm', ['view', `${PACKAGE}@${line}`, 'version', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) || '[]');
    versions = (Array.isArray(answer) ? answer : [answer]).filter(inLine);
  } catch (error) {
    const here = existsSync(CACHE) ? readdirSync(CACHE).map((name) => name.slice(PACKAGE.length + 1)).filter(inLine) : [];
    if (here.length === 0) fail(`cannot ask the npm registry for ${PACKAGE}@${line}: ${String(error.stderr ?? error.message).trim()}`);
    versions = here;
  }
  if (versions.length === 0) fail(`the npm registry has no ${PACKAGE} for Node ${line}`);
  return versions.sort(byVersion).at(-1);
}

// bin/node of that version, downloaded with npm pack the first time.
function fetchNode(version) {
  const node = cached(version);
  if (existsSync(node)) return node;
  mkdirSync(CACHE, { recursive: true });
  const staging = mkdtempSync(join(CACHE, 'download-'));
  try {
    process.stdout.write(`test:node: fetching ${PACKAGE}@${version} from the npm registry\n`);
    const [packed] = JSON.parse(execFileSync('npm', ['pack', `${PACKAGE}@${version}`, '--json', '--pack-destination', staging], { cwd: staging, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
    execFileSync('tar', ['-xzf', join(staging, packed.filename), '-C', staging, 'package/bin/node'], { stdio: 'inherit' });
    try {
      renameSync(join(staging, 'package'), dirname(dirname(node)));
    } catch (error) {
      if (!existsSync(node)) throw error; // else another run unpacked it first
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return node;
}

const [line, ...rest] = process.argv.slice(2);
if (line === undefined || !/^\d+(\.\d+){0,2}$/.test(line)) fail('usage: npm run test:node -- <Node line, e.g. 24, or version, e.g. 24.22.3> [spec paths and jest options]');
if (!['linux', 'darwin'].includes(process.platform)) fail(`Node builds for ${process.platform} are not fetched by this script`);

const node = fetchNode(resolve(line));
const args = rest.length > 0 ? rest : SUBSET;
process.stdout.write(`test:node: ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()} (${node}) first on PATH: jest ${args.join(' ')}\n`);
const child = spawn(node, ['--experimental-vm-modules', join(ROOT, 'node_modules/jest/bin/jest.js'), ...args], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`, NODE: node },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 1));

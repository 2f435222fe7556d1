// `npm run conformance:latest`: the real-CLI conformance specs of every agent, run against the
// newest published version of its CLI instead of the pinned one. Installs those versions into a
// temporary folder (`npm install --prefix <tmp> --no-save --ignore-scripts`), runs
// spec/conformance/<agent>.spec.ts and <agent>-session.spec.ts with `AGENT_RX_<AGENT>_BIN` naming
// the new program (spec/conformance/cli-under-test.ts), prints one table, and removes the folder.
// Exits 1 when a suite failed. Not part of `npm test`.
//
//   npm run conformance:latest                       every agent
//   npm run conformance:latest -- --agents claude,pi only these
//   npm run conformance:latest -- --keep             keep the folder (and the specs' logs) for a look
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AGENTS } from '../lib/agent-table.js';
import type { ExecutableLookup } from '../lib/agents/definition.js';
import { currentPlatform, resolvePackageJson } from '../lib/agents/shared/setup/find-executable.js';
import { CLI_BIN_VARIABLES, type ConformanceAgent } from '../spec/conformance/cli-under-test.js';

const run = promisify(execFile);
const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** An agent's CLI as npm publishes it. */
interface AgentCli {
  readonly agent: ConformanceAgent;
  readonly packageName: string;
  /** The package the CLI moved to, if it did: its newest version is told, not run. */
  readonly movedTo?: string;
}

const CLIS: readonly AgentCli[] = [
  { agent: 'pi', packageName: '@mariozechner/pi-coding-agent', movedTo: '@earendil-works/pi-coding-agent' },
  { agent: 'claude', packageName: '@anthropic-ai/claude-code' },
  { agent: 'codex', packageName: '@openai/codex' },
  { agent: 'gemini', packageName: '@google/gemini-cli' },
  { agent: 'qwen', packageName: '@qwen-code/qwen-code' },
];

interface SuiteResult {
  readonly file: string;
  readonly passed: number;
  readonly failed: number;
  /** Failing tests by full name; a suite that could not run at all has its error here. */
  readonly failures: readonly { readonly name: string; readonly message: string }[];
}

interface Row {
  readonly cli: AgentCli;
  readonly pinned: string;
  readonly newest: string;
  readonly suites: readonly SuiteResult[];
  readonly seconds: number;
}

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const agentsArg = args[args.indexOf('--agents') + 1];
const chosen = args.includes('--agents') && agentsArg !== undefined ? new Set(agentsArg.split(',')) : undefined;
const clis = CLIS.filter((cli) => chosen === undefined || chosen.has(cli.agent));
if (clis.length === 0) {
  console.error(`no such agents: ${agentsArg ?? ''} (known: ${CLIS.map((cli) => cli.agent).join(', ')})`);
  process.exit(2);
}

const devDependencies = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
const folder = mkdtempSync(join(tmpdir(), 'agent-rx-latest-'));
// A project of its own, so that npm installs here and reads no project settings from above.
writeFileSync(join(folder, 'package.json'), '{ "private": true }\n');
let child: ChildProcess | undefined;
// Set by a signal handler: read through the object, which the compiler does not narrow.
const stop = { requested: false };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stop.requested = true;
    // The spec run started last (its specs stop their own agents when jest ends them).
    if (child?.pid !== undefined && child.exitCode === null) child.kill('SIGTERM');
  });
}

try {
  const newest = new Map<string, string>();
  for (const cli of clis) newest.set(cli.packageName, await newestVersion(cli.packageName));
  const installs = await Promise.all(clis.map(async (cli) => installSpecs(cli, newest.get(cli.packageName) ?? 'latest')));
  console.log(`installing into ${folder}: ${installs.flat().join(' ')}`);
  await run('npm', ['install', '--prefix', folder, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...installs.flat()], {
    cwd: folder,
    maxBuffer: 64 * 1024 * 1024,
  });

  const rows: Row[] = [];
  for (const cli of clis) {
    if (stop.requested) break;
    const version = newest.get(cli.packageName) ?? '?';
    const program = programOf(AGENTS[cli.agent].executable, join(folder, 'node_modules', cli.packageName));
    const files = [`spec/conformance/${cli.agent}.spec.ts`, `spec/conformance/${cli.agent}-session.spec.ts`];
    console.log(`${cli.agent} ${version}: ${files.join(', ')} with ${CLI_BIN_VARIABLES[cli.agent]}=${relative(folder, program)}`);
    const started = performance.now();
    const suites = await runSpecs(cli.agent, program, files);
    rows.push({ cli, pinned: devDependencies[cli.packageName] ?? '-', newest: version, suites, seconds: (performance.now() - started) / 1000 });
  }
  console.log(`\n${table(rows)}`);
  for (const note of await movedNotes(clis)) console.log(note);
  printFailures(rows);
  process.exitCode = stop.requested || rows.some((row) => row.suites.some((suite) => suite.failed > 0)) ? 1 : 0;
} finally {
  if (keep) console.log(`\nkept ${folder}`);
  else rmSync(folder, { recursive: true, force: true });
}

async function newestVersion(packageName: string): Promise<string> {
  const { stdout } = await run('npm', ['view', `${packageName}@latest`, 'version']);
  return stdout.trim();
}

/**
 * What to install for a CLI: its package, and for a native CLI the platform package that version
 * names for this machine (Claude Code's platform packages may have newer versions than the CLI's
 * own latest, so the one its `optionalDependencies` pin is taken).
 */
async function installSpecs(cli: AgentCli, version: string): Promise<string[]> {
  const native = AGENTS[cli.agent].executable.native;
  const platformPackage = native?.platformPackage(currentPlatform());
  if (platformPackage === undefined) return [`${cli.packageName}@${version}`];
  const { stdout } = await run('npm', ['view', `${cli.packageName}@${version}`, 'optionalDependencies', '--json']);
  const pinnedBy = stdout.trim() === '' ? {} : (JSON.parse(stdout) as Record<string, string>);
  const spec = pinnedBy[platformPackage];
  return spec === undefined || spec.startsWith('npm:') ? [`${cli.packageName}@${version}`] : [`${cli.packageName}@${version}`, `${platformPackage}@${spec}`];
}

/** The program the installed package runs, found the way its definition finds it (a JavaScript file is run with Node). */
function programOf(lookup: ExecutableLookup, packageDir: string): string {
  const packageJson = join(packageDir, 'package.json');
  if (lookup.native !== undefined) {
    const platform = currentPlatform();
    const platformPackage = lookup.native.platformPackage(platform);
    const platformJson = platformPackage === undefined ? undefined : resolvePackageJson(platformPackage, packageJson);
    const dirs = [...(platformJson === undefined ? [] : [dirname(platformJson)]), packageDir];
    const found = dirs.flatMap((dir) => lookup.native?.candidates(dir, platform) ?? []).find((candidate) => existsSync(candidate));
    if (found !== undefined) return found;
    throw new Error(`no native binary of ${lookup.native.packageName} in ${packageDir}`);
  }
  if (lookup.script !== undefined) return join(packageDir, lookup.script.entry);
  const bin = (JSON.parse(readFileSync(packageJson, 'utf8')) as { bin?: string | Record<string, string> }).bin;
  const entry = typeof bin === 'string' ? bin : lookup.names.map((name) => bin?.[name]).find((path) => path !== undefined);
  if (entry === undefined) throw new Error(`${packageJson} names no bin ${lookup.names.join(' or ')}`);
  return join(packageDir, entry);
}

/** Runs the spec files with the agent's variable set, jest's output into a log; the results from jest's JSON report. */
async function runSpecs(agent: ConformanceAgent, program: string, files: readonly string[]): Promise<SuiteResult[]> {
  const report = join(folder, `${agent}.json`);
  const log = openSync(join(folder, `${agent}.log`), 'w');
  try {
    const exit = await new Promise<number | null>((resolve) => {
      child = spawn(
        process.execPath,
        ['--experimental-vm-modules', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--json', `--outputFile=${report}`, ...files],
        { cwd: root, env: { ...process.env, [CLI_BIN_VARIABLES[agent]]: program }, stdio: ['ignore', log, log] },
      );
      child.on('error', () => {
        resolve(null);
      });
      child.on('exit', (code) => {
        resolve(code);
      });
    });
    if (!existsSync(report)) return files.map((file) => ({ file, passed: 0, failed: 1, failures: [{ name: '(jest gave no report)', message: `exit ${String(exit)}, see ${agent}.log` }] }));
    return suiteResults(report, files);
  } finally {
    closeSync(log);
  }
}

interface JestReport {
  readonly testResults: readonly {
    readonly name: string;
    readonly message: string;
    readonly assertionResults: readonly { readonly fullName: string; readonly status: string; readonly failureMessages: readonly string[] }[];
  }[];
}

function suiteResults(report: string, files: readonly string[]): SuiteResult[] {
  const results = (JSON.parse(readFileSync(report, 'utf8')) as JestReport).testResults;
  return files.map((file) => {
    const result = results.find((candidate) => candidate.name.endsWith(file));
    if (result === undefined) return { file, passed: 0, failed: 1, failures: [{ name: '(not run)', message: '' }] };
    const failedCases = result.assertionResults.filter((test) => test.status === 'failed');
    const passed = result.assertionResults.filter((test) => test.status === 'passed').length;
    // A suite that failed outside its tests (a hook, an import) has a message and maybe no failed case.
    if (failedCases.length === 0 && result.message !== '') return { file, passed, failed: 1, failures: [{ name: '(the suite itself)', message: result.message }] };
    return { file, passed, failed: failedCases.length, failures: failedCases.map((test) => ({ name: test.fullName, message: test.failureMessages.join('\n') })) };
  });
}

function table(rows: readonly Row[]): string {
  const head = ['agent', 'package', 'pinned', 'newest', 'suite', 'passed', 'failed', 'failing cases'];
  const lines: string[][] = [];
  for (const row of rows) {
    row.suites.forEach((suite, index) => {
      const names = suite.failures.map((failure) => failure.name);
      const first = index === 0 ? [AGENTS[row.cli.agent].displayName, row.cli.packageName, row.pinned, row.newest] : ['', '', '', ''];
      lines.push([...first, suite.file.replace('spec/conformance/', ''), String(suite.passed), String(suite.failed), names[0] ?? '']);
      for (const name of names.slice(1)) lines.push(['', '', '', '', '', '', '', name]);
    });
  }
  const widths = head.map((title, column) => Math.max(title.length, ...lines.map((line) => (line[column] ?? '').length)));
  const format = (line: readonly string[]): string => line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ').trimEnd();
  const durations = rows.map((row) => `${row.cli.agent} ${row.seconds.toFixed(0)} s`).join(', ');
  return [format(head), format(widths.map((width) => '-'.repeat(width))), ...lines.map(format), '', `times: ${durations}`].join('\n');
}

/** A line for each CLI that moved to another package: that package's newest version and the Node it asks for. */
async function movedNotes(list: readonly AgentCli[]): Promise<string[]> {
  const notes: string[] = [];
  for (const cli of list) {
    if (cli.movedTo === undefined) continue;
    const { stdout } = await run('npm', ['view', `${cli.movedTo}@latest`, 'version', 'engines', '--json']);
    const { version, engines } = JSON.parse(stdout) as { version?: string; engines?: { node?: string } };
    notes.push(
      `${AGENTS[cli.agent].displayName} moved to ${cli.movedTo} (newest ${version ?? '?'}, node ${engines?.node ?? 'any'}; this is Node ${process.version}): not run here, the table is ${cli.packageName}'s`,
    );
  }
  return notes;
}

function printFailures(rows: readonly Row[]): void {
  for (const row of rows) {
    for (const suite of row.suites) {
      for (const failure of suite.failures) {
        const message = stripColours(failure.message).split('\n').filter((line) => line.trim() !== '').slice(0, 6).join('\n    ');
        console.log(`\n✗ ${row.cli.agent} ${suite.file.replace('spec/conformance/', '')} › ${failure.name}\n    ${message}`);
      }
    }
  }
}

function stripColours(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

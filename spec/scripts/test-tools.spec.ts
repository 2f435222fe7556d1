import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/test-tools.mjs, the step before `npm test`, run for real with a PATH of stub programs:
// which tools it finds missing, what it tells a user who is not root, and, as root, what it asks of
// apt-get (a stub here that logs its arguments and puts the requested programs on PATH).

const SCRIPT = fileURLToPath(new URL('../../scripts/test-tools.mjs', import.meta.url));
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

let work = '';
let script = '';
let count = 0;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A folder of stub programs: each prints its name; `apt-get`, when given, is the script passed. */
function bin(tools: string[], aptGet?: string): string {
  const folder = join(work, `bin-${++count}`);
  mkdirSync(folder, { mode: 0o755 });
  for (const tool of tools) writeFileSync(join(folder, tool), `#!/bin/sh\necho ${tool}\n`, { mode: 0o755 });
  if (aptGet !== undefined) writeFileSync(join(folder, 'apt-get'), aptGet, { mode: 0o755 });
  return folder;
}

/** An apt-get that logs each call with DEBIAN_FRONTEND, and on `install` puts each package's program in `into`. */
function loggingAptGet(log: string, into: string, installExit = 0): string {
  const programs: Record<string, string> = { procps: 'ps', tmux: 'tmux', chromium: 'chromium', 'redis-server': 'redis-server' };
  return [
    '#!/bin/sh',
    `echo "$DEBIAN_FRONTEND $*" >> ${log}`,
    'if [ "$1" = install ]; then',
    `  [ ${installExit} -eq 0 ] || exit ${installExit}`,
    '  for arg in "$@"; do',
    '    case "$arg" in',
    ...Object.entries(programs).map(([pkg, program]) => `      ${pkg}) printf '#!/bin/sh\\n' > ${into}/${program}; /bin/chmod 755 ${into}/${program} ;;`),
    '    esac',
    '  done',
    'fi',
    '',
  ].join('\n');
}

/** Runs the script with only `path` as PATH; `user` drops root for the run. */
function runScript(path: string, options: { user?: boolean; env?: Record<string, string> } = {}): Promise<Outcome> {
  const ids = options.user === true && asRoot ? { uid: NOBODY, gid: NOBODY } : {};
  return new Promise((resolve) => {
    execFile(process.execPath, [script], { env: { PATH: path, HOME: work, ...options.env }, timeout: 30_000, ...ids }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'agent-rx-test-tools-'));
  chmodSync(work, 0o755); // a user other than root runs the script from here too
  script = join(work, 'test-tools.mjs');
  copyFileSync(SCRIPT, script);
  chmodSync(script, 0o644);
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('the step before npm test', () => {
  it('passes quietly when ps, tmux, chromium and redis-server are all on PATH', async () => {
    const outcome = await runScript(bin(['ps', 'tmux', 'chromium', 'redis-server']), { user: true });
    expect(outcome).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('takes chromium-browser or CHROMIUM_PATH for chromium', async () => {
    expect((await runScript(bin(['ps', 'tmux', 'chromium-browser', 'redis-server']), { user: true })).code).toBe(0);
    const withEnv = await runScript(bin(['ps', 'tmux', 'redis-server']), { user: true, env: { CHROMIUM_PATH: '/opt/chrome/chrome' } });
    expect(withEnv.code).toBe(0);
  });

  it('stops a user who is not root with the command that installs what is missing, and runs no apt-get', async () => {
    const log = join(work, 'user-apt.log');
    writeFileSync(log, '');
    chmodSync(log, 0o666); // where that user's apt-get call would show
    const outcome = await runScript(bin(['ps', 'chromium'], loggingAptGet(log, work)), { user: true });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('the tests need tmux, redis-server, not found on PATH');
    expect(outcome.stderr).toContain('  sudo apt-get update && sudo apt-get install -y tmux redis-server\n');
    expect(outcome.stderr).toContain('SKIP_TEST_TOOLS=1 npm test -- spec/operators');
    expect(readFileSync(log, 'utf8')).toBe('');
  });

  it('passes without looking when SKIP_TEST_TOOLS=1', async () => {
    expect(await runScript(bin([]), { user: true, env: { SKIP_TEST_TOOLS: '1' } })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await runScript(bin([]), { user: true, env: { SKIP_TEST_TOOLS: '0' } })).code).toBe(1);
  });
});

// Only root installs; as another user these cases cannot be run.
(asRoot ? describe : describe.skip)('the step before npm test, as root', () => {
  it('installs what is missing with apt-get, non-interactive, after an update', async () => {
    const log = join(work, 'root-apt.log');
    const folder = bin(['ps', 'chromium']);
    writeFileSync(join(folder, 'apt-get'), loggingAptGet(log, folder), { mode: 0o755 });
    const outcome = await runScript(folder);
    expect(outcome.code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('noninteractive update -qq\nnoninteractive install -y -qq tmux redis-server\n');
    expect(outcome.stdout).toContain('installing tmux redis-server with apt-get');
  });

  it('stops with the command when apt-get fails, and when the install leaves a program missing', async () => {
    const failing = bin(['ps', 'tmux', 'chromium']);
    writeFileSync(join(failing, 'apt-get'), loggingAptGet(join(work, 'failing-apt.log'), failing, 100), { mode: 0o755 });
    const failed = await runScript(failing);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('apt-get could not install them');
    expect(failed.stderr).toContain('  apt-get update && apt-get install -y redis-server\n');

    const lost = bin(['ps', 'tmux', 'chromium'], loggingAptGet(join(work, 'lost-apt.log'), join(work, 'elsewhere'), 0));
    mkdirSync(join(work, 'elsewhere'));
    const stillMissing = await runScript(lost);
    expect(stillMissing.code).toBe(1);
    expect(stillMissing.stderr).toContain('yet redis-server is still not on PATH');
  });

  it('stops with the command where there is no apt-get', async () => {
    const outcome = await runScript(bin(['tmux', 'chromium', 'redis-server']));
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('  apt-get update && apt-get install -y procps\n');
  });
});

// Runs before `npm test`: the suite needs four programs besides Node. As root with apt-get, the
// missing ones are installed from Debian's packages; anywhere else the run stops at once with the
// command that installs them. With all four on PATH it only looks at PATH.
//
//   ps            procps        the process table, read as users without /proc read it
//   tmux          tmux          the command line's terminal rendering, in a pseudo-terminal
//   chromium      chromium      the web examples, in a real browser (or CHROMIUM_PATH)
//   redis-server  redis-server  the fleet, against a private Redis on a unix socket
//
// SKIP_TEST_TOOLS=1 skips the look, for a run of specs that need none of them.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const TOOLS = [
  { names: ['ps'], pkg: 'procps' },
  { names: ['tmux'], pkg: 'tmux' },
  { names: ['chromium', 'chromium-browser'], pkg: 'chromium', env: 'CHROMIUM_PATH' },
  { names: ['redis-server'], pkg: 'redis-server' },
];

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

function missingTools() {
  return TOOLS.filter((tool) => !(tool.env !== undefined && (process.env[tool.env] ?? '') !== '') && !tool.names.some(onPath));
}

function stop(tools, why) {
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  const packages = tools.map((tool) => tool.pkg).join(' ');
  process.stderr.write(
    [
      '',
      `npm test: ${why}`,
      '',
      'Install them (Debian, Ubuntu) with:',
      '',
      `  ${sudo}apt-get update && ${sudo}apt-get install -y ${packages}`,
      '',
      'then run npm test again. To run only specs that need none of them:',
      '',
      '  SKIP_TEST_TOOLS=1 npm test -- spec/operators',
      '',
      '',
    ].join('\n'),
  );
  process.exit(1);
}

function aptGet(args) {
  const result = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return result.error === undefined && result.status === 0;
}

const names = (tools) => tools.map((tool) => tool.names[0]).join(', ');

if (process.env.SKIP_TEST_TOOLS !== '1') {
  const missing = missingTools();
  if (missing.length > 0) {
    const what = `the tests need ${names(missing)}, not found on PATH.`;
    if (process.platform !== 'linux' || process.getuid?.() !== 0 || !onPath('apt-get')) stop(missing, what);
    const packages = missing.map((tool) => tool.pkg);
    process.stdout.write(`npm test: installing ${packages.join(' ')} with apt-get, for ${names(missing)}\n`);
    if (!aptGet(['update', '-qq']) || !aptGet(['install', '-y', '-qq', ...packages])) stop(missing, `${what} apt-get could not install them.`);
    const still = missingTools();
    if (still.length > 0) stop(still, `apt-get installed ${packages.join(' ')}, yet ${names(still)} is still not on PATH.`);
  }
}

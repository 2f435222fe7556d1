import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// In a clone, the package's own bin is not linked into its node_modules/.bin (npx agent-rx finds
// nothing there): the `agent-rx` script runs the command from its sources instead.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the agent-rx command in a clone', () => {
  it('runs from its sources through `npm run -s agent-rx -- …`', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await run('npm', ['run', '-s', 'agent-rx', '--', '--version'], { cwd: ROOT });
    expect(stdout).toBe(`${version}\n`);
  });

  it('replays a recording offline through it, with the run command\u2019s exit code', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'agent-rx', '--', 'run', '--json', '--replay', 'spec/fixtures/pi/tool_call_then_text.jsonl'], { cwd: ROOT });
    const last = JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '{}') as { type?: string };
    expect(last.type).toBe('terminal.completed');
  });
});

import { afterEach, describe, expect, it } from '@jest/globals';
import { startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { builtCli } from '../helpers/built-cli.js';

// `agent-rx run --timeout / --idle-timeout` end to end: the limit runs out during a tool call, the
// run fails with reason timeout, the CLI exits 1, and the agent and its tool are gone.

const CLI_MAIN = await builtCli();
const FAKE_TOOL_AGENT = 'spec/fixtures/fake-agent-tool.mjs';

(process.platform === 'linux' ? describe : describe.skip)('agent-rx run with a time limit (Linux: /proc scan)', () => {
  const children: TaggedChild[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.cleanUp();
  });

  it.each([
    ['--timeout', 'run'],
    ['--idle-timeout', 'idle'],
  ] as const)('%s 1s during a tool call ends the run as failed (limit %s), exits 1, and leaves no process', async (flag, limit) => {
    const cli = startTaggedNode([CLI_MAIN, 'run', '--json', flag, '1s', '--executable', FAKE_TOOL_AGENT, 'run a tool'], 'AGENT_RX_CLI_TEST');
    children.push(cli);
    const exited = await cli.exitWithin(15_000);
    const survivors = await cli.tag.waitUntilNone(5_000);
    const last = JSON.parse(cli.stdout().trimEnd().split('\n').at(-1) ?? 'null') as unknown;
    expect({ exited, survivors, last }).toEqual({
      exited: { code: 1, signal: null },
      survivors: [],
      last: expect.objectContaining({ type: 'terminal.failed', reason: 'timeout', timeout: { limit, ms: 1000 } }) as unknown,
    });
  });
});

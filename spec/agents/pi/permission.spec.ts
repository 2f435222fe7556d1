import { describe, expect, it } from '@jest/globals';
import { PI_PERMISSION_TITLE, piPermissionAnswer, piPermissionQuestion } from '../../../lib/agents/pi/permission.js';
import agentRxPermission from '../../../lib/agents/pi/setup/permission-extension/index.js';

const question = (extra: Record<string, unknown> = {}) => ({
  type: 'extension_ui_request',
  id: 'u1',
  method: 'confirm',
  title: PI_PERMISSION_TITLE,
  message: JSON.stringify({ toolCallId: 'call_1', tool: 'bash', input: { command: 'touch x' } }),
  ...extra,
});

describe("pi's permission questions (extension_ui_request of agent-rx's extension)", () => {
  it('reads the call: its id, tool, kind from pi\'s vocabulary, summary and input; yes or no', () => {
    expect(piPermissionQuestion(question())).toEqual({
      id: 'u1',
      request: { toolCallId: 'call_1', tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options: ['allow', 'deny'] },
    });
    const read = piPermissionQuestion(question({ message: JSON.stringify({ toolCallId: 'c', tool: 'read', input: { path: 'a.txt' } }) }));
    expect(read?.request).toMatchObject({ kind: 'read', title: 'a.txt' });
    const other = piPermissionQuestion(question({ message: JSON.stringify({ tool: 'my_tool', input: { x: 1 } }) }));
    expect(other?.request).toEqual({ tool: 'my_tool', kind: 'other', title: 'my_tool', input: { x: 1 }, options: ['allow', 'deny'] });
  });

  it("leaves other dialogs alone: another title, another method, a message that is not the call", () => {
    expect(piPermissionQuestion(question({ title: 'Allow rm -rf?' }))).toBeUndefined();
    expect(piPermissionQuestion(question({ method: 'select' }))).toBeUndefined();
    expect(piPermissionQuestion(question({ message: 'not json' }))).toBeUndefined();
    expect(piPermissionQuestion(question({ id: 7 }))).toBeUndefined();
    expect(piPermissionQuestion({ type: 'agent_start' })).toBeUndefined();
  });

  it('answers yes for an allow, no for a deny', () => {
    expect(piPermissionAnswer('u1', 'allow')).toEqual({ type: 'extension_ui_response', id: 'u1', confirmed: true });
    expect(piPermissionAnswer('u1', 'allow-always')).toEqual({ type: 'extension_ui_response', id: 'u1', confirmed: true });
    expect(piPermissionAnswer('u1', 'deny')).toEqual({ type: 'extension_ui_response', id: 'u1', confirmed: false });
    expect(piPermissionAnswer('u1', 'deny-always')).toEqual({ type: 'extension_ui_response', id: 'u1', confirmed: false });
  });
});

describe("agent-rx's pi extension", () => {
  type Handler = (event: { toolCallId: string; toolName: string; input: unknown }, ctx: unknown) => Promise<unknown>;
  const load = (): Handler => {
    let handler: Handler | undefined;
    agentRxPermission({
      on: (event: string, registered: Handler) => {
        expect(event).toBe('tool_call');
        handler = registered;
      },
    } as never);
    if (handler === undefined) throw new Error('no tool_call handler');
    return handler;
  };

  it('asks with the title the protocol reads and the call as the message, with the turn\'s signal; a yes lets the call run', async () => {
    const asked: unknown[][] = [];
    const signal = new AbortController().signal;
    const ctx = {
      signal,
      ui: {
        confirm: (...args: unknown[]) => {
          asked.push(args);
          return Promise.resolve(true);
        },
      },
    };
    expect(await load()({ toolCallId: 'call_1', toolName: 'bash', input: { command: 'touch x' } }, ctx)).toBeUndefined();
    expect(asked).toEqual([[PI_PERMISSION_TITLE, JSON.stringify({ toolCallId: 'call_1', tool: 'bash', input: { command: 'touch x' } }), { signal }]]);
    // What pi writes is what the protocol reads.
    const [title, message] = asked[0] as [string, string];
    expect(piPermissionQuestion({ type: 'extension_ui_request', id: 'u', method: 'confirm', title, message })?.request.toolCallId).toBe('call_1');
  });

  it('a no (or a dialog closed by an abort) blocks the call, with a reason the model reads', async () => {
    const ctx = { ui: { confirm: () => Promise.resolve(false) } };
    expect(await load()({ toolCallId: 'call_1', toolName: 'bash', input: { command: 'touch x' } }, ctx)).toEqual({
      block: true,
      reason: 'Permission denied: this bash call was not allowed, and did not run.',
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import { claudeCodeSession, runClaudeCode } from '../../../lib/index.js';
import { claudeAgent } from '../../../lib/agents/claude/definition.js';
import { claudeSessionProtocol } from '../../../lib/agents/claude/session.js';
import type { ProtocolFact, ProtocolReaction } from '../../../lib/operators/session-protocol.js';
import { sessionInvocation } from '../../../lib/sessions/agent-session.js';
import { runInvocation } from '../../../lib/sources/run-agent.js';

// A `can_use_tool` request as Claude Code 2.1.197 writes it (`--permission-prompt-tool stdio`).
const CAN_USE_TOOL = {
  type: 'control_request',
  request_id: '5cbb4300-56b3-4ff9-ab32-59cb9ae11d7e',
  request: {
    subtype: 'can_use_tool',
    tool_name: 'Bash',
    display_name: 'Bash',
    input: { command: 'touch touched-by-agent.txt', description: 'Run touch touched-by-agent.txt' },
    description: 'Run touch touched-by-agent.txt',
    permission_suggestions: [
      { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch touched-by-agent.txt' }], behavior: 'allow', destination: 'localSettings' },
      { type: 'addDirectories', directories: ['/tmp/work'], destination: 'session' },
      { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
    ],
    blocked_path: '/tmp/work/touched-by-agent.txt',
    tool_use_id: 'toolu_touch_tool_1',
  },
};

const protocol = claudeSessionProtocol();

function permissionOf(reaction: ProtocolReaction): Extract<ProtocolFact, { type: 'permission' }> {
  const fact = reaction.facts?.[0];
  if (fact?.type !== 'permission') throw new Error(`not a permission request: ${JSON.stringify(reaction)}`);
  expect(reaction.facts).toHaveLength(1);
  expect(reaction.outputs ?? []).toEqual([]);
  return fact;
}

const response = (requestId: string, body: unknown) => ({ outputs: [{ type: 'write', line: { type: 'control_response', response: { subtype: 'success', request_id: requestId, response: body } } }] });

describe('Claude Code permission requests (can_use_tool)', () => {
  it('is a permission request: the tool call, the tool, its kind, its command, its input; allow-always where Claude Code suggests a rule', () => {
    const { request } = permissionOf(protocol.read(protocol.createState(), CAN_USE_TOOL));
    expect(request).toEqual({
      toolCallId: 'toolu_touch_tool_1',
      tool: 'Bash',
      kind: 'execute',
      title: 'touch touched-by-agent.txt',
      input: CAN_USE_TOOL.request.input,
      options: ['allow', 'allow-always', 'deny'],
    });
  });

  it('is asked between turns too (the session denies it)', () => {
    const state = protocol.createState();
    expect(state.turn).toBeNull();
    expect(permissionOf(protocol.read(state, CAN_USE_TOOL)).request.tool).toBe('Bash');
  });

  it('answers allow with the call\'s own input, deny with a message; allow-always adds the suggested rules for this session only', () => {
    const fact = permissionOf(protocol.read(protocol.createState(), CAN_USE_TOOL));
    const answer = (decision: Parameters<typeof fact.answer>[0]) => fact.answer(decision);
    const id = CAN_USE_TOOL.request_id;
    const input = CAN_USE_TOOL.request.input;
    expect(answer('allow')).toEqual(response(id, { behavior: 'allow', updatedInput: input }));
    expect(answer('deny')).toEqual(response(id, { behavior: 'deny', message: 'denied by the host' }));
    expect(answer('deny-always')).toEqual(response(id, { behavior: 'deny', message: 'denied by the host' }));
    expect(answer('allow-always')).toEqual(
      response(id, {
        behavior: 'allow',
        updatedInput: input,
        updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch touched-by-agent.txt' }], behavior: 'allow', destination: 'session' }],
      }),
    );
  });

  it('offers allow and deny alone without a rule to add; a tool outside the vocabulary is `other`, titled by its description', () => {
    const { request } = permissionOf(
      protocol.read(protocol.createState(), {
        type: 'control_request',
        request_id: 'r2',
        request: { subtype: 'can_use_tool', tool_name: 'mcp__notes__save', input: { text: 'x' }, description: 'Save a note', permission_suggestions: [{ type: 'setMode', mode: 'acceptEdits', destination: 'session' }] },
      }),
    );
    expect(request).toEqual({ tool: 'mcp__notes__save', kind: 'other', title: 'Save a note', input: { text: 'x' }, options: ['allow', 'deny'] });
  });

  it('answers any other control request of the CLI with an error at once, so that it never waits', () => {
    expect(protocol.read(protocol.createState(), { type: 'control_request', request_id: 'h1', request: { subtype: 'hook_callback', callback_id: 'cb' } })).toEqual({
      outputs: [{ type: 'write', line: { type: 'control_response', response: { subtype: 'error', request_id: 'h1', error: "agent-rx does not answer Claude Code's hook_callback control requests" } } }],
    });
  });
});

describe('claudeCodeSession with permission', () => {
  const BASE = ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages'];

  it('starts Claude Code with --permission-prompt-tool stdio and gives the session the policy and its deadline', () => {
    const permission = () => 'allow' as const;
    const invocation = sessionInvocation(claudeAgent, { permission, permissionTimeoutMs: 5000, allowedTools: ['Read'] });
    expect(invocation.args).toEqual([...BASE, '--permission-prompt-tool', 'stdio', '--include-partial-messages', '--allowedTools=Read']);
    expect(invocation.permission).toBe(permission);
    expect(invocation.permissionTimeoutMs).toBe(5000);
  });

  it('without permission: no prompt tool, Claude Code\'s own rules decide', () => {
    const invocation = sessionInvocation(claudeAgent, { allowedTools: ['Read'] });
    expect(invocation.args).toEqual([...BASE, '--include-partial-messages', '--allowedTools=Read']);
    expect(invocation.permission).toBeUndefined();
  });

  it("refuses a policy that would never be asked (bypassPermissions, dontAsk); a run with permission is a one-prompt session, without 'ask'", () => {
    for (const permissionMode of ['bypassPermissions', 'dontAsk']) {
      expect(() => claudeCodeSession({ permission: 'ask', permissionMode })).toThrow(new TypeError(`agent-rx: permission cannot go with permissionMode "${permissionMode}": Claude Code then never asks`));
    }
    expect(() => claudeCodeSession({ permission: 'ask', permissionMode: 'acceptEdits' })).not.toThrow();
    expect(() => claudeCodeSession({ permission: 'sometimes' as never })).toThrow(TypeError);
    expect(() => runClaudeCode({ prompt: 'p', permission: 'ask' } as never)).toThrow(TypeError);
    expect(runInvocation(claudeAgent, { prompt: 'p', permission: 'allow-all' })).toEqual({ asSession: { options: { permission: 'allow-all' }, prompt: { content: [{ type: 'text', text: 'p' }] } } });
  });
});

import { describe, expect, it } from '@jest/globals';
import { codexAppServerProtocol, type AppServerSessionState } from '../../../lib/dialects.js';
import { codexAgent } from '../../../lib/agents/codex/definition.js';
import { codexApproval } from '../../../lib/agents/codex/app-server/approvals.js';
import { codexSessionInvocation } from '../../../lib/agents/codex/args.js';
import type { ProtocolFact, ProtocolReaction, SessionProtocol } from '../../../lib/operators/session-protocol.js';
import { runInvocation } from '../../../lib/sources/run-agent.js';

/** A command approval request as Codex 0.171's app-server sends it under `untrusted`. */
const COMMAND_PARAMS = {
  kind: 'command',
  threadId: 't1',
  turnId: 'u1',
  itemId: 'call_touch_tool_1',
  startedAtMs: 1,
  environmentId: 'local',
  command: "/bin/bash -lc 'touch touched-by-agent.txt'",
  cwd: '/work',
  commandActions: [{ type: 'unknown', command: 'touch touched-by-agent.txt' }],
  proposedExecpolicyAmendment: ['touch', 'touched-by-agent.txt'],
  availableDecisions: ['accept', { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['touch', 'touched-by-agent.txt'] } }, 'cancel'],
};

describe('codexApproval: an approval request of codex app-server as the permission channel asks it', () => {
  it('a command: tool command_execution, the item id, the command, the decisions Codex offers', () => {
    const approval = codexApproval('item/commandExecution/requestApproval', COMMAND_PARAMS, new Map());
    expect(approval?.request).toEqual({
      toolCallId: 'call_touch_tool_1',
      tool: 'command_execution',
      kind: 'execute',
      title: 'touch touched-by-agent.txt',
      input: { command: 'touch touched-by-agent.txt', cwd: '/work' },
      options: ['allow', 'deny'],
    });
    expect(approval?.result('allow')).toEqual({ decision: 'accept' });
    expect(approval?.result('deny')).toEqual({ decision: 'decline' });
    expect(approval?.result('deny-always')).toEqual({ decision: 'decline' });
    // Not offered for the session: once.
    expect(approval?.result('allow-always')).toEqual({ decision: 'accept' });
  });

  it('a command whose request offers acceptForSession, or says nothing of its decisions: allow-always is acceptForSession', () => {
    const offered = codexApproval('item/commandExecution/requestApproval', { ...COMMAND_PARAMS, availableDecisions: ['accept', 'acceptForSession', 'decline', 'cancel'] }, new Map());
    expect(offered?.request.options).toEqual(['allow', 'allow-always', 'deny']);
    expect(offered?.result('allow-always')).toEqual({ decision: 'acceptForSession' });
    const { availableDecisions: _, ...silent } = COMMAND_PARAMS;
    const unsaid = codexApproval('item/commandExecution/requestApproval', { ...silent, reason: 'needs to write' }, new Map());
    expect(unsaid?.request.options).toEqual(['allow', 'allow-always', 'deny']);
    expect(unsaid?.request.input).toEqual({ command: 'touch touched-by-agent.txt', cwd: '/work', reason: 'needs to write' });
    expect(unsaid?.result('allow-always')).toEqual({ decision: 'acceptForSession' });
  });

  it('a file change: tool file_change, the changes of the item Codex started, the paths as title', () => {
    const changes = [
      { path: '/work/a.txt', kind: { type: 'add' }, diff: '+a' },
      { path: '/work/b.txt', kind: { type: 'update', move_path: null }, diff: '-b' },
    ];
    const approval = codexApproval('item/fileChange/requestApproval', { threadId: 't1', turnId: 'u1', itemId: 'call_patch', startedAtMs: 1, reason: null, grantRoot: null }, new Map([['call_patch', changes]]));
    expect(approval?.request).toEqual({
      toolCallId: 'call_patch',
      tool: 'file_change',
      kind: 'edit',
      title: '/work/a.txt, /work/b.txt',
      input: {
        changes: [
          { path: '/work/a.txt', kind: 'add' },
          { path: '/work/b.txt', kind: 'update' },
        ],
      },
      options: ['allow', 'allow-always', 'deny'],
    });
    expect(['allow', 'allow-always', 'deny', 'deny-always'].map((decision) => approval?.result(decision as 'allow'))).toEqual([
      { decision: 'accept' },
      { decision: 'acceptForSession' },
      { decision: 'decline' },
      { decision: 'decline' },
    ]);
    // An item it did not see: what the request says.
    expect(codexApproval('item/fileChange/requestApproval', { itemId: 'x', grantRoot: '/work' }, new Map())?.request).toMatchObject({ title: '/work', input: { changes: [], grantRoot: '/work' } });
  });

  it('more sandbox permissions: granted as asked for the turn or the session, nothing for a deny', () => {
    const permissions = { network: { enabled: true }, fileSystem: null };
    const approval = codexApproval('item/permissions/requestApproval', { threadId: 't1', turnId: 'u1', itemId: 'call_perm', environmentId: null, startedAtMs: 1, cwd: '/work', reason: null, permissions }, new Map());
    expect(approval?.request).toEqual({
      toolCallId: 'call_perm',
      tool: 'request_permissions',
      kind: 'other',
      title: 'network access',
      input: { permissions, cwd: '/work' },
      options: ['allow', 'allow-always', 'deny'],
    });
    expect(approval?.result('allow')).toEqual({ permissions: { network: { enabled: true } }, scope: 'turn' });
    expect(approval?.result('allow-always')).toEqual({ permissions: { network: { enabled: true } }, scope: 'session' });
    expect(approval?.result('deny')).toEqual({ permissions: {}, scope: 'turn' });
  });

  it('the legacy execCommandApproval and applyPatchApproval: the same tools, ReviewDecisions', () => {
    const command = codexApproval('execCommandApproval', { conversationId: 't1', callId: 'c1', approvalId: null, command: ['bash', '-lc', 'touch x'], cwd: '/work', reason: null, parsedCmd: [] }, new Map());
    expect(command?.request).toEqual({ toolCallId: 'c1', tool: 'command_execution', kind: 'execute', title: 'touch x', input: { command: 'touch x', cwd: '/work' }, options: ['allow', 'allow-always', 'deny'] });
    expect(command?.result('allow')).toEqual({ decision: 'approved' });
    expect(command?.result('allow-always')).toEqual({ decision: 'approved_for_session' });
    expect(command?.result('deny')).toEqual({ decision: { denied: { rejection: 'denied by the host' } } });
    const patch = codexApproval('applyPatchApproval', { conversationId: 't1', callId: 'c2', fileChanges: { '/work/a.txt': { type: 'add', content: 'a' } }, reason: null, grantRoot: null }, new Map());
    expect(patch?.request).toMatchObject({ toolCallId: 'c2', tool: 'file_change', kind: 'edit', title: '/work/a.txt', input: { changes: [{ path: '/work/a.txt', kind: 'add' }] } });
  });

  it('other requests are not approvals', () => {
    for (const method of ['item/tool/requestUserInput', 'mcpServer/elicitation/request', 'item/tool/call', 'account/chatgptAuthTokens/refresh']) {
      expect(codexApproval(method, {}, new Map())).toBeUndefined();
    }
  });
});

/** A protocol started on a thread, one turn running. */
function running(): { readonly protocol: SessionProtocol<AppServerSessionState>; readonly state: AppServerSessionState } {
  const protocol = codexAppServerProtocol({ thread: { start: { cwd: '/work' } } });
  const state = protocol.createState();
  protocol.read(state, { type: 'response', id: 'agent-rx-thread', result: { thread: { id: 't1' } } });
  protocol.act(state, { type: 'start', input: { text: 'go' } } as never);
  return { protocol, state };
}

function permissionOf(reaction: ProtocolReaction): Extract<ProtocolFact, { type: 'permission' }> {
  const fact = reaction.facts?.find((candidate) => candidate.type === 'permission');
  if (fact?.type !== 'permission') throw new Error(`no permission fact in ${JSON.stringify(reaction)}`);
  return fact;
}

describe('codexAppServerProtocol: approval requests go through the permission channel', () => {
  it('a command approval is a permission fact; its answer is the JSON-RPC response with the decision', () => {
    const { protocol, state } = running();
    const reaction = protocol.read(state, { type: 'server-request', id: 0, method: 'item/commandExecution/requestApproval', params: COMMAND_PARAMS });
    expect(reaction.outputs ?? []).toEqual([]);
    const fact = permissionOf(reaction);
    expect(fact.request).toMatchObject({ tool: 'command_execution', toolCallId: 'call_touch_tool_1' });
    expect(fact.answer('allow')).toEqual({ outputs: [{ type: 'write', line: { id: 0, result: { decision: 'accept' } } }] });
    expect(fact.answer('deny')).toEqual({ outputs: [{ type: 'write', line: { id: 0, result: { decision: 'decline' } } }] });
  });

  it('a file change approval says the changes of the item started before it', () => {
    const { protocol, state } = running();
    const item = { type: 'fileChange', id: 'call_patch', changes: [{ path: '/work/a.txt', kind: { type: 'add' }, diff: '+a' }], status: 'inProgress' };
    protocol.read(state, { type: 'item/started', params: { item, threadId: 't1', turnId: 'u1' } });
    const fact = permissionOf(protocol.read(state, { type: 'server-request', id: 'r1', method: 'item/fileChange/requestApproval', params: { itemId: 'call_patch', threadId: 't1', turnId: 'u1' } }));
    expect(fact.request).toMatchObject({ tool: 'file_change', kind: 'edit', toolCallId: 'call_patch', title: '/work/a.txt', input: { changes: [{ path: '/work/a.txt', kind: 'add' }] } });
    expect(fact.answer('allow-always')).toEqual({ outputs: [{ type: 'write', line: { id: 'r1', result: { decision: 'acceptForSession' } } }] });
    protocol.read(state, { type: 'item/completed', params: { item: { ...item, status: 'completed' }, threadId: 't1', turnId: 'u1' } });
    expect(state.fileChanges.size).toBe(0);
  });

  it('a question to the user is still declined, with a warning', () => {
    const { protocol, state } = running();
    const reaction = protocol.read(state, { type: 'server-request', id: 5, method: 'item/tool/requestUserInput', params: { questions: [] } });
    expect(reaction.outputs).toEqual([{ type: 'write', line: { id: 5, result: { answers: {} } } }]);
    expect(reaction.facts).toEqual([{ type: 'content', message: { type: 'agent.warning', message: expect.stringMatching(/^declined Codex's item\/tool\/requestUserInput request/) } }]);
  });

  it('a request of a method agent-rx does not know is answered with an error, and left to the unknown-type warning (once per session)', () => {
    const { protocol, state } = running();
    const reaction = protocol.read(state, { type: 'server-request', id: 6, method: 'item/hologram/request', params: {} });
    expect(reaction.outputs).toEqual([{ type: 'write', line: { id: 6, error: { code: -32601, message: 'agent-rx does not answer item/hologram/request' } } }]);
    expect(reaction.facts ?? []).toEqual([]);
  });
});

describe("codexSession's invocation: permission makes Codex ask", () => {
  const threadOf = (invocation: ReturnType<typeof codexSessionInvocation>): unknown => {
    const protocol = invocation.protocol;
    const outputs = protocol.open(protocol.createState(), { write: () => undefined, react: () => undefined });
    return outputs.map((output) => (output.type === 'write' ? output.line : undefined)).find((line) => (line as { id?: string } | undefined)?.id === 'agent-rx-thread');
  };

  it('with permission and no approvalPolicy, the thread is untrusted; permission and its deadline go to the session', () => {
    const permission = (): 'allow' => 'allow';
    const invocation = codexSessionInvocation({ cwd: '/work', permission, permissionTimeoutMs: 1000 });
    expect(invocation.permission).toBe(permission);
    expect(invocation.permissionTimeoutMs).toBe(1000);
    expect(threadOf(invocation)).toMatchObject({ method: 'thread/start', params: { cwd: '/work', approvalPolicy: 'untrusted' } });
    expect(invocation.args).toEqual(['app-server']);
  });

  it("the caller's approvalPolicy and sandbox win; without permission nothing is added", () => {
    expect(threadOf(codexSessionInvocation({ cwd: '/work', permission: 'ask', approvalPolicy: 'on-request', sandbox: 'read-only' }))).toMatchObject({ params: { approvalPolicy: 'on-request', sandbox: 'read-only' } });
    const plain = codexSessionInvocation({ cwd: '/work' });
    expect((threadOf(plain) as { params: object }).params).toEqual({ cwd: '/work', ephemeral: false });
    expect('permission' in plain).toBe(false);
    expect('permissionTimeoutMs' in plain).toBe(false);
  });

  it('a resumed thread gets the same settings in thread/resume', () => {
    expect(threadOf(codexSessionInvocation({ session: { resume: 'thread-1' }, permission: 'ask', model: 'gpt-5.5', sandbox: 'workspace-write' }))).toEqual({
      id: 'agent-rx-thread',
      method: 'thread/resume',
      params: { model: 'gpt-5.5', sandbox: 'workspace-write', approvalPolicy: 'untrusted', threadId: 'thread-1', excludeTurns: true },
    });
    expect(threadOf(codexSessionInvocation({ session: { resume: 'thread-1' } }))).toEqual({ id: 'agent-rx-thread', method: 'thread/resume', params: { threadId: 'thread-1', excludeTurns: true } });
  });

  it("the session schema takes permission; a run with it goes over app-server (exec cannot ask), without 'ask'", () => {
    expect(codexAgent.options.session.safeParse({ permission: 'ask', permissionTimeoutMs: 5000 }).success).toBe(true);
    expect(codexAgent.options.session.safeParse({ permission: 'maybe' }).success).toBe(false);
    expect(runInvocation(codexAgent, { prompt: 'p', permission: 'deny-all', permissionTimeoutMs: 900 })).toEqual({
      asSession: { options: { session: 'new', permission: 'deny-all', permissionTimeoutMs: 900 }, prompt: { content: [{ type: 'text', text: 'p' }] } },
    });
    expect(() => runInvocation(codexAgent, { prompt: 'p', transport: 'exec', permission: 'deny-all' })).toThrow("agent-rx: a Codex run with permission goes over transport 'app-server' (exec cannot ask)");
    expect(() => runInvocation(codexAgent, { prompt: 'p', permission: 'ask' } as never)).toThrow(TypeError);
  });
});

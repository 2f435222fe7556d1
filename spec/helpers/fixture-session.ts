import type { OperatorFunction } from 'rxjs';
import { processSession, type PermissionPolicy, type Dialect, type SessionCommand, type SessionMessage, type SessionProtocol, type StopReport } from '../../lib/index.js';
import type { AgentEvent } from '../../lib/operators/items.js';
import { fixture } from './processes.js';
import type { ProcessTag } from './tagged-processes.js';

// A session on the tiny fixture agent (spec/fixtures/session-agent.mjs), with a dialect and a
// protocol of the specs' own: what the session shell, and what is built on sessions, are tested on.

export const fixtureDialect: Dialect<null> = {
  name: 'fixture',
  schemas: {},
  createTextReader: () => (event) => (event.type === 'say' ? { channel: 'assistant', key: 'say', delta: `${String(event['text'])}|` } : null),
  turnEnd: (event) => (event.type === 'done' ? 'final' : null),
  createState: () => null,
  map: () => [],
  conclude: () => ({ kind: 'inconclusive', message: 'no ending' }),
  lastError: () => undefined,
  sessionId: () => undefined,
};

export const fixtureProtocol: SessionProtocol<{ ready: boolean }> = {
  name: 'fixture',
  createState: () => ({ ready: false }),
  open: () => [],
  act: (_state, ask) => {
    switch (ask.type) {
      case 'start':
        return { outputs: [{ type: 'write', line: { op: 'start', text: ask.input.text } }] };
      case 'steer':
        return { outputs: [{ type: 'write', line: { op: 'steer', text: ask.input.text } }] };
      case 'abort':
        return { outputs: [{ type: 'write', line: { op: 'abort' } }, { type: 'killTools' }] };
      case 'end':
        return { outputs: [{ type: 'endInput' }] };
    }
  },
  read: (state, event: AgentEvent) => {
    if (event.type === 'ready') {
      state.ready = true;
      return { facts: [{ type: 'content', message: { type: 'session.started', sessionId: `fixture-${String(event['pid'])}` } }] };
    }
    if (event.type === 'ask') {
      const id = event['id'];
      const command = String(event['command']);
      return {
        facts: [
          {
            type: 'permission',
            request: { toolCallId: `call-${String(id)}`, tool: 'bash', kind: 'execute', title: command, input: { command }, options: ['allow', 'deny'] },
            answer: (decision) => ({ outputs: [{ type: 'write', line: { op: 'answer', id, allow: decision.startsWith('allow') } }] }),
          },
        ],
      };
    }
    if (event.type !== 'done') return {};
    return {
      facts: [{ type: 'turnEnded', outcome: event['aborted'] === true ? { kind: 'failed', reason: 'aborted', message: 'aborted' } : { kind: 'completed', stopReason: 'end_turn' } }],
    };
  },
};

export interface FixtureSessionOptions {
  /** Given to the agent's processes, so that a spec finds them. */
  readonly tag: ProcessTag;
  readonly idleTimeoutMs?: number;
  readonly gracePeriodMs?: number;
  readonly env?: Record<string, string>;
  readonly command?: string;
  readonly protocol?: SessionProtocol<{ ready: boolean }>;
  readonly dialect?: Dialect<null>;
  readonly permission?: PermissionPolicy;
  readonly permissionTimeoutMs?: number;
}

/** A session on the fixture agent: `echo:X` says X, `emit:Y` prints an event of type Y, `hang` waits, `crash` exits 3, `tool` starts `sleep 30`. */
export function fixtureSession(onStopped: (report: StopReport) => void, options: FixtureSessionOptions): OperatorFunction<SessionCommand, SessionMessage> {
  return processSession({
    command: options.command ?? process.execPath,
    args: [fixture('session-agent.mjs')],
    processOptions: {
      env: { ...options.tag.env, ...options.env },
      onStopped,
      gracePeriodMs: options.gracePeriodMs ?? 2000,
      ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    },
    dialect: options.dialect ?? fixtureDialect,
    protocol: options.protocol ?? fixtureProtocol,
    ...(options.permission === undefined ? {} : { permission: options.permission }),
    ...(options.permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs: options.permissionTimeoutMs }),
  });
}

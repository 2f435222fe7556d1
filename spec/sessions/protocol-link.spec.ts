import { describe, expect, it, jest } from '@jest/globals';
import type { AgentEvent } from '../../lib/operators/items.js';
import type { ProtocolFact, ProtocolReaction, SessionAsk, SessionProtocol } from '../../lib/operators/session-protocol.js';
import { ProtocolLink, type ProtocolLinkIo } from '../../lib/sessions/protocol-link.js';
import { exit } from '../helpers/items.js';

const turnEnded: ProtocolFact = { type: 'turnEnded', outcome: { kind: 'completed', stopReason: 'end_turn' } };
const start: SessionAsk = { type: 'start', turn: 1, input: { kind: 'prompt', text: 'hi' } };

/** A protocol whose reactions the spec gives, and which logs what it was asked and read. */
function protocolOf(reactions: { act?: (ask: SessionAsk) => ProtocolReaction; read?: (event: AgentEvent) => ProtocolReaction } = {}, extra: Partial<SessionProtocol<string[]>> = {}) {
  const seen: string[] = [];
  const protocol: SessionProtocol<string[]> = {
    name: 'toy',
    createState: () => seen,
    open: () => [{ type: 'write', line: { op: 'hello' } }],
    act: (_state, ask) => {
      seen.push(`act ${ask.type}`);
      return reactions.act?.(ask) ?? {};
    },
    read: (_state, event) => {
      seen.push(`read ${JSON.stringify(event)}`);
      return reactions.read?.(event) ?? {};
    },
    ...extra,
  };
  return { protocol, seen };
}

/** An io that logs, in one list, the lines written, the input's end, the facts and the kills asked for. */
function ioOf(options: { kill?: ProtocolLinkIo['killTools'] } = {}) {
  const log: string[] = [];
  const state = { live: true, now: '1000' };
  const errors: unknown[] = [];
  const io: ProtocolLinkIo = {
    stdin: {
      write: (text) => log.push(`write ${text}`),
      end: () => log.push('end'),
    },
    killTools:
      options.kill ??
      ((bornSince) => {
        log.push(`kill since ${bornSince}`);
        return Promise.resolve({ killed: [7], confirmed: true });
      }),
    now: () => state.now,
    fact: (fact) => log.push(`fact ${fact.type}`),
    live: () => state.live,
    guard: (work) => {
      try {
        work();
      } catch (error) {
        errors.push(error);
      }
    },
  };
  return { io, log, state, errors };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ProtocolLink', () => {
  it("writes what the protocol sends on open, as JSON lines", () => {
    const { io, log } = ioOf();
    new ProtocolLink(protocolOf().protocol, io).open();
    expect(log).toEqual(['write {"op":"hello"}\n']);
  });

  it("carries out an ask's outputs in order, then tells the machine its facts", () => {
    const { io, log } = ioOf();
    const { protocol, seen } = protocolOf({ act: () => ({ facts: [turnEnded], outputs: [{ type: 'write', line: { op: 'start' } }, { type: 'endInput' }] }) });
    new ProtocolLink(protocol, io).ask(start);
    expect(seen).toEqual(['act start']);
    expect(log).toEqual(['write {"op":"start"}\n', 'end', 'fact turnEnded']);
  });

  it('kills the tools started since the running turn began, and reads the result back to the protocol', async () => {
    const { io, log, state } = ioOf();
    const { protocol, seen } = protocolOf({
      act: (ask) => (ask.type === 'abort' ? { outputs: [{ type: 'killTools' }] } : {}),
      read: () => ({ facts: [turnEnded] }),
    });
    const link = new ProtocolLink(protocol, io);
    state.now = '4242';
    link.ask(start);
    state.now = '9999';
    link.ask({ type: 'abort', turn: 1 });
    expect(log).toEqual(['kill since 4242']);
    await settle();
    expect(seen.at(-1)).toBe('read {"type":"agent-rx.tools-killed","killed":[7],"confirmed":true}');
    expect(log).toEqual(['kill since 4242', 'fact turnEnded']);
  });

  it('reads no kill result once the session is over, and asks no kill without a process', async () => {
    const over = ioOf();
    const { protocol, seen } = protocolOf({ act: () => ({ outputs: [{ type: 'killTools' }] }) });
    new ProtocolLink(protocol, over.io).ask({ type: 'abort', turn: 1 });
    over.state.live = false;
    await settle();
    expect(seen).toEqual(['act abort']);
    const none = ioOf({ kill: () => null });
    new ProtocolLink(protocolOf({ act: () => ({ outputs: [{ type: 'killTools' }] }) }).protocol, none.io).ask({ type: 'abort', turn: 1 });
    await settle();
    expect(none.log).toEqual([]);
  });

  it("routes what the protocol throws on reading a kill's result to the guard", async () => {
    const { io, errors } = ioOf();
    const { protocol } = protocolOf({
      act: () => ({ outputs: [{ type: 'killTools' }] }),
      read: () => {
        throw new Error('protocol bug');
      },
    });
    new ProtocolLink(protocol, io).ask({ type: 'abort', turn: 1 });
    await settle();
    expect(errors).toEqual([new Error('protocol bug')]);
  });

  it('lets the protocol write and react through its channel while the session is on, and not after', () => {
    const { io, log, state, errors } = ioOf();
    const link = new ProtocolLink(protocolOf().protocol, io);
    link.channel.write({ op: 'late' });
    link.channel.react({ facts: [turnEnded] });
    link.channel.react({
      get facts(): readonly ProtocolFact[] {
        throw new Error('reaction bug');
      },
    });
    state.live = false;
    link.channel.write({ op: 'too late' });
    link.channel.react({ facts: [turnEnded] });
    expect(log).toEqual(['write {"op":"late"}\n', 'fact turnEnded']);
    expect(errors).toEqual([new Error('reaction bug')]);
  });

  it('tells a clean exit: code 0 by default, or as the protocol says; never a stop, a signal or a failed start', () => {
    const { io } = ioOf();
    const plain = new ProtocolLink(protocolOf().protocol, io);
    expect(plain.cleanExit(exit())).toBe(true);
    expect(plain.cleanExit(exit({ exitCode: 1 }))).toBe(false);
    expect(plain.cleanExit(exit({ exitCode: null, signal: 'SIGTERM' }))).toBe(false);
    expect(plain.cleanExit(exit({ stoppedBy: { kind: 'host' } }))).toBe(false);
    expect(plain.cleanExit(exit({ exitCode: null, startError: { stage: 'spawn', code: 'ENOENT', message: 'no' } }))).toBe(false);
    const lenient = new ProtocolLink(protocolOf({}, { cleanExit: (_state, ended) => ended.exitCode === 130 }).protocol, io);
    expect(lenient.cleanExit(exit({ exitCode: 130 }))).toBe(true);
    expect(lenient.cleanExit(exit({ exitCode: 130, stoppedBy: { kind: 'timeout', limit: 'end', ms: 5 } }))).toBe(false);
  });

  it('gives the protocol its own arguments and says whether it announces its session; none and no by default', () => {
    const { io } = ioOf();
    const plain = new ProtocolLink(protocolOf().protocol, io);
    expect(plain.args()).toEqual([]);
    expect(plain.announcesSession()).toBe(false);
    const own = new ProtocolLink(protocolOf({}, { args: () => ['--session', 'x'], announcesSession: () => true }).protocol, io);
    expect(own.args()).toEqual(['--session', 'x']);
    expect(own.announcesSession()).toBe(true);
  });

  it('closes the protocol once, and warns instead of throwing when its close throws', () => {
    const { io } = ioOf();
    const close = jest.fn(() => {
      throw new Error('cannot clean up');
    });
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const link = new ProtocolLink(protocolOf({}, { close }).protocol, io);
      link.close();
      link.close();
      expect(close).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith("agent-rx: the toy protocol's close threw: cannot clean up");
    } finally {
      warn.mockRestore();
    }
  });

  it('makes a state of its own for each link', () => {
    let made = 0;
    const protocol: SessionProtocol<number> = { name: 'toy', createState: () => (made += 1), open: () => [], act: () => ({}), read: () => ({}) };
    new ProtocolLink(protocol, ioOf().io);
    new ProtocolLink(protocol, ioOf().io);
    expect(made).toBe(2);
  });
});

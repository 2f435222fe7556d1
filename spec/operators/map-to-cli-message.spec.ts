import { describe, expect, it } from '@jest/globals';
import { from, Subject } from 'rxjs';
import { knownTypes, mapToCliMessage, type Conclusion, type MessageMapping, type PipelineItem, type StartFailure, type TerminalFailed } from '../../lib/index.js';
import { ev, exit, runExit, scheduler, terminalFailed, text } from '../helpers/items.js';

// A toy dialect: `say` → assistant text; `done` concludes with success; `oops` → an agent error.
interface ToyState {
  outcome: Conclusion;
  lastError: string | undefined;
  said: number;
}
const toy: MessageMapping<ToyState> = {
  name: 'toy',
  installHint: 'Install toy.',
  createState: () => ({ outcome: { kind: 'inconclusive', message: 'toy said nothing conclusive' }, lastError: undefined, said: 0 }),
  map: (state, event) => {
    if (event.type === 'say') {
      state.said += 1;
      return [{ type: 'tool.call', toolCallId: String(state.said), name: 'say', input: null }];
    }
    if (event.type === 'done') state.outcome = { kind: 'completed', stopReason: 'end_turn' };
    if (event.type === 'oops') {
      state.lastError = 'model on fire';
      state.outcome = { kind: 'failed', reason: 'agent-error', message: 'toy reported: model on fire', ended: event['ended'] === true };
    }
    return [];
  },
  conclude: (state) => state.outcome,
  lastError: (state) => state.lastError,
  sessionId: () => 'S1',
};

const failed = (fields: Partial<TerminalFailed>): TerminalFailed => terminalFailed({ sessionId: 'S1', ...fields });

describe('mapToCliMessage', () => {
  it('maps events with the dialect, text items to assistant and thought, and the exit to one terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-s-a-t-d-x|', { s: ev('say'), a: text('Hi'), t: text('hmm', 'thought'), d: ev('done'), x: runExit() });
      expectObservable(source.pipe(mapToCliMessage(toy))).toBe('-s-a-t---(x|)', {
        s: { type: 'tool.call', toolCallId: '1', name: 'say', input: null },
        a: { type: 'assistant', text: 'Hi' },
        t: { type: 'assistant.thought', text: 'hmm' },
        x: { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' },
      });
    });
  });

  it("gives stderr lines to the dialect's mapStderrLine, and ignores them without one", () => {
    const withStderr: MessageMapping<ToyState> = {
      ...toy,
      mapStderrLine: (_state, line) => (line.startsWith('Attempt') ? [{ type: 'agent.retry', reason: line }] : []),
    };
    scheduler().run(({ cold, expectObservable }) => {
      const items = { r: { kind: 'stderr-line', text: 'Attempt 1 failed' }, n: { kind: 'stderr-line', text: 'noise' }, d: ev('done'), x: runExit() } as const;
      expectObservable(cold<PipelineItem>('-r-n-d-x|', items).pipe(mapToCliMessage(withStderr))).toBe('-r-----(x|)', {
        r: { type: 'agent.retry', reason: 'Attempt 1 failed' },
        x: { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' },
      });
      expectObservable(cold<PipelineItem>('-r-n-d-x|', items).pipe(mapToCliMessage(toy))).toBe('-------(x|)', {
        x: { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' },
      });
    });
  });

  it('reports a spawn failure first, with the install hint for a program looked up on PATH', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const startError = { stage: 'spawn', code: 'ENOENT', message: 'spawn toy ENOENT', problem: { kind: 'not-on-path', program: 'toy' } } as const;
      const source = cold<PipelineItem>('-x|', { x: runExit({ exitCode: null, pid: null, startError }) });
      expectObservable(source.pipe(mapToCliMessage(toy))).toBe('-(x|)', {
        x: failed({ reason: 'spawn', exitCode: null, message: 'toy could not be started: spawn toy ENOENT. Install toy.' }),
      });
    });
  });

  it.each<[string, StartFailure, string]>([
    [
      'a path that does not exist',
      { stage: 'spawn', code: 'ENOENT', message: 'spawn /opt/toy ENOENT', problem: { kind: 'missing', path: '/opt/toy' } },
      'toy could not be started: /opt/toy does not exist (ENOENT).',
    ],
    [
      'a file that is not executable',
      { stage: 'spawn', code: 'EACCES', message: 'spawn /opt/toy.mjs EACCES', problem: { kind: 'not-executable', path: '/opt/toy.mjs' } },
      'toy could not be started: /opt/toy.mjs is not executable (EACCES); `chmod +x /opt/toy.mjs` makes it so.',
    ],
    [
      'a file that is not executable, its path quoted for the shell',
      { stage: 'spawn', code: 'EACCES', message: "spawn /opt/it's toy EACCES", problem: { kind: 'not-executable', path: "/opt/it's toy" } },
      "toy could not be started: /opt/it's toy is not executable (EACCES); `chmod +x '/opt/it'\\''s toy'` makes it so.",
    ],
    ['a directory', { stage: 'spawn', code: 'EACCES', message: 'spawn /opt EACCES', problem: { kind: 'directory', path: '/opt' } }, 'toy could not be started: /opt is a directory, not a program (EACCES).'],
    [
      'a working directory that does not exist',
      { stage: 'spawn', code: 'ENOENT', message: 'spawn toy ENOENT', problem: { kind: 'missing-cwd', cwd: '/nowhere' } },
      'toy could not be started: its working directory /nowhere does not exist (ENOENT).',
    ],
    [
      'a working directory that is a file',
      { stage: 'spawn', code: 'ENOTDIR', message: 'spawn toy ENOTDIR', problem: { kind: 'cwd-not-directory', cwd: '/etc/hosts' } },
      'toy could not be started: its working directory /etc/hosts is not a directory (ENOTDIR).',
    ],
    ['nothing the file system shows (a missing #! interpreter)', { stage: 'spawn', code: 'ENOENT', message: 'spawn /opt/toy.mjs ENOENT' }, 'toy could not be started: spawn /opt/toy.mjs ENOENT.'],
  ])('reports a spawn failure for %s as that, without the install hint', (_name, startError, message) => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-x|', { x: runExit({ exitCode: null, pid: null, startError }) });
      expectObservable(source.pipe(mapToCliMessage(toy))).toBe('-(x|)', { x: failed({ reason: 'spawn', exitCode: null, message }) });
    });
  });

  it('reports a non-zero exit or a signal before what the events say, with stderr and the agent error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const crashed = runExit({ exitCode: 2, stderr: '\nfatal: disk full\nsee https://toy.example/docs/disk\n\n' });
      expectObservable(cold<PipelineItem>('-o-d-x|', { o: ev('oops'), d: ev('done'), x: crashed }).pipe(mapToCliMessage(toy))).toBe('-----(x|)', {
        x: failed({ reason: 'exit', exitCode: 2, stderr: crashed.stderr, agentError: 'model on fire', message: 'toy exited with code 2: fatal: disk full | model on fire' }),
      });
      const killed = runExit({ exitCode: null, signal: 'SIGKILL' });
      expectObservable(cold<PipelineItem>('-d-x|', { d: ev('done'), x: killed }).pipe(mapToCliMessage(toy))).toBe('---(x|)', {
        x: failed({ reason: 'exit', exitCode: null, signal: 'SIGKILL', message: 'toy was killed by SIGKILL' }),
      });
    });
  });

  it('says the first meaningful stderr line of a failed exit, whatever follows it; the whole stderr stays in the failure', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // How pi 0.73 says it has no API key (the docs paths are its install's).
      const stderr = [
        'No API key found for the selected model.',
        '',
        'Use /login to log into a provider via OAuth or API key. See:',
        '  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/providers.md',
        '  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/models.md',
        '',
      ].join('\n');
      expectObservable(cold<PipelineItem>('-x|', { x: runExit({ exitCode: 1, stderr }) }).pipe(mapToCliMessage(toy))).toBe('-(x|)', {
        x: failed({ reason: 'exit', exitCode: 1, stderr, message: 'toy exited with code 1: No API key found for the selected model.' }),
      });
    });
  });

  it('leaves out the partial first line of a stderr tail that was cut', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const tail = runExit({ exitCode: 3, stderr: 'ssss\nfatal: the end marker\n', stderrTruncatedBytes: 1000 });
      expectObservable(cold<PipelineItem>('-x|', { x: tail }).pipe(mapToCliMessage(toy))).toBe('-(x|)', {
        x: failed({ reason: 'exit', exitCode: 3, stderr: tail.stderr, stderrTruncatedBytes: 1000, message: 'toy exited with code 3: fatal: the end marker' }),
      });
    });
  });

  it("lets the dialect's stderrLine say what of stderr explains the exit", () => {
    const reader: MessageMapping<ToyState> = { ...toy, stderrLine: (stderr) => stderr.split('\n').find((line) => line.startsWith('fatal:')) };
    scheduler().run(({ cold, expectObservable }) => {
      const crashed = runExit({ exitCode: 2, stderr: 'warming up\nfatal: disk full\n' });
      expectObservable(cold<PipelineItem>('-x|', { x: crashed }).pipe(mapToCliMessage(reader))).toBe('-(x|)', {
        x: failed({ reason: 'exit', exitCode: 2, stderr: crashed.stderr, message: 'toy exited with code 2: fatal: disk full' }),
      });
    });
  });

  it('lets an agent-reported end with an error explain a non-zero exit, but not a signal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const o = ev('oops', { ended: true });
      expectObservable(cold<PipelineItem>('-o-x|', { o, x: runExit({ exitCode: 1 }) }).pipe(mapToCliMessage(toy))).toBe('---(x|)', {
        x: failed({ reason: 'agent-error', exitCode: 1, agentError: 'model on fire', message: 'toy reported: model on fire' }),
      });
      expectObservable(cold<PipelineItem>('-o-x|', { o, x: runExit({ exitCode: null, signal: 'SIGTERM' }) }).pipe(mapToCliMessage(toy))).toBe('---(x|)', {
        x: failed({ reason: 'exit', exitCode: null, signal: 'SIGTERM', agentError: 'model on fire', message: 'toy was killed by SIGTERM: model on fire' }),
      });
    });
  });

  it('uses the dialect conclusion for a clean exit', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('-o-x|', { o: ev('oops'), x: runExit() }).pipe(mapToCliMessage(toy))).toBe('---(x|)', {
        x: failed({ reason: 'agent-error', agentError: 'model on fire', message: 'toy reported: model on fire' }),
      });
    });
  });

  it('says invalid-output when nothing conclusive came and invalid lines explain it, else missing-terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const line = { lineNumber: 3, reason: 'not-json' as const, detail: 'Unexpected token', text: 'garbage', bytes: 7, truncated: false };
      const withGarbage = runExit({ invalidOutput: { lines: [line], omitted: 4 } });
      expectObservable(cold<PipelineItem>('-x|', { x: withGarbage }).pipe(mapToCliMessage(toy))).toBe('-(x|)', {
        x: failed({
          reason: 'invalid-output',
          invalidOutputLines: [line],
          invalidOutputLinesOmitted: 4,
          message: 'toy said nothing conclusive; 5 line(s) of output were not understood (line 3: not-json, Unexpected token)',
        }),
      });
      expectObservable(cold<PipelineItem>('-x|', { x: exit() }).pipe(mapToCliMessage(toy))).toBe('-(x|)', {
        x: failed({ reason: 'missing-terminal', message: 'toy said nothing conclusive' }),
      });
    });
  });

  it('still ends with exactly one terminal when the source completes without an exit item', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('-a-|', { a: text('partial') }).pipe(mapToCliMessage(toy))).toBe('-a-(x|)', {
        a: { type: 'assistant', text: 'partial' },
        x: failed({ reason: 'missing-terminal', exitCode: null, message: 'the toy output ended without an exit' }),
      });
    });
  });

  it('emits nothing after the terminal message', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-d-x-a-|', { d: ev('done'), x: runExit(), a: text('late') });
      expectObservable(source.pipe(mapToCliMessage(toy))).toBe('---(x|)', { x: { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' } });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('forwards errors, stays silent on never, and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<PipelineItem>('-a-#', { a: text('x') }).pipe(mapToCliMessage(toy))).toBe('-a-#', { a: { type: 'assistant', text: 'x' } });
      expectObservable(cold<PipelineItem>('-').pipe(mapToCliMessage(toy))).toBe('-');
      const source = cold<PipelineItem>('-a-a-a-|', { a: text('x') });
      expectObservable(source.pipe(mapToCliMessage(toy)), '^--!').toBe('-a-', { a: { type: 'assistant', text: 'x' } });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('creates the dialect state per subscription', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const result = cold<PipelineItem>('-s-s|', { s: ev('say') }).pipe(mapToCliMessage(toy));
      const expected = {
        1: { type: 'tool.call', toolCallId: '1', name: 'say', input: null },
        2: { type: 'tool.call', toolCallId: '2', name: 'say', input: null },
        x: failed({ reason: 'missing-terminal', exitCode: null, message: 'the toy output ended without an exit' }),
      };
      expectObservable(result).toBe('-1-2(x|)', expected);
      expectObservable(result).toBe('-1-2(x|)', expected);
    });
  });

  it('emits a single terminal when downstream re-enters on the terminal', () => {
    const subject = new Subject<PipelineItem>();
    const seen: string[] = [];
    subject.pipe(mapToCliMessage(toy)).subscribe((message) => {
      seen.push(message.type);
      subject.next(runExit());
    });
    subject.next(ev('done'));
    subject.next(runExit());
    expect(seen).toEqual(['terminal.completed']);
  });

  it('errors the stream with what the dialect\'s map throws, at that event, emits nothing after, and unsubscribes the source', () => {
    const boom = new Error('map bug');
    const dialect: MessageMapping<ToyState> = {
      ...toy,
      map: (state, event) => {
        if (event.type === 'boom') throw boom;
        return toy.map(state, event);
      },
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-s-b-s-x|', { s: ev('say'), b: ev('boom'), x: runExit() });
      expectObservable(source.pipe(mapToCliMessage(dialect))).toBe('-s-#', { s: { type: 'tool.call', toolCallId: '1', name: 'say', input: null } }, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it.each<[string, 'conclude' | 'lastError' | 'sessionId', PipelineItem]>([
    ['conclude at a clean exit', 'conclude', runExit()],
    ['sessionId at a clean exit after done', 'sessionId', runExit()],
    ['lastError at a non-zero exit', 'lastError', runExit({ exitCode: 2 })],
    ['lastError at a spawn failure', 'lastError', runExit({ exitCode: null, pid: null, startError: { stage: 'spawn', code: 'ENOENT', message: 'spawn toy ENOENT' } })],
    ['sessionId at a run the host stopped', 'sessionId', { ...runExit({ exitCode: null, signal: 'SIGTERM' }), stoppedBy: { kind: 'host' } }],
  ])('errors the stream, instead of a terminal, with what the dialect throws from %s', (_name, method, exitItem) => {
    const boom = new Error(`${method} bug`);
    const dialect: MessageMapping<ToyState> = {
      ...toy,
      [method]: () => {
        throw boom;
      },
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-d-x-a|', { d: ev('done'), x: exitItem, a: text('late') });
      expectObservable(source.pipe(mapToCliMessage(dialect))).toBe('---#', {}, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('errors the stream with what the dialect throws when the source completes without an exit item', () => {
    const boom = new Error('lastError bug');
    const dialect: MessageMapping<ToyState> = {
      ...toy,
      lastError: () => {
        throw boom;
      },
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('-a|', { a: text('partial') }).pipe(mapToCliMessage(dialect))).toBe('-a#', { a: { type: 'assistant', text: 'partial' } }, boom);
    });
  });

  it('errors with a TypeError when map returns something that is not a list of messages', () => {
    const dialect: MessageMapping<ToyState> = { ...toy, map: () => undefined as unknown as [] };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-s-s|', { s: ev('say') });
      expectObservable(source.pipe(mapToCliMessage(dialect))).toBe('-#', {}, expect.any(TypeError));
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('errors on subscribe, without subscribing to the source, when createState throws', () => {
    const boom = new Error('createState bug');
    const dialect: MessageMapping<ToyState> = {
      ...toy,
      createState: () => {
        throw boom;
      },
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-x|', { x: runExit() });
      expectObservable(source.pipe(mapToCliMessage(dialect))).toBe('#', {}, boom);
      expectSubscriptions(source.subscriptions).toBe([]);
    });
  });

  it('calls the dialect no more after it threw, even when a synchronous source goes on', () => {
    const boom = new Error('map bug');
    const mapped: string[] = [];
    const dialect: MessageMapping<ToyState> = {
      ...toy,
      map: (state, event) => {
        mapped.push(event.type);
        if (event.type === 'boom') throw boom;
        return toy.map(state, event);
      },
      conclude: () => {
        throw new Error('conclude must not be called');
      },
    };
    const errors: unknown[] = [];
    from<PipelineItem[]>([ev('boom'), ev('say'), runExit()])
      .pipe(mapToCliMessage(dialect))
      .subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(boom);
    expect(mapped).toEqual(['boom']);
  });

  const withoutMap = Object.fromEntries(Object.entries(toy).filter(([key]) => key !== 'map'));
  it.each<[string, unknown]>([
    ['no dialect', undefined],
    ['a string', 'pi'],
    ['no name', { ...toy, name: undefined }],
    ['a name that is not a string', { ...toy, name: 7 }],
    ['no map', withoutMap],
    ['createState not a function', { ...toy, createState: {} }],
    ['conclude not a function', { ...toy, conclude: 'completed' }],
    ['lastError not a function', { ...toy, lastError: null }],
    ['sessionId not a function', { ...toy, sessionId: 'S1' }],
    ['an installHint that is not a string', { ...toy, installHint: 1 }],
    ['an unknownType that is not a function', { ...toy, unknownType: ['say'] }],
  ])('throws a TypeError at call time for %s', (_name, dialect) => {
    expect(() => mapToCliMessage(dialect as MessageMapping<ToyState>)).toThrow(TypeError);
    expect(() => mapToCliMessage(dialect as MessageMapping<ToyState>)).toThrow(/^agent-rx: /);
  });

  it('accepts a dialect without an installHint', () => {
    const { installHint: _hint, ...withoutHint } = toy;
    expect(() => mapToCliMessage(withoutHint)).not.toThrow();
  });
});

describe('mapToCliMessage: event types the dialect does not know', () => {
  // The toy dialect knows `say`, `done` and `oops`, and leaves `tick` aside on purpose.
  const knowing: MessageMapping<ToyState> = { ...toy, unknownType: knownTypes(['say', 'done', 'oops', 'tick']) };
  const warning = (type: string) => ({ type: 'agent.warning', message: `toy sent an event of unknown type "${type}"; it was ignored` });
  const completed = { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' };

  it('says each unknown type once, before what the event stands for, and ignores the event as before', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-f-t-f-b-s-d-x|', { f: ev('foo'), t: ev('tick'), b: ev('bar'), s: ev('say'), d: ev('done'), x: runExit() });
      expectObservable(source.pipe(mapToCliMessage(knowing))).toBe('-f-----b-s---(x|)', {
        f: warning('foo'),
        b: warning('bar'),
        s: { type: 'tool.call', toolCallId: '1', name: 'say', input: null },
        x: completed,
      });
    });
  });

  it('says nothing for known types, nor without unknownType, nor for an empty run', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const items = { f: ev('foo'), t: ev('tick'), d: ev('done'), x: runExit() };
      expectObservable(cold<PipelineItem>('-t-d-x|', items).pipe(mapToCliMessage(knowing))).toBe('-----(x|)', { x: completed });
      expectObservable(cold<PipelineItem>('-f-d-x|', items).pipe(mapToCliMessage(toy))).toBe('-----(x|)', { x: completed });
      expectObservable(cold<PipelineItem>('|').pipe(mapToCliMessage(knowing))).toBe('(x|)', { x: failed({ reason: 'missing-terminal', message: expect.any(String) as unknown as string, exitCode: null }) });
    });
  });

  it('forwards an error after the warning, and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const erroring = cold<PipelineItem>('-f-#', { f: ev('foo') }, new Error('pipe broke'));
      expectObservable(erroring.pipe(mapToCliMessage(knowing))).toBe('-f-#', { f: warning('foo') }, new Error('pipe broke'));
      const long = cold<PipelineItem>('-f-b-x|', { f: ev('foo'), b: ev('bar'), x: runExit() });
      expectObservable(long.pipe(mapToCliMessage(knowing)), '^--!').toBe('-f--', { f: warning('foo') });
      expectSubscriptions(long.subscriptions).toBe('^--!');
    });
  });

  it('keeps the types said per subscription: a second run says them again', () => {
    const source = from<PipelineItem[]>([ev('foo'), ev('foo'), ev('done'), runExit()]);
    const run = source.pipe(mapToCliMessage(knowing));
    const first: unknown[] = [];
    const second: unknown[] = [];
    run.subscribe((message) => first.push(message));
    run.subscribe((message) => second.push(message));
    expect(first).toEqual([warning('foo'), completed]);
    expect(second).toEqual(first);
  });

  it("errors the stream with what the dialect's unknownType throws", () => {
    const boom = new Error('unknownType broke');
    const throwing: MessageMapping<ToyState> = {
      ...toy,
      unknownType: () => {
        throw boom;
      },
    };
    const errors: unknown[] = [];
    from<PipelineItem[]>([ev('foo'), runExit()])
      .pipe(mapToCliMessage(throwing))
      .subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toEqual([boom]);
  });
});

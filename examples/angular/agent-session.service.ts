// An Angular service and component over the NestJS example's sessions (examples/nest): one agent
// process answers a whole conversation. The session streams into the page as server-sent events
// from GET /api/agent/session/:id, read back by agent-rx/browser as an Observable of
// SessionMessages; commands go to the session's POST and DELETE endpoints with fetch. Type-checked
// against @angular/core in `npm run typecheck`.
import { Component, DestroyRef, inject, Injectable, signal } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { defer, finalize, type Observable } from 'rxjs';
import { fromSessionEventSource, type SessionMessage } from '../../lib/browser.js';

/** One session of the Nest example, by the id this page chose for it. */
export interface AgentSession {
  readonly id: string;
  /**
   * The session's messages. Subscribing opens its stream, which starts the agent process;
   * unsubscribing closes it, which stops the agent and its tools. The server gives an id one
   * stream: a second subscription while one is open ends at once with a `terminal.failed`.
   */
  readonly messages$: Observable<SessionMessage>;
  /** A turn (queued on the server while one runs), or `steer` into the running turn. Its outcome comes in the stream. */
  prompt(text: string, as?: 'prompt' | 'follow-up' | 'steer'): Promise<void>;
  /** Ends the running turn (`turn.failed`, aborted); the agent process stays for the next prompt. */
  abort(): Promise<void>;
  /** Ends the session after its running turn: the stream ends with the session's terminal message. */
  end(): Promise<void>;
}

@Injectable({ providedIn: 'root' })
export class AgentSessionService {
  /** A session under a fresh id; nothing starts until `messages$` is subscribed. */
  open(id: string = crypto.randomUUID()): AgentSession {
    const url = `/api/agent/session/${encodeURIComponent(id)}`;
    // The server knows the session once its stream is open: commands wait for that, and fail
    // when the stream ended without opening.
    let ready: Promise<void> = Promise.reject(new Error(`the session ${id} is not open: subscribe to its messages first`));
    ready.catch(() => undefined);
    const messages$ = defer(() => {
      const source = new EventSource(url);
      let opened = (): void => undefined;
      let closed = (_error: Error): void => undefined;
      ready = new Promise<void>((resolve, reject) => {
        opened = resolve;
        closed = reject;
      });
      ready.catch(() => undefined);
      source.addEventListener('open', () => {
        opened();
      });
      return fromSessionEventSource(source).pipe(
        finalize(() => {
          closed(new Error(`the session ${id} ended before its stream opened`));
        }),
      );
    });
    const send = async (path: string, method: 'POST' | 'DELETE', body?: unknown): Promise<void> => {
      await ready;
      const response = await fetch(`${url}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${method} ${url}${path}: HTTP ${String(response.status)} ${(await response.text()).trim()}`);
    };
    return {
      id,
      messages$,
      prompt: (text, as = 'prompt') => send('/prompt', 'POST', { text, as }),
      abort: () => send('/abort', 'POST'),
      end: () => send('', 'DELETE'),
    };
  }
}

/** One turn on the page: its prompt, its answer so far, and its outcome once it ended. */
interface TurnView {
  readonly turn: number;
  readonly prompt: string;
  readonly answer: string;
  /** A tool ran after the answer's text: the next text is the model's next message, a paragraph of its own. */
  readonly afterTool: boolean;
  readonly outcome: string | null;
}

@Component({
  selector: 'app-agent-session',
  template: `
    <input #prompt (keydown.enter)="say(prompt.value); prompt.value = ''" placeholder="A prompt: a turn, or the next one while one runs" />
    <button type="button" (click)="abort()" [disabled]="!running()">Stop turn</button>
    <button type="button" (click)="end()" [disabled]="session() === null">End session</button>
    @for (turn of turns(); track turn.turn) {
      <article>
        <p>{{ turn.prompt }}</p>
        <pre>{{ turn.answer }}</pre>
        @if (turn.outcome; as outcome) {
          <p>{{ outcome }}</p>
        }
      </article>
    }
    @if (status(); as text) {
      <p role="status">{{ text }}</p>
    }
  `,
})
export class AgentSessionComponent {
  readonly turns = signal<readonly TurnView[]>([]);
  readonly running = signal(false);
  readonly status = signal<string | null>(null);
  readonly session = signal<AgentSession | null>(null);
  private readonly sessions = inject(AgentSessionService);
  private readonly destroyRef = inject(DestroyRef);

  // The first prompt opens the session; each prompt is then a turn of the same agent process.
  say(text: string): void {
    if (text.trim() === '') return;
    const session = this.session() ?? this.start();
    session.prompt(text).catch((error: unknown) => {
      this.status.set(error instanceof Error ? error.message : String(error));
    });
  }

  abort(): void {
    this.session()
      ?.abort()
      .catch(() => undefined); // the stream says how the turn ended
  }

  end(): void {
    this.session()
      ?.end()
      .catch(() => undefined);
  }

  private start(): AgentSession {
    const session = this.sessions.open();
    this.session.set(session);
    this.status.set(null);
    // takeUntilDestroyed: leaving the view closes the stream, and the server stops the agent.
    session.messages$.pipe(takeUntilDestroyed(this.destroyRef)).subscribe((message) => {
      this.show(message);
    });
    return session;
  }

  private show(message: SessionMessage): void {
    switch (message.type) {
      case 'turn.started':
        this.running.set(true);
        this.turns.update((turns) => [...turns, { turn: message.turn, prompt: message.prompt, answer: '', afterTool: false, outcome: null }]);
        return;
      case 'assistant':
        if (message.text !== '') this.updateTurn((turn) => ({ ...turn, answer: turn.answer + (turn.afterTool ? '\n\n' : '') + message.text, afterTool: false }));
        return;
      case 'tool.call':
      case 'tool.update':
      case 'tool.completed':
      case 'tool.failed':
        this.updateTurn((turn) => ({ ...turn, afterTool: turn.afterTool || turn.answer !== '' }));
        return;
      case 'turn.completed':
      case 'turn.failed':
        // A stream that broke mid-turn fails the turn here too, before the session's terminal.failed.
        this.running.set(false);
        this.updateTurn((turn) => ({ ...turn, outcome: message.type === 'turn.completed' ? `completed (${message.stopReason})` : `${message.reason}: ${message.message}` }));
        return;
      case 'input.dropped':
        this.status.set(`not run (${message.reason}): ${message.message}`);
        return;
      case 'terminal.completed':
      case 'terminal.failed':
        this.status.set(message.type === 'terminal.completed' ? 'the session ended' : `the session failed (${message.reason}): ${message.message}`);
        this.session.set(null);
        return;
      default:
      // the other messages (thinking, input.accepted) are left out of this small view
    }
  }

  private updateTurn(change: (turn: TurnView) => TurnView): void {
    this.turns.update((turns) => {
      const last = turns.at(-1);
      return last === undefined ? turns : [...turns.slice(0, -1), change(last)];
    });
  }
}

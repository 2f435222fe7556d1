// A chat service for a Node backend (a NestJS or Angular-SSR provider, or any class a server
// keeps): each conversation is one agent session, one process, that lives until it is ended.
// Clients send commands and read the conversation's messages as an Observable (an SSE endpoint
// returns it as it is). Nothing here is framework-specific: decorate it with `@Injectable()`.
import { randomUUID } from 'node:crypto';
import { Subject, type Observable, type OperatorFunction, type Subscription } from 'rxjs';
import { piSession, type SessionCommand, type SessionMessage } from '../lib/index.js';

interface Conversation {
  readonly commands: Subject<SessionCommand>;
  readonly messages: Subject<SessionMessage>;
  readonly subscription: Subscription;
}

export class ChatService {
  readonly #conversations = new Map<string, Conversation>();
  readonly #session: () => OperatorFunction<SessionCommand, SessionMessage>;

  /** `session` makes each conversation's session; by default a pi session. */
  constructor(session: () => OperatorFunction<SessionCommand, SessionMessage> = () => piSession()) {
    this.#session = session;
  }

  /** Starts a conversation (its agent process) and returns its id. */
  start(): string {
    const id = randomUUID();
    const commands = new Subject<SessionCommand>();
    const messages = new Subject<SessionMessage>();
    // The service holds the session: clients come and go, the conversation stays until ended.
    const subscription = commands.pipe(this.#session()).subscribe({
      next: (message) => {
        messages.next(message);
      },
      complete: () => {
        this.#conversations.delete(id);
        messages.complete();
      },
    });
    this.#conversations.set(id, { commands, messages, subscription });
    return id;
  }

  /** The conversation's messages from now on; completes after its terminal message. */
  messages(id: string): Observable<SessionMessage> | undefined {
    return this.#conversations.get(id)?.messages.asObservable();
  }

  /** A prompt, steer, follow-up or abort; `false` when there is no such conversation. */
  send(id: string, command: SessionCommand): boolean {
    const conversation = this.#conversations.get(id);
    conversation?.commands.next(command);
    return conversation !== undefined;
  }

  /** Ends a conversation after its running turn: the agent exits by itself. */
  end(id: string): void {
    this.#conversations.get(id)?.commands.complete();
  }

  /** Stops every conversation now (the stop sequence: no agent process is left), e.g. at shutdown. */
  stopAll(): void {
    for (const { subscription, messages } of this.#conversations.values()) {
      subscription.unsubscribe();
      messages.complete();
    }
    this.#conversations.clear();
  }
}

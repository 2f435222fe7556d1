// `agent-rx chat [options]`: an interactive session on an agent; see CHAT_USAGE.
import { existsSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { Subject } from 'rxjs';
import type { CliMessage, PermissionRequested, PromptPart, SessionCommand, SessionMessage, TerminalMessage } from '../messages.js';
import { approveAnswer, approveQuestion } from './approve.js';
import { stopAllRuns } from '../process/run-registry.js';
import { colorEnabled, isTerminalStream, palette } from './ansi.js';
import { CHAT_USAGE, parseChatArgs, readChatLine, type ChatRequest } from './chat-command.js';
import { acceptedNote, addTokens, ChatScreen, droppedNote, sessionEnd, statusLine, turnFailedLine, type TokenCount } from './chat-render.js';
import { createRenderer, type Renderer } from './render.js';
import { onStopSignals } from './stop-signals.js';
import { answeredUsage, usageErrorText } from './usage.js';

/** A second Ctrl-C this soon after the one that asked for an abort ends the session. */
const DOUBLE_CTRL_C_MS = 1500;

const IDLE_PROMPT = '› ';

/** Parses `chat`'s arguments and runs the chat; sets `process.exitCode` (2 on a usage error). */
export function chat(argv: readonly string[]): void {
  const request = parseChatArgs(argv);
  if (answeredUsage('chat', CHAT_USAGE, request)) return;
  runChat(request);
}

interface SentCommand {
  /** Typed at the idle prompt, so already on screen: its turn needs no heading. */
  readonly shown: boolean;
}

function runChat(request: Extract<ChatRequest, { kind: 'chat' }>): void {
  // Line editing needs a terminal on both sides; otherwise every line read is a prompt.
  const interactive = isTerminalStream(process.stdin) && isTerminalStream(process.stdout);
  if (request.options['permission'] === 'ask' && !interactive) {
    process.stderr.write(usageErrorText('agent-rx chat', '--approve ask needs a terminal to ask on (stdin and stdout)'));
    process.exitCode = 2;
    return;
  }
  const color = request.color ?? colorEnabled(process.stdout, process.env);
  const c = palette(color);
  const out = (text: string): void => {
    if (text !== '') process.stdout.write(text);
  };
  const rl: Interface = interactive
    ? createInterface({ input: process.stdin, output: process.stdout, terminal: true, prompt: IDLE_PROMPT })
    : createInterface({ input: process.stdin, terminal: false, crlfDelay: Infinity });
  const screen = new ChatScreen(out, interactive ? rl : null, () => process.stdout.columns);
  const busyPrompt = request.queue ? 'queue› ' : 'steer› ';
  const waitingFor = `waiting for ${request.displayName}`;
  /** What the spinner says while a turn runs and nothing is written: the agent, or its tool. */
  let waitLabel = waitingFor;
  const wait = (label: string = waitLabel): void => {
    waitLabel = label;
    screen.waiting(label);
  };

  const commands = new Subject<SessionCommand>();
  /** `--approve ask`: the requests waiting for the user's answer, the first one asked. */
  const asking = request.options['permission'] === 'ask';
  const pending: PermissionRequested[] = [];
  const askNext = (): void => {
    const next = pending[0];
    if (next !== undefined && interactive && inputOpen) screen.showInput(c.yellow(approveQuestion(next)));
  };
  const sent = new Map<string, SentCommand>();
  /** Follow-ups accepted and not yet started or dropped, by command id. */
  const queued = new Set<string>();
  let lastId = 0;
  /** A turn runs, or one was asked for and has not ended: Enter steers (or queues). */
  let busy = false;
  let turn: number | undefined;
  let turnStartedAt = 0;
  let turns = 0;
  let tokens: TokenCount = { input: 0, output: 0 };
  let abortAskedAt: number | undefined;
  let ending = false;
  let inputOpen = true;
  let rlClosed = false;
  let terminal: TerminalMessage | undefined;
  const startedAt = performance.now();
  // One renderer per stretch of content: a note between two stretches starts a fresh paragraph.
  let content: Renderer = createRenderer({ color });
  const sessionRenderer = createRenderer({ color });

  /** Images and files given with `/image` and `/file`, sent with the next prompt or steer. */
  const attached: PromptPart[] = [];
  const send = (command: SessionCommand & { readonly id: string }, shown: boolean): void => {
    sent.set(command.id, { shown });
    const parts = attached.splice(0);
    commands.next(parts.length === 0 || (command.type !== 'prompt' && command.type !== 'steer') ? command : { ...command, parts });
  };
  const nextId = (): string => `c${String((lastId += 1))}`;
  const note = (text: string): void => {
    screen.line(text);
    content = createRenderer({ color });
    if (busy) wait();
  };
  const idle = (): void => {
    busy = false;
    if (interactive && inputOpen) screen.showInput(IDLE_PROMPT);
  };
  const closeInput = (): void => {
    if (!inputOpen) return;
    inputOpen = false;
    screen.inputClosed();
    if (!rlClosed) rl.close();
  };

  // Ends the session gracefully: the commands complete, the running turn finishes, the agent exits.
  const end = (): void => {
    if (ending) return;
    ending = true;
    closeInput();
    commands.complete();
    if (interactive) {
      const after = busy && turn !== undefined ? ` after turn ${turn}` : '';
      note(c.dim(`ending the session${after} (Ctrl-C stops the agent now)`));
    }
  };

  const onMessage = (message: SessionMessage): void => {
    switch (message.type) {
      case 'input.accepted': {
        if (message.as === 'follow-up' && message.commandId !== undefined) queued.add(message.commandId);
        const text = acceptedNote(message, c);
        if (text !== undefined) note(message.as === 'abort' && interactive ? `${text} ${c.dim('(Ctrl-C again ends the session)')}` : text);
        break;
      }
      case 'input.dropped': {
        if (message.commandId !== undefined) queued.delete(message.commandId);
        note(droppedNote(message, c));
        if (turn === undefined && queued.size === 0 && busy) idle();
        break;
      }
      case 'turn.started': {
        busy = true;
        turn = message.turn;
        turnStartedAt = performance.now();
        const id = message.commandId;
        if (id !== undefined) queued.delete(id);
        // A prompt typed at the idle prompt is on screen already; any other (piped, queued, a
        // steer that found no turn) is shown as its turn begins.
        if (!(id !== undefined && sent.get(id)?.shown === true)) note(`${c.bold('›')} ${message.prompt}`);
        content = createRenderer({ color });
        wait(waitingFor);
        break;
      }
      case 'turn.completed':
      case 'turn.failed': {
        const usage = message.type === 'turn.completed' ? message.usage : undefined;
        tokens = addTokens(tokens, usage);
        turns += 1;
        if (message.type === 'turn.failed') note(turnFailedLine(message, c));
        note(statusLine(message.turn, usage, tokens, performance.now() - turnStartedAt, c));
        turn = undefined;
        abortAskedAt = undefined;
        if (queued.size === 0) idle();
        else wait(waitingFor);
        break;
      }
      case 'terminal.completed':
      case 'terminal.failed':
        terminal = message;
        break;
      case 'session.started':
      case 'session.resumed':
        screen.text(sessionRenderer.render(message, 0));
        break;
      case 'session.passivated':
        note(`idle for ${message.idleMs} ms: the agent's process ended, the conversation is saved (${message.snapshotBytes} bytes); the next prompt resumes it`);
        break;
      case 'permission.requested':
        showContent(message);
        if (asking) {
          pending.push(message);
          if (pending.length === 1) askNext();
        }
        break;
      case 'permission.resolved': {
        const at = pending.findIndex((waiting) => waiting.requestId === message.requestId);
        if (at !== -1) pending.splice(at, 1);
        showContent(message);
        if (at === 0) askNext();
        break;
      }
      default:
        showContent(message);
    }
  };

  const showContent = (message: CliMessage): void => {
    screen.text(content.render(message, performance.now() - turnStartedAt));
    // As `agent-rx run` does: between outputs that leave the cursor at a line start, say what is awaited.
    if (message.type === 'tool.call') wait(`running ${message.name}`);
    else if (message.type !== 'assistant') wait(waitingFor);
  };

  const subscription = commands.pipe(request.session()).subscribe({
    next: onMessage,
    error: (error: unknown) => {
      ending = true;
      screen.stopWaiting();
      closeInput();
      process.stderr.write(`agent-rx: the session failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
    complete: () => {
      ending = true;
      screen.stopWaiting();
      closeInput();
      if (terminal !== undefined) out(sessionEnd(sessionRenderer, terminal, turns, performance.now() - startedAt));
      process.exitCode = terminal?.type === 'terminal.completed' ? 0 : 1;
    },
  });

  rl.on('line', (line) => {
    let text = line.trim();
    const waiting = pending[0];
    if (waiting !== undefined && interactive) {
      // The answer to the request asked: the next one (if any) is asked once this one is resolved.
      screen.inputSent();
      commands.next({ type: 'permission', requestId: waiting.requestId, decision: approveAnswer(text, waiting), id: nextId() });
      return;
    }
    // `/image <path> [text]`, `/file <path> [text]`: kept for the prompt sent with it, or the next one.
    const read = readChatLine(text);
    if (read.kind !== 'text') {
      screen.inputSent();
      const found = read.kind === 'attach' && existsSync(read.part.path);
      if (read.kind === 'problem') note(c.yellow(`⚠ ${read.message}`));
      else if (!found) note(c.yellow(`⚠ not attached: ${read.given} does not exist`));
      else {
        attached.push(read.part);
        note(c.dim(`+ ${read.part.type} ${read.given}${read.text === '' ? ' · goes with the next prompt' : ''}`));
      }
      if (!found || read.text === '') {
        if (!busy && interactive && inputOpen) screen.showInput(IDLE_PROMPT);
        return;
      }
      text = read.text;
    }
    if (!interactive) {
      if (text !== '') send({ type: 'prompt', text, id: nextId() }, false);
      return;
    }
    if (!busy) {
      if (text === '') {
        rl.prompt();
        return;
      }
      screen.inputSent();
      busy = true;
      send({ type: 'prompt', text, id: nextId() }, true);
      wait(waitingFor);
      return;
    }
    if (line === '') screen.inputDiscarded();
    else screen.inputSent();
    content = createRenderer({ color });
    wait();
    if (text === '') return;
    send(request.queue ? { type: 'prompt', text, id: nextId() } : { type: 'steer', text, id: nextId() }, false);
  });
  // Ctrl-D on an empty line, or the end of piped input.
  rl.on('close', () => {
    rlClosed = true;
    closeInput();
    end();
  });

  if (interactive) {
    // Ctrl-C (readline has the terminal in raw mode, so it is a key, not a signal): abort the
    // turn; idle, or again while the abort is pending, end the session.
    rl.on('SIGINT', () => {
      const now = performance.now();
      if (!busy || (abortAskedAt !== undefined && now - abortAskedAt < DOUBLE_CTRL_C_MS)) {
        end();
        return;
      }
      abortAskedAt = now;
      commands.next({ type: 'abort', id: nextId() });
    });
    // The first key typed while a turn streams brings up the input row, before readline echoes it.
    process.stdin.prependListener('keypress', (_text: string | undefined, key: { readonly name?: string; readonly ctrl?: boolean } | undefined) => {
      if (!busy || !inputOpen || screen.inputShown) return;
      if (key?.ctrl === true && (key.name === 'c' || key.name === 'd')) return;
      screen.showInput(busyPrompt);
    });
    out(`${c.dim(`agent-rx chat · ${request.description}`)}\n`);
    out(
      `${c.dim(`Enter sends · Enter while a turn runs ${request.queue ? 'queues it for after the turn' : 'steers it'} · Ctrl-C aborts the turn · Ctrl-D ends · /image or /file <path> attaches`)}\n`,
    );
    screen.showInput(IDLE_PROMPT);
  } else {
    out(`${c.dim(`agent-rx chat · ${request.description}`)}\n`);
  }

  // Once the end was asked (the input is closed, the terminal out of raw mode), Ctrl-C is a
  // signal again: it, SIGTERM or SIGHUP stops the agent now (the stop sequence), then the chat
  // exits as a shell would (130, 143, 129). A second signal ends at once.
  onStopSignals(async (signal) => {
    ending = true;
    screen.stopWaiting();
    closeInput();
    screen.line(c.yellow(`⏹ ${signal === 'SIGINT' ? 'interrupted' : `${signal} received`}, stopping the agent`));
    await stopAllRuns();
    subscription.unsubscribe();
  });
}

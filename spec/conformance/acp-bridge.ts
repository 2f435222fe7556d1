import * as acp from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { builtCli } from '../helpers/built-cli.js';
import { ROOT } from '../helpers/tagged-child.js';

/** `agent-rx` as it ships (built from lib/ when lib/ changed). */
const BUILT = await builtCli();

/** One line the bridge wrote to the client, with when it came. */
export interface WireLine {
  readonly at: number;
  readonly message: Record<string, unknown>;
}

/** How the editor answers `session/request_permission` (`signal`: aborted when the bridge withdraws the request). */
export type PermissionAnswerer = (request: acp.RequestPermissionRequest, signal: AbortSignal) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

/** The editor's choice of the option of `kind` the request offers (`cancelled` when it offers none). */
export function choose(request: acp.RequestPermissionRequest, kind: acp.PermissionOptionKind): acp.RequestPermissionResponse {
  const option = request.options.find((candidate) => candidate.kind === kind);
  return { outcome: option === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: option.optionId } };
}

/**
 * `agent-rx acp …` started as an editor starts an ACP agent: a child process whose stdio is the
 * connection, driven by the ACP SDK's client. Every line the bridge writes is also kept in order
 * (`wire`): the SDK hands notifications to handlers after the answers that follow them, the wire
 * shows the order they were sent in. Permission requests are kept (`permissions`) and answered by
 * `answerPermission` (default: the user allows once).
 */
export class AcpBridge {
  readonly child: ChildProcess;
  readonly connection: acp.ClientConnection;
  readonly wire: WireLine[] = [];
  readonly exited: Promise<number | null>;
  readonly permissions: acp.RequestPermissionRequest[] = [];
  answerPermission: PermissionAnswerer = (request) => choose(request, 'allow_once');
  readonly #stderr: string[] = [];

  /** `entry`: how Node starts the command line (default: as it ships, `dist/cli/main.js`). */
  constructor(args: readonly string[], env: Readonly<Record<string, string | undefined>>, entry: readonly string[] = [BUILT]) {
    this.child = spawn(process.execPath, [...entry, 'acp', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
    const stdout = this.child.stdout as Readable;
    let partial = '';
    stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.wire.push({ at: performance.now(), message: JSON.parse(line) as Record<string, unknown> });
    });
    this.child.stderr?.on('data', (chunk: Buffer) => this.#stderr.push(chunk.toString('utf8')));
    const stream = acp.ndJsonStream(Writable.toWeb(this.child.stdin as Writable) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>);
    this.connection = acp
      .client({ name: 'agent-rx-spec' })
      .onNotification(acp.methods.client.session.update, () => undefined)
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissions.push(params);
        return this.answerPermission(params, signal);
      })
      .connect(stream);
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  get stderr(): string {
    return this.#stderr.join('');
  }

  async open(cwd: string): Promise<string> {
    await this.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    return (await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
  }

  /** The updates on the wire from `from` (an index into `wire`) up to the answer with id `id`. */
  updatesBefore(id: unknown, from = 0): Record<string, unknown>[] {
    const end = this.wire.findIndex((line, i) => i >= from && line.message['id'] === id && 'result' in line.message);
    return this.wire.slice(from, end === -1 ? undefined : end).flatMap((line) => (line.message['method'] === 'session/update' ? [(line.message['params'] as { update: Record<string, unknown> }).update] : []));
  }

  /** The text of the agent_message_chunk updates among `updates`. */
  static text(updates: readonly Record<string, unknown>[]): string {
    return updates
      .map((update) => {
        const text = (update['content'] as { text?: unknown } | undefined)?.text;
        return update['sessionUpdate'] === 'agent_message_chunk' && typeof text === 'string' ? text : '';
      })
      .join('');
  }

  /** The id of the last request the SDK sent for `method` is the id of its answer on the wire: the last answer's id. */
  lastAnswerId(): unknown {
    return [...this.wire].reverse().find((line) => 'result' in line.message || 'error' in line.message)?.message['id'];
  }

  /** Closes the connection the way an editor that quits does: its end of stdin. */
  disconnect(): void {
    this.child.stdin?.end();
  }
}

import { defer, type OperatorFunction } from 'rxjs';
import { delimiter } from 'node:path';
import { codexAppServerDialect } from '../agents/codex/app-server/dialect.js';
import { codexAppServerProtocol } from '../agents/codex/app-server/session.js';
import { buildCodexSessionInvocation } from '../agents/codex/args.js';
import { findCodexExecutable } from '../agents/codex/executable.js';
import type { CodexSessionOptions } from '../agents/codex/options.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import type { ProcessOptions } from '../process/options.js';
import { resolveProcessOptions } from '../process/options.js';
import { runSession } from '../sessions/run-session.js';

/**
 * An interactive Codex session over `codex app-server` (JSON-RPC on stdio): one process and one
 * thread for a stream of commands, many turns, the same contract as `piSession`. Its text streams
 * as true deltas.
 *
 * A steer is `turn/steer`: Codex stops the model's answer in flight and answers again with the
 * steer (the cut answer's text stays in the stream); while a command runs, the steer waits for
 * it. An abort is `turn/interrupt`, after which agent-rx kills the command Codex leaves running;
 * the process and the thread stay. Requests for approval are declined (use `approvalPolicy:
 * 'never'`). Without `executable`, the native binary is found as for `runCodex`.
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(codexSession({ sandbox: 'workspace-write', approvalPolicy: 'never' })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'Fix the failing test' });
 */
export function codexSession(options: CodexSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  const { executable, args, processOptions, thread } = buildCodexSessionInvocation(options);
  const spec = { args, dialect: codexAppServerDialect(), protocol: codexAppServerProtocol({ thread }) };
  // Every option is checked now, whichever executable is found later.
  resolveProcessOptions(executable ?? 'codex', args, processOptions);
  if (executable !== undefined) return runSession({ ...spec, command: executable, processOptions });
  return (commands) =>
    defer(() => {
      const found = withCodexExecutable(processOptions);
      return commands.pipe(runSession({ ...spec, command: found.command, processOptions: found.processOptions }));
    });
}

/**
 * The Codex executable for a run without one (see `findCodexExecutable`), and its process options:
 * the programs the package ships for Codex (its `rg`) come first on PATH, as its launcher does; a
 * PATH the caller set (or removed, with `undefined`) wins over the host's.
 */
export function withCodexExecutable<O extends ProcessOptions>(processOptions: O): { readonly command: string; readonly processOptions: O } {
  const found = findCodexExecutable({ ...process.env, ...processOptions.env });
  if (found.pathDir === undefined) return { command: found.command, processOptions };
  const path = processOptions.env !== undefined && Object.hasOwn(processOptions.env, 'PATH') ? processOptions.env['PATH'] : process.env['PATH'];
  const env = { ...processOptions.env, PATH: path === undefined || path === '' ? found.pathDir : `${found.pathDir}${delimiter}${path}` };
  return { command: found.command, processOptions: { ...processOptions, env } };
}

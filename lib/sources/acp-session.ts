import type { McpServer } from '@agentclientprotocol/sdk';
import { resolve } from 'node:path';
import type { OperatorFunction } from 'rxjs';
import { acpClientProtocol, type AcpClientHandlers } from '../agents/acp/client.js';
import { SESSION_PERMISSION_OPTIONS, checkOptions } from '../agents/shared/option-schemas.js';
import type { PermissionOptions } from '../operators/permission-policy.js';
import * as z from 'zod';
import { acpDialect } from '../agents/acp/dialect.js';
import { checkOptionsObject, checkString, checkStringLists } from '../agents/shared/options.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import type { ProcessOptions } from '../process/options.js';
import { processSession } from '../sessions/process-session.js';

const PERMISSIONS = z.object(SESSION_PERMISSION_OPTIONS);

/** What an ACP client session lets the caller decide: the agent's permission requests, and the client's file system. */
export interface AcpClientOptions extends PermissionOptions {
  /** `fs/read_text_file` and `fs/write_text_file` for the agent; without them it has no client file system. */
  readonly handlers?: AcpClientHandlers;
  /** MCP servers for the session (`session/new`). Default none. */
  readonly mcpServers?: readonly McpServer[];
}

/** Options of `acpSession`: the agent's command, the client's choices, and the process options. */
export interface AcpSessionOptions extends AcpClientOptions, Omit<ProcessOptions, 'stdin'> {
  /** The agent's executable, run without a shell. */
  readonly command: string;
  /** Its arguments, e.g. `['--acp']` for Gemini CLI. Default none. */
  readonly args?: readonly string[];
  /** The agent's name in diagnostics. Default `ACP agent`. */
  readonly name?: string;
}

/**
 * Any Agent Client Protocol agent (one that speaks ACP on stdio, such as `gemini --acp`) as a
 * session: the same contract as `piSession`. A prompt is `session/prompt`, an abort
 * `session/cancel`; the agent's updates become text, thinking and tool messages; the answer to the
 * prompt ends the turn (`cancelled`: aborted). ACP has no steer: a steer cancels the running prompt
 * and becomes the next prompt of the same turn. The wire is the ACP SDK's.
 *
 * @example
 * commands.pipe(acpSession({ command: 'my-acp-agent', args: ['--stdio'], cwd: '/path/to/project' })).subscribe(render);
 */
export function acpSession(options: AcpSessionOptions): OperatorFunction<SessionCommand, SessionMessage> {
  checkOptionsObject('acpSession', options);
  const { command, args = [], name = 'ACP agent', permission, permissionTimeoutMs, handlers, mcpServers, ...processOptions } = options;
  checkString('command', command);
  checkOptions('acpSession', PERMISSIONS, { permission, permissionTimeoutMs });
  checkStringLists({ args });
  return processSession({
    command,
    args,
    // ACP has no abort of its own process: SIGTERM, then the tree kill after the grace period.
    processOptions: { interrupt: { signal: 'SIGTERM', stdin: null }, ...processOptions },
    dialect: acpDialect(name),
    protocol: acpClientProtocol({
      name,
      cwd: resolve(processOptions.cwd ?? process.cwd()),
      ...(handlers === undefined ? {} : { handlers }),
      ...(mcpServers === undefined ? {} : { mcpServers }),
    }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  });
}

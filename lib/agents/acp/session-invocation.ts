import { resolve } from 'node:path';
import type { Dialect, ToolVocabulary } from '../../operators/dialect.js';
import type { ProcessOptions } from '../../process/options.js';
import type { SessionInvocation } from '../definition.js';
import type { PermissionOptions } from '../../operators/permission-policy.js';
import { acpClientProtocol, type AcpProtocolOptions } from './client.js';
import { acpDialect } from './dialect.js';

/** What an agent that speaks ACP for its sessions says of one: its command, its client's choices, how its output reads. */
export interface AcpAgentSession<Setup> extends Pick<AcpProtocolOptions, 'name' | 'handlers' | 'mcpServers' | 'usageOf' | 'resume' | 'traceMeta'>, PermissionOptions {
  readonly executable: string | undefined;
  /** Its arguments, ACP's flag (`--acp`) included. */
  readonly args: readonly string[];
  readonly processOptions: Omit<ProcessOptions, 'stdin'>;
  /** Its tools' kinds and summaries, as in its runs. */
  readonly tools?: ToolVocabulary;
  /** What its stderr says, read as for a run. */
  readonly stderrLine?: Dialect['stderrLine'];
  /** Its name of a tool from a call's id, where the call says no name. */
  readonly toolName?: (toolCallId: string) => string | undefined;
  /** The methods it sends besides ACP's own, which agent-rx leaves aside (see `AcpDialectOptions.types`). */
  readonly types?: readonly string[];
  /** What its setup must make first. */
  readonly setup?: Setup;
}

/** The default `gracePeriodMs` of an ACP agent's session (Gemini CLI's, Qwen Code's). */
export const ACP_SESSION_GRACE_MS = 10_000;

/**
 * The session invocation of an agent whose interactive mode is ACP (Gemini CLI, Qwen Code): the
 * ACP client protocol in the agent's working folder, and the ACP dialect with the agent's own tool
 * vocabulary and stderr reader. A new session each time (ACP opens one), or the session `resume`
 * names, loaded (`session/load`).
 */
export function acpSessionInvocation<Setup>(agent: AcpAgentSession<Setup>): SessionInvocation<Setup> {
  const { name, executable, args, processOptions, tools, toolName, types, stderrLine, setup, permission, permissionTimeoutMs, handlers, mcpServers, usageOf, resume, traceMeta } = agent;
  const protocol = acpClientProtocol({
    name,
    cwd: resolve(processOptions.cwd ?? process.cwd()),
    ...(usageOf === undefined ? {} : { usageOf }),
    ...(tools === undefined ? {} : { tools }),
    ...(toolName === undefined ? {} : { toolName }),
    ...(handlers === undefined ? {} : { handlers }),
    ...(mcpServers === undefined ? {} : { mcpServers }),
    ...(resume === undefined ? {} : { resume }),
    ...(traceMeta === undefined ? {} : { traceMeta }),
  });
  return {
    executable,
    args,
    // Once they ran a shell command, Gemini CLI and Qwen Code take a while to exit after their input
    // ends (measured 0.9-1.5 s and 2.0-3.1 s on an idle machine): the end limit leaves them room.
    processOptions: { gracePeriodMs: ACP_SESSION_GRACE_MS, ...processOptions },
    resuming: resume !== undefined,
    protocol,
    dialect: {
      ...acpDialect(name, { ...(toolName === undefined ? {} : { toolName }), ...(types === undefined ? {} : { types }) }),
      ...(tools === undefined ? {} : { tools }),
      ...(stderrLine === undefined ? {} : { stderrLine }),
    },
    ...(setup === undefined ? {} : { setup }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  };
}

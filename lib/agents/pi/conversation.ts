import { join } from 'node:path';
import type { ConversationKeeping } from '../definition.js';
import type { PiSessionOptions } from './options.js';

/**
 * Where pi keeps a session's conversation: one file, `<timestamp>_<id>.jsonl`, in `--session-dir`
 * when the options name one, else in `<agent dir>/sessions/--<cwd, its first separator dropped and
 * the others made dashes>--/` (the agent dir is `PI_CODING_AGENT_DIR`, else `~/.pi/agent`, `~`
 * being the process's `HOME`, which the library always gives). `--session <id>` resumes it. A session with `session: 'none'` keeps
 * nothing.
 */
export const piConversation: ConversationKeeping<PiSessionOptions> = {
  folder: (options, env, cwd) => {
    if (options.session === 'none') return { refused: "pi keeps no conversation with session: 'none'" };
    if (options.sessionDir !== undefined) return options.sessionDir;
    return join(agentDir(env), 'sessions', `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`);
  },
  holds: (path, sessionId) => !path.includes('/') && path.endsWith(`_${sessionId}.jsonl`),
  resume: (options, sessionId) => ({ ...options, session: { id: sessionId } }),
};

function agentDir(env: Readonly<Record<string, string | undefined>>): string {
  const home = env['HOME'] ?? '';
  const configured = env['PI_CODING_AGENT_DIR'];
  if (configured === undefined || configured === '') return join(home, '.pi', 'agent');
  if (configured === '~') return home;
  return configured.startsWith('~/') ? join(home, configured.slice(2)) : configured;
}

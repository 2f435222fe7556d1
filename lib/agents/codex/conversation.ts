import { join } from 'node:path';
import type { ConversationKeeping } from '../definition.js';
import type { CodexSessionOptions } from './options.js';

/**
 * Where Codex keeps a thread: its rollout, `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`
 * (`CODEX_HOME`, else `~/.codex`, `~` being the process's `HOME`, which the library always gives),
 * whatever the working folder. `thread/resume` resumes it. An `ephemeral` session keeps nothing.
 */
export const codexConversation: ConversationKeeping<CodexSessionOptions> = {
  folder: (options, env) => {
    if (options.ephemeral === true) return { refused: 'Codex keeps no thread with ephemeral: true' };
    const home = env['CODEX_HOME'];
    return join(home === undefined || home === '' ? join(env['HOME'] ?? '', '.codex') : home, 'sessions');
  },
  holds: (path, sessionId) => /^\d{4}\/\d{2}\/\d{2}\/rollout-[^/]+\.jsonl$/.test(path) && path.endsWith(`-${sessionId}.jsonl`),
  resume: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};

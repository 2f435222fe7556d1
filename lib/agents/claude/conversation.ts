import { join } from 'node:path';
import type { ConversationKeeping } from '../definition.js';
import type { ClaudeCodeSessionOptions } from './options.js';

/** The longest project folder name Claude Code uses as it is; a longer one is cut and given a hash. */
const LONGEST_PROJECT_NAME = 200;

/**
 * Where Claude Code keeps a session's conversation: `<config>/projects/<project>/<id>.jsonl`, and
 * the folder `<id>/` beside it where it has one (large tool results, sub-agents). `<config>` is
 * `CLAUDE_CONFIG_DIR`, else `~/.claude` (`~` being the process's `HOME`, which the library always gives); `<project>` is
 * `CLAUDE_CODE_PROJECT_DIR_NAME` where set, else the working folder with every character but
 * ASCII letters and digits made a dash (over 200 characters: the first 200, a dash and a hash of
 * the path). `--resume <id>` resumes it.
 */
export const claudeConversation: ConversationKeeping<ClaudeCodeSessionOptions> = {
  folder: (_options, env, cwd) => {
    const config = nonEmpty(env['CLAUDE_CONFIG_DIR']) ?? join(env['HOME'] ?? '', '.claude');
    return join(config, 'projects', nonEmpty(env['CLAUDE_CODE_PROJECT_DIR_NAME']) ?? claudeProjectName(cwd));
  },
  holds: (path, sessionId) => path === `${sessionId}.jsonl` || path.startsWith(`${sessionId}/`),
  resume: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};

/** The name of Claude Code's folder for the conversations of a working folder. */
export function claudeProjectName(cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= LONGEST_PROJECT_NAME) return name;
  return `${name.slice(0, LONGEST_PROJECT_NAME)}-${Math.abs(stringHash(cwd)).toString(36)}`;
}

/** The 32-bit string hash (`h * 31 + code unit`) Claude Code gives long project names. */
function stringHash(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index += 1) hash = (Math.imul(hash, 31) + text.charCodeAt(index)) | 0;
  return hash;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

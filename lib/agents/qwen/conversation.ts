import { isAbsolute, join, resolve } from 'node:path';
import type { ConversationKeeping } from '../definition.js';
import type { QwenSessionOptions } from './options.js';

/**
 * Where Qwen Code keeps a session's conversation: `<runtime>/projects/<project>/chats/<id>.jsonl`,
 * with the files it keeps beside it for that session (`<id>.ledger.jsonl`, `<id>.worktree.json`,
 * …). `<runtime>` is `QWEN_RUNTIME_DIR` (relative to the working folder), else its configuration
 * folder: `QWEN_HOME`, else `~/.qwen` (`~` being the process's `HOME`, which the library always
 * gives); a `runtimeOutputDir` in the user's settings is not read. `<project>` is the working
 * folder with every character but ASCII letters and digits made a dash, whatever its length.
 * ACP's `session/load` resumes it (`session: { resume }`).
 */
export const qwenConversation: ConversationKeeping<QwenSessionOptions> = {
  folder: (_options, env, cwd) => join(runtimeDir(env, cwd), 'projects', qwenProjectName(cwd)),
  holds: (path, sessionId) => path.startsWith(`chats/${sessionId}.`) && !path.slice('chats/'.length).includes('/'),
  resume: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};

/** The name of Qwen Code's folder for a working folder's sessions: `/srv/my.app` → `-srv-my-app` (on Windows, of the lower-cased path). */
function qwenProjectName(cwd: string): string {
  return (process.platform === 'win32' ? cwd.toLowerCase() : cwd).replace(/[^a-zA-Z0-9]/g, '-');
}

/** Qwen Code's folder of runtime output (sessions among it) for a process's environment and working folder. */
function runtimeDir(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  const home = env['HOME'] ?? '';
  const expand = (dir: string): string => (dir === '~' ? home : dir.startsWith('~/') || dir.startsWith('~\\') ? join(home, dir.slice(2)) : dir);
  const runtime = env['QWEN_RUNTIME_DIR'];
  if (runtime !== undefined && runtime !== '') {
    const dir = expand(runtime);
    return isAbsolute(dir) ? dir : resolve(cwd, dir);
  }
  const configured = env['QWEN_HOME'];
  // A relative QWEN_HOME is the host's (the session's configuration folder is made from it here).
  return configured === undefined || configured === '' ? join(home, '.qwen') : resolve(expand(configured));
}

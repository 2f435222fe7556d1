import type { AgentName } from '../../lib/index.js';
import { DEFAULT_TRANSCRIPTS } from '../../examples/web/options.js';

/** What the default replay of an agent shows: its describe line, its answer, its tool card, its tokens. */
export interface ReplayExpectation {
  readonly agent: AgentName;
  readonly describe: string;
  /** The answer's text blocks: before the tool call, and after it. */
  readonly texts: readonly string[];
  readonly tool: { readonly name: string; readonly command: string; readonly summary: string; readonly output: string };
  readonly totalTokens: number;
}

const CODEX_ANSWER = 'The command ran. Tool output was: "Chunk ID: e86236\\nWall time: 0.1109 seconds\\nProcess exited with code 0\\nOriginal token count: 2\\nOutput:\\nhello\\n"';

const GEMINI_ANSWER =
  'The command ran. Tool output was: "[{\\"output\\":\\"<untrusted_context>\\\\nOutput: hello\\\\nProcess Group PGID: 31468\\\\n</untrusted_context>\\"}]"';

/** The recorded Claude Code, Codex and Gemini CLI runs that the web example replays by default. */
export const OTHER_AGENT_REPLAYS: readonly ReplayExpectation[] = [
  {
    agent: 'claude',
    describe: `replay of a recorded Claude Code run: ${DEFAULT_TRANSCRIPTS.claude} (offline; --real runs Claude Code)`,
    texts: ['I will run a command.', 'The command printed: hello'],
    tool: { name: 'Bash', command: 'echo hello', summary: 'echo hello', output: 'hello' },
    totalTokens: 96,
  },
  {
    agent: 'codex',
    describe: `replay of a recorded Codex run: ${DEFAULT_TRANSCRIPTS.codex} (offline; --real runs Codex)`,
    texts: ['I will run `echo hello`.', CODEX_ANSWER],
    tool: { name: 'command_execution', command: "/bin/bash -lc 'echo hello'", summary: 'echo hello', output: 'hello\n' },
    totalTokens: 167,
  },
  {
    agent: 'gemini',
    describe: `replay of a recorded Gemini CLI run: ${DEFAULT_TRANSCRIPTS.gemini} (offline; --real runs Gemini CLI)`,
    texts: ['I will run `echo hello`.', GEMINI_ANSWER],
    tool: { name: 'run_shell_command', command: 'echo hello', summary: 'echo hello', output: 'hello' },
    totalTokens: 167,
  },
];

// Reading an agent's stderr for the message of a failed exit.

/** The most of stderr a failure's message quotes. */
const MAX_QUOTED = 500;

/** Stderr's lines, trimmed, without blank ones and without those `noise` matches (what the agent prints in every run). */
export function meaningfulLines(stderr: string, noise: readonly RegExp[]): string[] {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !noise.some((pattern) => pattern.test(line)));
}

/** `text` cut to what a message quotes; `undefined` stays so. */
export function quoted(text: string | undefined): string | undefined {
  return text === undefined || text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}…`;
}

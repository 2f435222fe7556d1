// Reading an agent's stderr for the message of a failed exit: which lines say what went wrong.

/** The most of stderr a failure's message quotes. */
const MAX_QUOTED = 500;

/**
 * Lines that explain no failure, whatever the agent: stack frames, what Node prints around an
 * uncaught error or a warning, a bare link or path (an agent's pointer to its docs), and "see …"
 * hints. An agent's own routine lines are its dialect's to add.
 */
const GENERIC_NOISE: readonly RegExp[] = [
  /^at\s/,
  /^Node\.js v\d/,
  /^\(node:\d+\)\s/,
  /^\(Use `node --trace-/,
  /^(?:[a-z][\w+.-]*:\/\/|~?\/|\.{1,2}\/)\S*$/i,
  /^(?:see|for more (?:information|details)|more info(?:rmation)?)\b/i,
];

/**
 * Stderr's lines, trimmed, without blank ones, the generic noise, and those `noise` matches (what
 * the agent prints in runs that go well). Node's excerpt of the source line that threw (the line
 * above its `^` marker) goes too.
 */
export function meaningfulLines(stderr: string, noise: readonly RegExp[] = []): string[] {
  const lines = stderr.split('\n').map((line) => line.trim());
  const kept: string[] = [];
  lines.forEach((line, i) => {
    if (line === '' || /^\^+$/.test(line) || /^\^+$/.test(lines[i + 1] ?? '')) return;
    if (GENERIC_NOISE.some((pattern) => pattern.test(line)) || noise.some((pattern) => pattern.test(line))) return;
    kept.push(line);
  });
  return kept;
}

/**
 * The first line of stderr that says something (see {@link meaningfulLines}), cut to what a
 * message quotes: an agent says what is wrong first, then how to fix it and where to read more.
 */
export function firstMeaningfulLine(stderr: string, noise: readonly RegExp[] = []): string | undefined {
  return quoted(meaningfulLines(stderr, noise)[0]);
}

/** `text` cut to what a message quotes; `undefined` stays so. */
export function quoted(text: string | undefined): string | undefined {
  return text === undefined || text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}…`;
}

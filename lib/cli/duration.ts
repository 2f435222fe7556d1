const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration from the command line, in ms: a bare number is ms (`1500`), or a number with a unit
 * `ms`, `s`, `m` or `h` (`500ms`, `90s`, `1.5m`, `2h`). `null` for anything else, a sign included.
 */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return null;
  const [, amount = '', unit = 'ms'] = match;
  const ms = Math.round(Number(amount) * (UNITS[unit] ?? 1));
  return Number.isFinite(ms) ? ms : null;
}

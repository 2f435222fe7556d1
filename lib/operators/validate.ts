// Argument checks shared by the operator factories: bad arguments are programmer errors and throw
// a `TypeError` when the factory is called, before anything is subscribed.

/** A non-null object (arrays and functions aside). */
export function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a property of an object whose shape is not known yet. */
export function property(value: object, key: string): unknown {
  return (value as Readonly<Record<string, unknown>>)[key];
}

/** Throws `TypeError('agent-rx: …')` unless `value` is a function. */
export function checkFunction(value: unknown, name: string): void {
  if (typeof value !== 'function') throw new TypeError(`agent-rx: ${name} must be a function; got ${shown(value)}`);
}

/** Throws unless `value` is an integer >= `min`. */
export function checkInteger(value: unknown, name: string, min: number): void {
  if (!Number.isInteger(value) || (value as number) < min) throw new TypeError(`agent-rx: ${name} must be an integer >= ${min}; got ${shown(value)}`);
}

/** A value as an error message shows it. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

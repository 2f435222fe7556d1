import type { TomlValue } from './options.js';

/**
 * The `key=value` settings for Codex's `-c`, values written as TOML. A plain object at the top is
 * flattened into dotted keys (Codex sets one value per `-c`); objects inside arrays become inline
 * tables. A value TOML cannot hold (a non-finite number, `undefined`, a function, a cycle) throws
 * `TypeError`: it is the caller's mistake, found before anything runs.
 */
export function configEntries(config: { readonly [key: string]: TomlValue }, path = 'config', seen = new Set<object>()): string[] {
  if (!isPlainObject(config)) throw new TypeError(`agent-rx: ${path} must be an object of TOML values`);
  if (seen.has(config)) throw new TypeError(`agent-rx: ${path} refers to itself`);
  seen.add(config);
  const entries: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    // Codex splits a setting at its first `=` and its key at each `.`.
    if (key === '' || key.startsWith('.') || key.endsWith('.') || key.includes('..') || key.includes('=')) {
      throw new TypeError(`agent-rx: ${path} has an invalid key ${JSON.stringify(key)}`);
    }
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const nested of configEntries(value, `${path}.${key}`, seen)) entries.push(`${key}.${nested}`);
    } else {
      entries.push(`${key}=${tomlValue(value, `${path}.${key}`, new Set())}`);
    }
  }
  seen.delete(config);
  return entries;
}

/** The arguments for one setting: `['-c', 'key=value']`. */
export function configFlag(key: string, value: TomlValue): string[] {
  return ['-c', `${key}=${tomlValue(value, key, new Set())}`];
}

/** One value in TOML's syntax. */
export function tomlValue(value: unknown, path: string, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return tomlString(value);
    case 'boolean':
      return String(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`agent-rx: ${path} must be a finite number, got ${String(value)}`);
      if (!Number.isInteger(value)) return String(value);
      // A whole number past what a double holds exactly is written as a float (TOML integers are
      // 64-bit and have no exponent).
      return Math.abs(value) <= Number.MAX_SAFE_INTEGER ? value.toFixed(0) : value.toExponential();
    case 'object': {
      if (value === null) break;
      if (seen.has(value)) throw new TypeError(`agent-rx: ${path} refers to itself`);
      seen.add(value);
      try {
        if (Array.isArray(value)) return `[${value.map((item, i) => tomlValue(item, `${path}[${String(i)}]`, seen)).join(', ')}]`;
        if (isPlainObject(value)) {
          const entries = Object.entries(value).map(([key, item]) => `${tomlKey(key)} = ${tomlValue(item, `${path}.${key}`, seen)}`);
          return `{${entries.join(', ')}}`;
        }
      } finally {
        seen.delete(value);
      }
      break;
    }
    default:
      break;
  }
  throw new TypeError(`agent-rx: ${path} must be a string, a number, a boolean, an array or a plain object; got ${value === null ? 'null' : typeof value}`);
}

// A TOML basic string: JSON's escapes are TOML's, except that TOML also forbids a raw DEL and
// cannot hold a lone surrogate (which no argument can carry either: it becomes U+FFFD).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function tomlString(text: string): string {
  return JSON.stringify(text.replace(LONE_SURROGATE, '\uFFFD')).replace(/\u007f/g, '\\u007F');
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

function isPlainObject(value: unknown): value is { readonly [key: string]: TomlValue } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

import type { AgentEvent } from '../../operators/items.js';

/**
 * A typed narrowing function for one agent's events. Events of a known type arrive validated by
 * the dialect's schemas (`parseJsonLine` turns an invalid one into an invalid item), so a matching
 * `type` is proof of the shape; unknown types pass through as plain objects and are ignored.
 *
 * @example
 * const known = narrowEvents<PiEvent>();
 * const header = known(event, 'session'); // PiEventOf<'session'> | null
 */
export function narrowEvents<U extends { readonly type: string }>(): <T extends U['type']>(event: AgentEvent, type: T) => Extract<U, { type: T }> | null {
  return (event, type) => (event.type === type ? (event as unknown as Extract<U, { type: typeof type }>) : null);
}

/** A property of a value of unknown shape. */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Readonly<Record<string, unknown>>)[key] : undefined;
}

/** The value when it is a string. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The value when it is a number. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

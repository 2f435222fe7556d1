import type { AgentWarning } from '../messages.js';
import type { MessageMapping } from './dialect.js';
import type { AgentEvent } from './items.js';

/**
 * A dialect's `unknownType` from the types it knows: an event's type (by default its `type`; `typeOf`
 * may name a finer one, or `undefined` for an event that is not to be checked) is unknown when it
 * is not among `known`. `known` lists what the dialect reads and what the agent sends that it
 * leaves aside on purpose.
 *
 * @example
 * const unknownType = knownTypes(['session', 'agent_start', 'agent_end']);
 * unknownType({ type: 'agent_start' }); // undefined
 * unknownType({ type: 'agent_paused' }); // 'agent_paused'
 */
export function knownTypes<E extends AgentEvent = AgentEvent>(known: Iterable<string>, typeOf: (event: E) => string | undefined = (event) => event.type): (event: E) => string | undefined {
  const types = new Set(known);
  return (event) => {
    const type = typeOf(event);
    return type === undefined || types.has(type) ? undefined : type;
  };
}

/** The warning for an event of a type the agent's dialect does not know. */
export function unknownTypeWarning(agent: string, type: string): AgentWarning {
  return { type: 'agent.warning', message: `${agent} sent an event of unknown type ${JSON.stringify(type)}; it was ignored` };
}

/**
 * The event types of one run (or one session) that its dialect did not know: `see` gives the warning
 * for the first event of each such type, and nothing for the others. Make one per subscription.
 */
export class UnknownTypes<E extends AgentEvent = AgentEvent> {
  readonly #mapping: Pick<MessageMapping<never, E>, 'name' | 'unknownType'>;
  readonly #seen = new Set<string>();

  constructor(mapping: Pick<MessageMapping<never, E>, 'name' | 'unknownType'>) {
    this.#mapping = mapping;
  }

  /** The warning for `event` when its type is unknown and was not said yet in this run, else `undefined`. */
  see(event: E): AgentWarning | undefined {
    const type = this.#mapping.unknownType?.(event);
    if (type === undefined || this.#seen.has(type)) return undefined;
    this.#seen.add(type);
    return unknownTypeWarning(this.#mapping.name, type);
  }
}

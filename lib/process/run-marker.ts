import { randomBytes } from 'node:crypto';

/**
 * Environment variable that marks every process of a run: each descendant inherits it, so one
 * that moved to its own session (or whose parent exited) is still found in `/proc/<pid>/environ`.
 * Its value is a chain of tokens `[<host>.<run>]`: a run started inside another run's process
 * (agent-rx used from an agent's tool) appends its token, so both hosts still find it.
 */
export const RUN_MARKER_ENV = 'AGENT_RX_RUN_ID';

let host: string | undefined;
let runs = 0;

/** This host's id: random, made on first use. Every token of its runs starts with `[<id>.`. */
export function hostId(): string {
  host ??= randomBytes(8).toString('hex');
  return host;
}

/** What every process of every run of this host carries in its environment. */
export function hostToken(): string {
  return `[${hostId()}.`;
}

export interface RunMarker {
  /** The value to give `RUN_MARKER_ENV`: the inherited chain, then this run's token. */
  readonly value: string;
  /** This run's token, unique on the machine: found in an environment, it means "of this run". */
  readonly token: string;
}

/** A new run's marker; `inherited` is the value the run would otherwise inherit. */
export function newRunMarker(inherited: string | undefined): RunMarker {
  runs += 1;
  const token = `${hostToken()}${runs}]`;
  return { value: `${inherited ?? ''}${token}`, token };
}

/** One row of the process table. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** Start time in clock ticks since boot (Linux); `''` where the platform does not say. */
  readonly startTime: string;
  readonly zombie: boolean;
  /** The process carries the run marker in its environment (Linux only). */
  readonly marked: boolean;
}

export interface ProcessTable {
  readonly entries: readonly ProcessEntry[];
  /** Why the table is empty or partial (no /proc and no `ps`), for diagnostics. */
  readonly error: string | null;
}

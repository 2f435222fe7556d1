export { processLines } from './sources/process-lines.js';
export { stopAllRuns, activeRunCount } from './process/run-registry.js';
export { RUN_MARKER_ENV } from './process/spawn-run.js';
export type { ProcessItem, ProcessLine, ProcessOverlongLine, ProcessExit, SpawnFailure } from './process/items.js';
export type { ProcessOptions, InterruptOptions, StopReport } from './process/options.js';

/**
 * `agent-rx/fleet`: runs dispatched to a fleet of worker machines through BullMQ on Redis, and
 * streamed back as the same Observable: {@link createRunDispatcher} on the caller's side,
 * {@link serveRuns} on each worker. Needs the optional peers `bullmq` and `ioredis`; nothing of it
 * is loaded by `agent-rx` itself.
 *
 * @module agent-rx/fleet
 */

// Caller side
export { createRunDispatcher, type DispatchOptions, type RunDispatcher, type RunDispatcherOptions, type RunEntry } from './fleet/dispatcher.js';
export { fleetFailure } from './fleet/failure.js';

// Worker side
export { serveRuns, type RunServer, type ServeRunsOptions, type WorkerRunEvent, type WorkerSessionEvent } from './fleet/worker.js';
export { SESSION_ENV } from './fleet/worker-session.js';
export { WORKER_ENV, type WorkerAgents } from './fleet/worker-agents.js';
export type { WorkerStopReason } from './fleet/stop-reason.js';

// Where a worker's runs may work
export { allowWorkingDirectories, workerFolderOnly } from './fleet/cwd.js';

// A run as data
export { toRunSpec, type DispatchSpec, type AgentDispatchSpec, type DispatchRunOptions } from './fleet/dispatch-spec.js';
export { RunSpecSchema, checkRunSpec, FLEET_PERMISSIONS, TraceContextSchema, type RunSpec, type AgentRunSpec, type RunSpecOptions, type FleetPermission, type TraceContext } from './fleet/run-spec.js';
export type { RunTracing, WorkerRunTrace } from './fleet/run-tracing.js';

// A session as data, and its log's entries
export { SessionSpecSchema, checkSessionSpec, FLEET_SESSION_IDLE_MS, type SessionSpec, type AgentSessionSpec, type SessionSpecOptions } from './fleet/session-spec.js';
export type { SessionEntry } from './fleet/session-attach.js';
export { sessionKeys, type SessionKeys } from './fleet/session-keys.js';

// Where Redis is, and the keys of a run
export { redisOptions, runKeys, type FleetConnection, type FleetOptions, type RunKeys } from './fleet/redis.js';

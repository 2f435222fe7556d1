import { fleetFailure } from './failure.js';
import { judgeLiveness, UNKNOWN_RUN_GRACE_MS, type LivenessLook } from './liveness.js';
import type { Queue } from './peers.js';
import { append, type FleetRedis } from './redis.js';
import type { Follower } from './run-reader.js';

/** What a liveness check looks at and writes to. */
export interface LivenessSources {
  readonly redis: FleetRedis;
  readonly queue: Pick<Queue, 'remove' | 'getJobState'>;
  readonly startTimeoutMs: number | undefined;
}

// Looks at a quiet follower's run in the steps `judgeLiveness` asks for, and carries out its verdict.
export async function checkLiveness(follower: Follower, now: number, sources: LivenessSources): Promise<void> {
  const { redis, queue } = sources;
  const { keys, runId } = follower;
  follower.checkedAt = now;
  const [owner, heartbeat, end] = await redis.mget(keys.owner, keys.heartbeat, keys.end);
  let look: LivenessLook = {
    runId,
    own: follower.own,
    after: follower.after,
    waitedMs: follower.enqueuedAt === null ? null : now - follower.enqueuedAt,
    readingMs: now - follower.joinedAt,
    startTimeoutMs: sources.startTimeoutMs,
    unknownRunGraceMs: UNKNOWN_RUN_GRACE_MS,
    owner: owner ?? null,
    heartbeat: heartbeat ?? null,
    end: end ?? null,
  };
  for (;;) {
    const step = judgeLiveness(look);
    switch (step.type) {
      case 'wait':
        return;
      case 'over':
        follower.over();
        return;
      case 'writeLost':
        await append(redis, keys, fleetFailure('lost', step.why), true);
        return;
      case 'removeThenWriteLost':
        if ((await queue.remove(runId)) === 1) {
          await append(redis, keys, fleetFailure('lost', step.why), true);
          return;
        }
        look = { ...look, removed: false };
        break;
      case 'endReaderLost':
        follower.lost(fleetFailure('lost', step.why));
        return;
      case 'readJobState':
        look = { ...look, jobState: await queue.getJobState(runId) };
        break;
      case 'readAgain': {
        const [ownerNow, endNow, stream] = await Promise.all([redis.get(keys.owner), redis.get(keys.end), redis.exists(keys.stream)]);
        look = { ...look, again: { owner: ownerNow, end: endNow, stream: stream === 1 } };
        break;
      }
    }
  }
}

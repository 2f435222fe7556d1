import { afterAll, beforeAll } from '@jest/globals';
import { stopAllRuns } from '../../lib/index.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createPiEnv, type PiEnv } from './pi-env.js';

/** What a spec file runs the real pi against: the fake model server and an isolated pi configuration. */
export interface PiWorld {
  readonly server: FakeModelServer;
  readonly env: PiEnv;
}

/**
 * Starts the fake model server and a pi configuration before the file's tests, and stops every run
 * and removes both after them. Read the fields inside tests (they are set in `beforeAll`).
 */
export function piWorld(): PiWorld {
  const world: { server?: FakeModelServer; env?: PiEnv } = {};
  beforeAll(async () => {
    world.server = await startFakeModelServer();
    world.env = await createPiEnv({ baseUrl: world.server.baseUrl });
  });
  afterAll(async () => {
    await stopAllRuns();
    await world.server?.close();
    await world.env?.cleanup();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('piWorld is read before its beforeAll ran');
    return value;
  };
  return {
    get server() {
      return ready(world.server);
    },
    get env() {
      return ready(world.env);
    },
  };
}

// The web example's session mode on a fleet, in a real Chromium: the conversation is a fleet
// session whose agent (the real pi, against the fake model server's `recall` scenario, which
// answers with the user texts in its context) runs on a worker. It survives a page reload (the tab
// keeps its id and shows the conversation again) and the worker's crash (another worker, with
// another home and working folder, wakes it from the snapshot in Redis).
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';
import { fleetWorld, type TestWorker } from '../fleet/fleet-world.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';
import { startDroppingProxy, type DroppingProxy } from './dropping-proxy.js';

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const world = fleetWorld();
let model: FakeModelServer | undefined;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const homes: PiEnv[] = [];
const servers: WebServer[] = [];
const proxies: DroppingProxy[] = [];
let logs: string[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const server of servers.splice(0)) await server.close();
  logs = [];
});

afterAll(async () => {
  await context?.close();
  await model?.close();
  for (const home of homes.splice(0)) await home.cleanup();
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true });
}, 30_000);

/** A worker running the real pi with its own home and working folder. */
async function piWorker(name: string): Promise<TestWorker> {
  if (model === undefined) throw new Error('the model server did not start');
  const env = await createPiEnv({ baseUrl: model.baseUrl });
  homes.push(env);
  const folder = join(env.root, 'the work of', name);
  mkdirSync(folder, { recursive: true });
  return world.startWorker(name, { concurrency: 2, workFolder: folder, pi: { executable: PI, provider: OPENAI_PROVIDER, model: 'recall', env: env.env } });
}

// The page, behind a proxy that can cut its streams.
async function openPage(server: WebServer): Promise<{ page: Page; proxy: DroppingProxy }> {
  if (context === undefined) throw new Error('the browser did not start');
  const proxy = await startDroppingProxy(server.url);
  proxies.push(proxy);
  const page = await context.newPage();
  await page.goto(proxy.url);
  return { page, proxy };
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#prompt', text);
  await page.click('#run');
}

/** The session id the tab keeps (the page's sessionStorage). */
interface TabStorage {
  readonly sessionStorage: { getItem(key: string): string | null };
}
const keptId = (page: Page): Promise<string | null> => page.evaluate(() => (globalThis as unknown as TabStorage).sessionStorage.getItem('agent-rx.web.session'));

describe('the web example’s session mode on a fleet, in Chromium', () => {
  it('a conversation survives a page reload, a cut stream and its worker’s crash: the page shows it again, nothing twice, and the next answer knows the earlier prompt', async () => {
    const first = await piWorker('web-session-a');
    const server = await startWebServer({ agent: { kind: 'real', agent: 'pi' }, session: true, sessionIdleMs: 1500, fleet: { connection: world.redis().url }, log: (line) => logs.push(line) });
    servers.push(server);
    const { page, proxy } = await openPage(server);
    expect(await page.getAttribute('#app', 'data-fleet')).toBe('session');

    await send(page, 'first question');
    await page.locator('.run[data-state="completed"]').waitFor({ timeout: 90_000 });
    expect(await page.locator('.run .assistant').allTextContents()).toEqual([expect.stringContaining('User texts in context: 1 ("first question")')]);
    const id = await keptId(page);
    expect(id).toMatch(/^[\w.-]+$/);

    // A reload: the same conversation, shown again from its log; no second activation for it.
    await page.reload();
    await page.locator('.run[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.run .prompt').allTextContents()).toEqual(['first question']);
    expect(await page.locator('.run .assistant').allTextContents()).toEqual([expect.stringContaining('User texts in context: 1 ("first question")')]);
    expect(await keptId(page)).toBe(id);
    expect(logs).toContain(`session ${String(id)}: opened again, from its start`);

    // The stream is cut: the browser reconnects with its last event id, and the server resumes after it.
    expect(proxy.dropStreams()).toBe(1);
    // The worker crashes; another one, with another home and working folder, takes the next prompt.
    first.kill();
    const second = await piWorker('web-session-b');
    await send(page, 'second question');
    await page.locator('.run[data-state="completed"]').nth(1).waitFor({ timeout: 90_000 });
    const answers = await page.locator('.run .assistant').allTextContents();
    expect(answers).toHaveLength(2);
    expect(answers[1]).toContain('User texts in context: 2 ("first question" | "second question")');
    expect(await page.locator('.run .outcome').nth(1).textContent()).toMatch(/Completed/);
    expect(second.lines().some((line) => line.event === 'session.activated')).toBe(true);
    expect(logs.filter((line) => line.startsWith(`session ${String(id)}: resumed after entry `))).toHaveLength(1);
    expect(await page.locator('.run .prompt').allTextContents()).toEqual(['first question', 'second question']);
    expect(await keptId(page)).toBe(id);

    // End session lets the conversation go: the tab forgets its id.
    await page.click('#end-session');
    await page.locator('.session-end').waitFor();
    expect(await keptId(page)).toBeNull();
    await page.close();
  }, 240_000);
});

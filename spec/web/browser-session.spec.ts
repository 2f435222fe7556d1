import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { scenarioMarker } from '../conformance/fake-model-server.js';
import { imagesInRequest, testPng } from '../conformance/scenarios.js';
import { piSessionProtocol } from '../../lib/agents/pi/session.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { isAlive } from '../helpers/processes.js';
import { piAgentsOfThisProcess, treeOf, waitUntil } from './agent-processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';

/** The web example's session mode in Chromium: the real pi against the fake model server (127.0.0.1), one process per session. */

const ARTIFACTS = fileURLToPath(new URL('../../.artifacts/web/after/', import.meta.url));
const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const SLEEP = `${scenarioMarker('sleep_tool')}sleep`;
const world = piWorld();
let server: WebServer | undefined;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const pages: Page[] = [];

beforeAll(async () => {
  server = await startWebServer({
    agent: { kind: 'real', agent: 'pi', executable: PI, options: { provider: OPENAI_PROVIDER }, model: 'recall', env: world.env.env, cwd: world.env.cwd },
    session: true,
    log: () => undefined,
  });
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true });
  expect(await piAgentsOfThisProcess()).toEqual([]);
}, 30_000);

async function openPage(): Promise<Page> {
  if (context === undefined || server === undefined) throw new Error('the server or the browser did not start');
  const page = await context.newPage();
  pages.push(page);
  await page.goto(server.url);
  return page;
}

// A test that failed half-way leaves its tab open: closed here, its session's process goes with it.
afterEach(async () => {
  for (const page of pages.splice(0)) if (!page.isClosed()) await page.close();
  await waitUntil(async () => (await piAgentsOfThisProcess()).length === 0, 'the sessions of the test to end');
});

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  process.stdout.write(`screenshot: ${path}\n`);
}

// Types a prompt and sends it with Enter.
async function say(page: Page, prompt: string): Promise<void> {
  await page.fill('#prompt', prompt);
  await page.press('#prompt', 'Enter');
}

// The one pi process of this test's session (every other test has ended its own).
async function sessionPid(): Promise<number> {
  let pids: number[] = [];
  await waitUntil(async () => (pids = await piAgentsOfThisProcess()).length > 0, 'the session agent process');
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

const turns = (page: Page) => page.locator('#transcript .run');

describe('the web example in session mode, in Chromium', () => {
  it('says it is one session, and answers two turns in the same agent process, which remembers the first', async () => {
    const page = await openPage();
    expect(await page.getAttribute('#app', 'data-mode')).toBe('session');
    expect(await page.textContent('#mode-banner')).toContain('one session: the agent remembers the conversation');
    expect(await page.isVisible('#end-session')).toBe(true);
    expect(await page.isDisabled('#end-session')).toBe(true); // no session yet
    expect(await piAgentsOfThisProcess()).toEqual([]); // the first prompt starts it
    await screenshot(page, 'session-idle.png');
    await say(page, 'first');
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    expect(await turns(page).nth(0).locator('.assistant').textContent()).toBe('User texts in context: 1 ("first").');
    expect(await page.textContent('#status')).toBe('✓ Turn 1 completed');
    expect(await page.isEnabled('#end-session')).toBe(true);
    await say(page, 'second');
    await turns(page).nth(1).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await turns(page).nth(1).locator('.prompt').textContent()).toBe('second');
    expect(await turns(page).nth(1).locator('.assistant').textContent()).toBe('User texts in context: 2 ("first" | "second").');
    expect(await turns(page).nth(1).locator('.outcome-title').textContent()).toMatch(/^✓ Completed · \d+ tokens · \d+\.\d s$/);
    expect(await page.textContent('.session-line')).toMatch(/^session \S+ · one agent process for the conversation$/);
    expect(await piAgentsOfThisProcess()).toEqual([pid]); // the same process answered both
    await screenshot(page, 'session-two-turns.png');
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it('aborts the running turn on Stop, keeps the process, and answers the next prompt in it', async () => {
    const page = await openPage();
    await say(page, SLEEP);
    const tool = turns(page).nth(0).locator('.tool');
    await tool.waitFor({ timeout: 30_000 });
    expect(await tool.getAttribute('data-state')).toBe('running');
    expect(await page.textContent('#run')).toBe('Follow up'); // Enter now queues the next turn
    const pid = await sessionPid();
    await screenshot(page, 'session-turn-running.png');
    await page.click('#stop');
    const first = turns(page).nth(0);
    await first.locator('.outcome[data-state="stopped"]').waitFor({ timeout: 30_000 });
    expect(await first.getAttribute('data-state')).toBe('stopped');
    expect(await first.locator('.outcome-title').textContent()).toMatch(/^■ Aborted · \d+\.\d s$/);
    expect(await first.locator('.outcome-message').textContent()).toBe('Stop aborted this turn; the agent process stays for the next prompt.');
    // pi ends its bash tool's process group on abort, and reports the killed command as failed.
    expect(await tool.getAttribute('data-state')).toBe('failed');
    expect(await page.textContent('#status')).toBe('■ Turn 1 aborted · the agent process stays');
    expect(isAlive(pid)).toBe(true);
    await screenshot(page, 'session-aborted.png');
    await say(page, 'after the stop');
    const second = turns(page).nth(1);
    await second.locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await second.locator('.assistant').textContent()).toMatch(/^User texts in context: \d+ \(.*"after the stop"\)\.$/);
    expect(await piAgentsOfThisProcess()).toEqual([pid]);
    await screenshot(page, 'session-after-abort.png');
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it('queues a prompt sent while a turn runs as a follow-up, the next turn', async () => {
    const page = await openPage();
    await say(page, `${scenarioMarker('slow_text')}slow`);
    await turns(page).nth(0).locator('.assistant').waitFor({ timeout: 30_000 });
    await say(page, 'next');
    const second = turns(page).nth(1);
    expect(await second.getAttribute('data-state')).toBe('queued');
    expect(await second.locator('.turn-note').textContent()).toMatch(/^queued/);
    await second.locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await turns(page).nth(0).locator('.outcome').getAttribute('data-state')).toBe('completed');
    expect(await second.locator('.turn-note').textContent()).toBe('turn 2');
    expect(await second.locator('.assistant').textContent()).toBe('User texts in context: 2 ("slow" | "next").');
    await screenshot(page, 'session-follow-up.png');
    const pid = await sessionPid();
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it('ends the agent process on End session, and shows the session ended', async () => {
    const page = await openPage();
    await say(page, 'hello');
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    await page.click('#end-session');
    const end = page.locator('.session-end');
    await end.waitFor({ timeout: 30_000 });
    expect(await end.getAttribute('data-state')).toBe('ended');
    expect(await end.locator('.session-end-title').textContent()).toMatch(/^■ Session ended · \d+ tokens in all$/);
    expect(await page.textContent('#status')).toBe('■ Session ended');
    await waitUntil(() => !isAlive(pid), `pid ${pid} to exit`);
    expect(await page.isDisabled('#end-session')).toBe(true);
    await screenshot(page, 'session-ended.png');
    // The next prompt opens a new session: a new process, which remembers nothing.
    await say(page, 'anew');
    await turns(page).nth(1).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await turns(page).nth(1).locator('.assistant').textContent()).toBe('User texts in context: 1 ("anew").');
    const next = await sessionPid();
    expect(next).not.toBe(pid);
    await page.close();
    await waitUntil(() => !isAlive(next), `pid ${next} to be gone`);
  }, 90_000);

  it('stops the agent and its process tree when the tab is closed mid-turn', async () => {
    const page = await openPage();
    await say(page, SLEEP);
    await turns(page).nth(0).locator('.tool').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    let tree: number[] = [];
    await waitUntil(async () => (tree = await treeOf(pid)).length > 1, 'the sleep tool under pi');
    await page.close();
    await waitUntil(() => tree.every((member) => !isAlive(member)), `pid ${pid} and its tools to be gone`);
  }, 90_000);
});

// pi takes images once its session protocol says so (`prompts.image`; a run with an image is a
// one-prompt session). Until then these tests check what the page sends, and that pi's refusal is
// shown (a run: failed, setup; a turn: not run, unsupported); once it does, that the very bytes
// reach the model.
const piTakesImages = piSessionProtocol().prompts?.image === true;
const png = testPng();
const PIXEL = { name: 'pixel.png', mimeType: 'image/png', buffer: Buffer.from(png.bytes) };
const modelRequestsSince = (from: number) => world.server.requests.slice(from).filter((request) => request.method === 'POST');

describe('an image attached on the page, in Chromium (the real pi)', () => {
  let runServer: WebServer | undefined;

  beforeAll(async () => {
    runServer = await startWebServer({
      agent: { kind: 'real', agent: 'pi', executable: PI, options: { provider: OPENAI_PROVIDER }, model: 'recall', env: world.env.env, cwd: world.env.cwd },
      log: () => undefined,
    });
  }, 30_000);

  afterAll(async () => {
    await runServer?.close();
  });

  it(`a session's prompt carries it as base64 data with its type: ${piTakesImages ? 'its bytes reach the model' : "pi's sessions take no image yet, so the turn is not run (unsupported)"}`, async () => {
    const page = await openPage();
    await page.setInputFiles('#image', PIXEL);
    await page.locator('#image-note', { hasText: 'pixel.png · 1 KB: goes with the next prompt' }).waitFor();
    const posted = page.waitForRequest((request) => request.method() === 'POST' && /^\/session\/[^/]+$/.test(new URL(request.url()).pathname));
    const from = world.server.requests.length;
    await say(page, `${scenarioMarker('echo')}What is in this picture?`);
    expect((await posted).postDataJSON()).toMatchObject({ type: 'prompt', text: `${scenarioMarker('echo')}What is in this picture?`, parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] });
    // Sent once: the input is cleared, and the turn's block shows the image.
    expect(await page.inputValue('#image')).toBe('');
    const turn = turns(page).nth(0);
    expect(await turn.locator('img.prompt-image').getAttribute('src')).toBe(`data:image/png;base64,${png.base64}`);
    if (piTakesImages) {
      await turn.locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
      expect(modelRequestsSince(from).flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
    } else {
      await turn.locator('.outcome[data-state="failed"]').waitFor({ timeout: 30_000 });
      expect(await turn.locator('.outcome-title').textContent()).toBe('■ Not run · unsupported');
      expect(await turn.locator('.outcome-message').textContent()).toMatch(/cannot take an image/);
      expect(await page.textContent('#status')).toBe('✗ Not run · unsupported');
      expect(modelRequestsSince(from)).toEqual([]);
    }
    await screenshot(page, 'session-image.png');
    const pid = await sessionPid();
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it(`a run's image goes to /attachments first, and the run names it: ${piTakesImages ? 'its bytes reach the model' : 'pi refuses it at call time, shown as the run\u2019s failure (setup)'}`, async () => {
    if (context === undefined || runServer === undefined) throw new Error('the server or the browser did not start');
    const page = await context.newPage();
    pages.push(page);
    await page.goto(runServer.url);
    expect(await page.isVisible('#image')).toBe(true);
    // What is not an image is said at once, and holds the prompt back: nothing goes without it.
    await page.setInputFiles('#image', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await page.locator('#image-note[data-state="bad"]', { hasText: 'notes.txt is not a PNG, JPEG, GIF or WebP image' }).waitFor();
    await say(page, 'not sent');
    expect(await page.inputValue('#prompt')).toBe('not sent');
    expect(await page.locator('#transcript .run').count()).toBe(0);
    await page.setInputFiles('#image', PIXEL);
    await page.locator('#image-note', { hasText: 'goes with the next prompt' }).waitFor();
    const attached = page.waitForResponse((response) => new URL(response.url()).pathname === '/attachments');
    const run = page.waitForRequest((request) => new URL(request.url()).pathname === '/run');
    const from = world.server.requests.length;
    await say(page, `${scenarioMarker('echo')}What is in this picture?`);
    const attachment = await attached;
    expect(attachment.request().postDataJSON()).toEqual({ data: png.base64, mimeType: 'image/png' });
    expect(attachment.status()).toBe(201);
    const { id } = (await attachment.json()) as { id: string };
    expect(new URL((await run).url()).searchParams.get('image')).toBe(id);
    const block = page.locator('#transcript .run').nth(0);
    expect(await block.locator('img.prompt-image').getAttribute('src')).toBe(`data:image/png;base64,${png.base64}`);
    if (piTakesImages) {
      await block.locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
      expect(modelRequestsSince(from).flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
    } else {
      await block.locator('.outcome[data-state="failed"]').waitFor({ timeout: 30_000 });
      expect(await block.locator('.outcome-title').textContent()).toMatch(/^✗ Failed · setup · /);
      expect(await block.locator('.outcome-message').textContent()).toBe('the run was refused: agent-rx: pi runs cannot take an image (prompt[1])');
      expect(modelRequestsSince(from)).toEqual([]);
    }
    await screenshot(page, 'run-image.png');
  }, 90_000);
});

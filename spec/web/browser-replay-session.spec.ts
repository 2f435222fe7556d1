import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { isAlive } from '../helpers/processes.js';
import { replayAgentsOfThisProcess, waitUntil } from './agent-processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';

/**
 * The web example's session mode offline (`npm run web -- --session`), in Chromium: pi's RPC
 * replay agent (examples/replay-agent/pi-rpc-replay.mjs) is the session's one process, and every
 * turn replays the recording. No network, no key, no pi.
 */

const ARTIFACTS = fileURLToPath(new URL('../../.artifacts/web/after/', import.meta.url));
const TRANSCRIPT = 'tool_call_then_text';
/** The recording's answer, as the page shows it. */
const ANSWER = /^Let me run a tool first\.[\s\S]*Done\.$/;
let server: WebServer | undefined;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const pages: Page[] = [];

const sessionAgents = (): Promise<number[]> => replayAgentsOfThisProcess('pi-rpc-replay.mjs');

beforeAll(async () => {
  server = await startWebServer({
    // Four times slower than the recording: a turn runs for seconds, long enough to be stopped.
    agent: { kind: 'replay', agent: 'pi', transcript: TRANSCRIPT, env: { PI_REPLAY_SPEED: '4', PI_REPLAY_STARTUP_MS: '0' } },
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
  expect(await sessionAgents()).toEqual([]);
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
  await waitUntil(async () => (await sessionAgents()).length === 0, 'the sessions of the test to end');
});

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  process.stdout.write(`screenshot: ${path}\n`);
}

async function say(page: Page, prompt: string): Promise<void> {
  await page.fill('#prompt', prompt);
  await page.press('#prompt', 'Enter');
}

// The one replay agent process of this test's session.
async function sessionPid(): Promise<number> {
  let pids: number[] = [];
  await waitUntil(async () => (pids = await sessionAgents()).length > 0, 'the session agent process');
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

const turns = (page: Page) => page.locator('#transcript .run');

describe('the web example in session mode, offline on the RPC replay agent, in Chromium', () => {
  it('says it is an offline session of the replay agent, and answers two turns in the same process', async () => {
    const page = await openPage();
    expect(await page.getAttribute('#app', 'data-mode')).toBe('session');
    expect(await page.getAttribute('#app', 'data-recording')).toBe(TRANSCRIPT);
    expect(await page.textContent('.agent')).toContain(`replay of a recorded pi run: ${TRANSCRIPT}`);
    const banner = await page.textContent('#mode-banner');
    expect(banner).toContain("Session mode, offline · one session of pi's RPC replay agent");
    expect(banner).toContain(`the recording “${TRANSCRIPT}”`);
    expect(await page.isVisible('#end-session')).toBe(true);
    expect(await page.isVisible('#ask-label')).toBe(false); // a recording cannot ask before its tools
    expect(await sessionAgents()).toEqual([]); // the first prompt starts it
    await say(page, 'first');
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    expect(await turns(page).nth(0).locator('.replayed').textContent()).toBe(`a recording is played (${TRANSCRIPT}): the agent does not read this prompt`);
    expect((await turns(page).nth(0).locator('.assistant').allTextContents()).join('')).toMatch(ANSWER);
    expect(await page.textContent('#status')).toBe('✓ Turn 1 completed');
    await say(page, 'second');
    await turns(page).nth(1).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await turns(page).nth(1).locator('.prompt').textContent()).toBe('second');
    expect((await turns(page).nth(1).locator('.assistant').allTextContents()).join('')).toMatch(ANSWER);
    expect(await page.textContent('#status')).toBe('✓ Turn 2 completed');
    expect(await sessionAgents()).toEqual([pid]); // the same process answered both
    await screenshot(page, 'replay-session-two-turns.png');
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it('aborts the running turn on Stop, keeps the process, and answers the next prompt in it', async () => {
    const page = await openPage();
    await say(page, 'first');
    const first = turns(page).nth(0);
    await first.locator('.tool').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    await page.click('#stop');
    await first.locator('.outcome[data-state="stopped"]').waitFor({ timeout: 30_000 });
    expect(await first.locator('.outcome-title').textContent()).toMatch(/^■ Aborted · \d+\.\d s$/);
    expect(await first.locator('.outcome-message').textContent()).toBe('Stop aborted this turn; the agent process stays for the next prompt.');
    expect(await page.textContent('#status')).toBe('■ Turn 1 aborted · the agent process stays');
    expect(isAlive(pid)).toBe(true);
    await screenshot(page, 'replay-session-aborted.png');
    await say(page, 'after the stop');
    const second = turns(page).nth(1);
    await second.locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect((await second.locator('.assistant').allTextContents()).join('')).toMatch(ANSWER);
    expect(await sessionAgents()).toEqual([pid]);
    await page.close();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`);
  }, 90_000);

  it('ends the process on End session, and shows the session ended', async () => {
    const page = await openPage();
    await say(page, 'hello');
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    const pid = await sessionPid();
    await page.click('#end-session');
    const end = page.locator('.session-end');
    await end.waitFor({ timeout: 30_000 });
    expect(await end.getAttribute('data-state')).toBe('ended');
    expect(await page.textContent('#status')).toBe('■ Session ended');
    await waitUntil(() => !isAlive(pid), `pid ${pid} to exit`);
    expect(await page.isDisabled('#end-session')).toBe(true);
    await screenshot(page, 'replay-session-ended.png');
  }, 90_000);
});

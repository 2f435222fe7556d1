import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from '../conformance/claude-env.js';
import { scenarioMarker, TOUCH_TOOL_COMMAND } from '../conformance/fake-model-server.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';
import { piAgentsOfThisProcess, waitUntil } from './agent-processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';

/**
 * The web example's approval cards in Chromium: a session opened with "Ask before tools" on the
 * real pi (its permission extension) and the real Claude Code, against the fake model server
 * (127.0.0.1). The model's `touch_tool` scenario calls the shell with `touch touched-by-agent.txt`:
 * the card says so, and the file is made only when the page allows it.
 */

const ARTIFACTS = fileURLToPath(new URL('../../.artifacts/web/after/', import.meta.url));
const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const TOUCH = `${scenarioMarker('touch_tool')}touch a file`;
const TOUCHED = 'touched-by-agent.txt';
const world = piWorld();
const CLAUDE_TAG = createProcessTag('AGENT_RX_WEB_CLAUDE');
let pi: WebServer | undefined;
let piHasty: WebServer | undefined;
let claude: WebServer | undefined;
let claudeEnv: ClaudeEnv | undefined;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const pages: Page[] = [];

beforeAll(async () => {
  const piAgent = { kind: 'real', agent: 'pi', executable: PI, options: { provider: OPENAI_PROVIDER }, model: 'recall', env: world.env.env, cwd: world.env.cwd } as const;
  pi = await startWebServer({ agent: piAgent, session: true, log: () => undefined });
  // The same, but a request the page leaves waits one second only.
  piHasty = await startWebServer({ agent: piAgent, session: true, permissionTimeoutMs: 1000, log: () => undefined });
  claudeEnv = createClaudeEnv({ baseUrl: world.server.baseUrl });
  const claudeBinary = claudeExecutable();
  claude = await startWebServer({
    agent: {
      kind: 'real',
      agent: 'claude',
      executable: claudeBinary.command,
      model: 'recall',
      // No rule allows Bash: Claude Code asks before the command. (`undefined` removes a variable of the host's.)
      options: { allowedTools: [] },
      env: { ...claudeEnv.env, ...CLAUDE_TAG.env } as Record<string, string>,
      cwd: claudeEnv.cwd,
    },
    session: true,
    log: () => undefined,
  });
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await Promise.all([pi?.close(), piHasty?.close(), claude?.close()]);
  await claudeEnv?.cleanup();
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true });
  expect(await piAgentsOfThisProcess()).toEqual([]);
  expect(describeProcesses(CLAUDE_TAG.processes())).toBe('none');
}, 30_000);

const piTouched = (): string => join(world.env.cwd, TOUCHED);
const claudeTouched = (): string => join(claudeEnv?.cwd ?? '', TOUCHED);

beforeEach(() => {
  rmSync(piTouched(), { force: true });
  if (claudeEnv !== undefined) rmSync(claudeTouched(), { force: true });
});

// A test that failed half-way leaves its tab open: closed here, its session's process goes with it.
afterEach(async () => {
  for (const page of pages.splice(0)) if (!page.isClosed()) await page.close();
  await waitUntil(async () => (await piAgentsOfThisProcess()).length === 0, 'the pi sessions of the test to end');
  expect(describeProcesses(await CLAUDE_TAG.waitUntilNone(20_000))).toBe('none');
  rmSync(piTouched(), { force: true });
  if (claudeEnv !== undefined) {
    rmSync(claudeTouched(), { force: true });
    rmSync(join(claudeEnv.cwd, '.claude'), { recursive: true, force: true });
  }
}, 30_000);

async function openPage(server: WebServer | undefined): Promise<Page> {
  if (context === undefined || server === undefined) throw new Error('the server or the browser did not start');
  const page = await context.newPage();
  pages.push(page);
  await page.goto(server.url);
  return page;
}

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

const turns = (page: Page) => page.locator('#transcript .run');

// Ticks "Ask before tools", sends the touch prompt, and returns the card of its request.
async function askedToTouch(page: Page): Promise<Locator> {
  expect(await page.isVisible('#ask-label')).toBe(true);
  expect(await page.isChecked('#ask')).toBe(false); // off unless chosen: the agent runs its tools as on its own
  await page.check('#ask');
  await say(page, TOUCH);
  const card = turns(page).nth(0).locator('.permission');
  await card.waitFor({ timeout: 60_000 });
  return card;
}

// The buttons of a card, by their text.
const buttonsOf = (card: Locator) => card.locator('.permission-actions button').allTextContents();

describe('the web example asks before tools: pi in Chromium', () => {
  it('Deny: the card shows the tool, its kind and the command; the file is not made and the turn goes on to an answer', async () => {
    const page = await openPage(pi);
    const card = await askedToTouch(page);
    expect(await card.getAttribute('data-state')).toBe('pending');
    expect(await card.locator('.permission-head b').textContent()).toBe('Allow bash?');
    expect(await card.locator('.permission-kind').textContent()).toBe('execute');
    expect(await card.locator('.permission-title').textContent()).toBe(TOUCH_TOOL_COMMAND);
    expect(await card.locator('.permission-state').textContent()).toBe('waiting for your decision');
    // pi takes a yes or a no: no "always".
    expect(await buttonsOf(card)).toEqual(['Allow', 'Deny']);
    // In the card of the tool call it is for.
    expect(await turns(page).nth(0).locator('.tool .permission').count()).toBe(1);
    expect(await page.textContent('#status')).toBe('Turn 1 waits for your decision: bash');
    expect(await page.isDisabled('#ask')).toBe(true); // chosen when the session opened
    expect(await page.textContent('.session-line')).toMatch(/ · it asks before each tool$/);
    expect(existsSync(piTouched())).toBe(false);
    await screenshot(page, 'permission-asked.png');
    await card.locator('button.deny').click();
    await card.locator('.permission-state', { hasText: '✗ Denied · by you' }).waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-state')).toBe('denied');
    expect(await card.getAttribute('data-by')).toBe('caller');
    expect(await card.locator('button:enabled').count()).toBe(0);
    expect(await card.locator('button.deny').getAttribute('aria-pressed')).toBe('true');
    const turn = turns(page).nth(0);
    await turn.locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(await turn.locator('.tool').getAttribute('data-state')).toBe('failed');
    expect(await turn.locator('.tool pre').first().textContent()).toMatch(/^Permission denied/);
    expect((await turn.locator('.assistant').allTextContents()).join('')).not.toBe('');
    expect(existsSync(piTouched())).toBe(false);
    await screenshot(page, 'permission-denied.png');
  }, 120_000);

  it('Allow: the command runs and the file is made', async () => {
    const page = await openPage(pi);
    const card = await askedToTouch(page);
    expect(existsSync(piTouched())).toBe(false);
    await card.locator('button.allow').click();
    await card.locator('.permission-state', { hasText: '✓ Allowed · by you' }).waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-state')).toBe('allowed');
    expect(await card.locator('button:enabled').count()).toBe(0);
    const turn = turns(page).nth(0);
    await turn.locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(await turn.locator('.tool').getAttribute('data-state')).toBe('completed');
    expect(existsSync(piTouched())).toBe(true);
    expect(await page.textContent('#status')).toBe('✓ Turn 1 completed');
    await screenshot(page, 'permission-allowed.png');
  }, 120_000);

  it('Stop while the card waits: the request is denied by the abort, the card closes, the file is not made', async () => {
    const page = await openPage(pi);
    const card = await askedToTouch(page);
    await page.click('#stop');
    await card.locator('.permission-state', { hasText: '✗ Denied · the turn was aborted' }).waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-by')).toBe('abort');
    expect(await card.locator('button:enabled').count()).toBe(0);
    await turns(page).nth(0).locator('.outcome[data-state="stopped"]').waitFor({ timeout: 30_000 });
    expect(existsSync(piTouched())).toBe(false);
  }, 120_000);

  it('a request left waiting is denied at the deadline, and its card says so', async () => {
    const page = await openPage(piHasty);
    const card = await askedToTouch(page);
    await card.locator('.permission-state', { hasText: '✗ Denied · no decision in time' }).waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-by')).toBe('deadline');
    expect(await card.locator('button:enabled').count()).toBe(0);
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(existsSync(piTouched())).toBe(false);
  }, 120_000);

  it('without "Ask before tools" nothing is asked: pi runs the command, as on its own', async () => {
    const page = await openPage(pi);
    await say(page, TOUCH);
    const turn = turns(page).nth(0);
    await turn.locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(await turn.locator('.permission').count()).toBe(0);
    expect(existsSync(piTouched())).toBe(true);
    expect(await page.textContent('.session-line')).toMatch(/one agent process for the conversation$/);
  }, 120_000);
});

describe('the web example asks before tools: Claude Code in Chromium', () => {
  it('offers Always where the agent does: the next turn runs the same command without a card', async () => {
    const page = await openPage(claude);
    const card = await askedToTouch(page);
    expect(await card.locator('.permission-head b').textContent()).toBe('Allow Bash?');
    expect(await card.locator('.permission-kind').textContent()).toBe('execute');
    expect(await card.locator('.permission-title').textContent()).toContain(TOUCH_TOOL_COMMAND);
    expect(await buttonsOf(card)).toEqual(['Allow', 'Always allow', 'Deny']);
    await screenshot(page, 'permission-always-offered.png');
    await card.locator('button.always').click();
    await card.locator('.permission-state', { hasText: '✓ Allowed, and from now on · by you' }).waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-decision')).toBe('allow-always');
    await turns(page).nth(0).locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(existsSync(claudeTouched())).toBe(true);
    rmSync(claudeTouched());
    await say(page, TOUCH);
    const second = turns(page).nth(1);
    await second.locator('.outcome[data-state="completed"]').waitFor({ timeout: 60_000 });
    expect(await second.locator('.permission').count()).toBe(0);
    expect(existsSync(claudeTouched())).toBe(true);
  }, 150_000);
});

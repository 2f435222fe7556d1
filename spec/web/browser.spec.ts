import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { StopReport } from '../../lib/index.js';
import { DEFAULT_PROMPT, DEFAULT_TRANSCRIPTS } from '../../examples/web/options.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { isAlive } from '../helpers/processes.js';
import { replayAgentsOfThisProcess, treeOf, waitUntil } from './agent-processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';
import { OTHER_AGENT_REPLAYS } from './agent-replays.js';

// Screenshots go here, outside git (.artifacts/ is ignored).
const ARTIFACTS = fileURLToPath(new URL('../../.artifacts/web/', import.meta.url));

const reports: StopReport[] = [];
let server: WebServer | undefined;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;

beforeAll(async () => {
  // Slowed down (4 times), so that there is time to act in the middle of a run.
  server = await startWebServer({
    agent: { kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text', env: { PI_REPLAY_SPEED: '4', PI_REPLAY_STARTUP_MS: '0' } },
    onRunStopped: (report) => reports.push(report),
    log: () => undefined,
  });
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

// A new tab on the example's page (of `url`, by default the pi replay's server).
async function openPage(url = server?.url): Promise<Page> {
  if (context === undefined || url === undefined) throw new Error('the server or the browser did not start');
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

afterAll(async () => {
  await context?.close();
  await server?.close();
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true });
  expect(await replayAgentsOfThisProcess()).toEqual([]);
}, 30_000);

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  process.stdout.write(`screenshot: ${path}\n`);
}

// Starts the default prompt and waits for the first streamed text; returns the agent's pid.
async function startRun(page: Page): Promise<number> {
  await page.fill('#prompt', DEFAULT_PROMPT);
  await page.click('#run');
  await page.locator('.assistant').first().waitFor();
  expect(await page.getAttribute('#status', 'data-state')).toBe('running');
  const pids = await replayAgentsOfThisProcess();
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

// Waits for the server's stop report of `pid` and checks that `tree` is gone, all of it.
async function expectStopped(pid: number, tree: readonly number[]): Promise<void> {
  await waitUntil(() => reports.some((report) => report.pid === pid), `the stop report of pid ${pid}`);
  expect(reports.find((report) => report.pid === pid)).toMatchObject({ requested: true, confirmed: true, survivors: [] });
  expect(tree).toContain(pid);
  expect(tree.filter(isAlive)).toEqual([]);
}

describe('the web example in Chromium', () => {
  it('shows the answer as it streams in, and the completed run', async () => {
    const page = await openPage();
    expect(await page.textContent('.agent')).toContain('Agent: replay of a recorded pi run: tool_call_then_text');
    await page.fill('#prompt', DEFAULT_PROMPT);
    await page.click('#run');
    await page.locator('#status[data-state="running"]').waitFor();
    expect(await page.isDisabled('#run')).toBe(true);
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    const texts = await page.locator('.assistant').allTextContents();
    expect(texts).toEqual(['Let me run a tool first.', 'The tool returned: "hello\\n". Done.']);
    expect(await page.locator('.tool').getAttribute('data-state')).toBe('completed');
    expect(await page.textContent('.tool')).toContain('echo hello');
    expect(await page.textContent('#status')).toMatch(/^✓ Completed · 267 tokens · \d+\.\d s$/);
    expect(await page.isEnabled('#run')).toBe(true);
    await screenshot(page, 'completed.png');
    await page.close();
  }, 60_000);

  it('stops the agent and its process tree when Stop is pressed mid-run', async () => {
    const page = await openPage();
    const pid = await startRun(page);
    const tree = await treeOf(pid);
    await screenshot(page, 'running.png');
    await page.click('#stop');
    await page.locator('#status[data-state="stopped"]').waitFor();
    await expectStopped(pid, tree);
    expect(await page.textContent('#transcript')).not.toContain('Done.');
    await screenshot(page, 'stopped.png');
    await page.close();
  }, 60_000);

  it('stops the agent and its process tree when the page is closed mid-run', async () => {
    const page = await openPage();
    const pid = await startRun(page);
    const tree = await treeOf(pid);
    await page.close();
    await expectStopped(pid, tree);
  }, 60_000);
});

// The Claude Code, Codex and Gemini CLI replays, each served by a server of its own, in the same browser.
describe.each(OTHER_AGENT_REPLAYS)('the web example running the $agent replay in Chromium', (expected) => {
  let own: WebServer | undefined;
  beforeAll(async () => {
    own = await startWebServer({
      agent: { kind: 'replay', agent: expected.agent, transcript: DEFAULT_TRANSCRIPTS[expected.agent], env: { PI_REPLAY_SPEED: '1', PI_REPLAY_STARTUP_MS: '0' } },
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await own?.close();
  });

  it('says which agent runs, and shows its answer and its tool card', async () => {
    const page = await openPage(own?.url);
    expect(await page.textContent('.agent')).toContain(`Agent: ${expected.describe} ·`);
    await page.fill('#prompt', DEFAULT_PROMPT);
    await page.click('#run');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.assistant').allTextContents()).toEqual(expected.texts);
    const tool = page.locator('.tool');
    expect(await tool.getAttribute('data-state')).toBe('completed');
    expect(await tool.locator('.tool-head').textContent()).toBe(`▸ ${expected.tool.name}${expected.tool.command}`);
    expect(await tool.locator('pre').textContent()).toBe(expected.tool.output);
    expect(await page.textContent('#status')).toMatch(new RegExp(`^✓ Completed · ${expected.totalTokens} tokens · \\d+\\.\\d s$`));
    await screenshot(page, `completed-${expected.agent}.png`);
    await page.close();
  }, 60_000);
});

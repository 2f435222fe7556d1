import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { StopReport } from '../../lib/index.js';
import { DEFAULT_PROMPT, DEFAULT_TRANSCRIPTS } from '../../examples/web/options.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { fixture, isAlive } from '../helpers/processes.js';
import { replayAgentsOfThisProcess, treeOf, waitUntil } from './agent-processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';
import { OTHER_AGENT_REPLAYS } from './agent-replays.js';

// Screenshots of each state the tests check go here, outside git (.artifacts/ is ignored).
const ARTIFACTS = fileURLToPath(new URL('../../.artifacts/web/after/', import.meta.url));
// A stand-in for pi caught in a bash tool that never ends: its tool card stays running until the run ends.
const STUCK_TOOL_AGENT = fixture('fake-agent-tool.mjs');
const ANSWER = ['Let me run a tool first.', 'The tool returned: "hello\\n". Done.'];

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

// The stuck agent's pids, from its tool card on the page.
async function toolPidsOn(page: Page): Promise<{ agentPid: number; toolPid: number }> {
  const output = page.locator('.tool pre');
  await output.filter({ hasText: 'toolPid' }).waitFor();
  return JSON.parse((await output.textContent()) ?? '') as { agentPid: number; toolPid: number };
}

// The run requests the page makes, counted from now on.
function runRequests(page: Page): () => number {
  let count = 0;
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/run') count += 1;
  });
  return () => count;
}

describe('the web example in Chromium', () => {
  it('shows the prompt, the answer as it streams in, the tool card and the completed run', async () => {
    const page = await openPage();
    expect(await page.textContent('.agent')).toContain('Agent: replay of a recorded pi run: tool_call_then_text');
    expect(await page.getAttribute('#status', 'data-state')).toBe('idle');
    expect(await page.locator('#transcript .run').count()).toBe(0);
    expect(await page.isVisible('#image')).toBe(false); // a replay reads no prompt: nothing to attach
    await screenshot(page, 'idle.png');
    await page.fill('#prompt', DEFAULT_PROMPT);
    await page.click('#run');
    await page.locator('#status[data-state="running"]').waitFor();
    expect(await page.isDisabled('#run')).toBe(true);
    const run = page.locator('#transcript .run');
    expect(await run.locator('.prompt').textContent()).toBe(DEFAULT_PROMPT);
    expect(await page.inputValue('#prompt')).toBe(''); // sent: the field is ready for the next prompt
    await page.locator('.assistant').first().waitFor();
    expect(await run.getAttribute('data-state')).toBe('running');
    await screenshot(page, 'streaming.png');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.assistant').allTextContents()).toEqual(ANSWER);
    const tool = page.locator('.tool');
    expect(await tool.getAttribute('data-state')).toBe('completed');
    expect(await tool.locator('.tool-state').textContent()).toBe('✓ completed');
    expect(await page.textContent('.tool')).toContain('echo hello');
    expect(await page.textContent('#status')).toMatch(/^✓ Completed · 267 tokens · \d+\.\d s$/);
    expect(await run.getAttribute('data-state')).toBe('completed');
    expect(await run.locator('.outcome').getAttribute('data-state')).toBe('completed');
    expect(await run.locator('.outcome').textContent()).toMatch(/^✓ Completed · 267 tokens · \d+\.\d s$/);
    expect(await page.isEnabled('#run')).toBe(true);
    await screenshot(page, 'completed.png');
    await page.close();
  }, 60_000);

  it('says that a recording is played, on the page, at the prompt and in each run', async () => {
    const page = await openPage();
    expect(await page.getAttribute('#app', 'data-mode')).toBe('replay');
    const banner = page.locator('#mode-banner');
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.textContent()).toContain('Replay mode: every run plays back the recording “tool_call_then_text”');
    expect(await page.textContent('#prompt-label')).toBe('Prompt (not read: a recording is played)');
    expect(await page.getAttribute('#prompt', 'placeholder')).toBe('Any prompt: the recording plays the same run');
    await page.fill('#prompt', 'What is 2 + 2?');
    await page.click('#run');
    const run = page.locator('#transcript .run');
    expect(await run.locator('.prompt').textContent()).toBe('What is 2 + 2?');
    expect(await run.locator('.replayed').textContent()).toBe('a recording is played (tool_call_then_text): the agent does not read this prompt');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.assistant').allTextContents()).toEqual(ANSWER); // the recording's answer, whatever the prompt
    await screenshot(page, 'replay.png');
    await page.close();
  }, 60_000);

  it('sends no request for a blank prompt, and says why', async () => {
    const page = await openPage();
    const requests = runRequests(page);
    await page.fill('#prompt', '  \n ');
    await page.click('#run');
    const error = page.locator('#prompt-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Type a prompt first: a blank prompt is not sent.');
    expect(await page.getAttribute('#prompt', 'aria-invalid')).toBe('true');
    await page.fill('#prompt', '');
    await page.press('#prompt', 'Enter');
    expect(await error.isVisible()).toBe(true);
    expect(await page.getAttribute('#status', 'data-state')).toBe('idle');
    expect(await page.locator('#transcript .run').count()).toBe(0);
    await screenshot(page, 'blank.png');
    // Typing takes the message away; the request goes when the prompt is sent.
    await page.fill('#prompt', 'hello');
    expect(await error.isHidden()).toBe(true);
    expect(await page.getAttribute('#prompt', 'aria-invalid')).toBeNull();
    expect(requests()).toBe(0);
    await page.press('#prompt', 'Enter');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(requests()).toBe(1);
    await page.close();
  }, 60_000);

  it('stacks runs as a conversation: each block has its prompt, answer, tool card and outcome; Enter sends, Shift+Enter does not', async () => {
    const page = await openPage();
    await page.fill('#prompt', 'first');
    await page.press('#prompt', 'Enter');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    await page.fill('#prompt', 'second');
    await page.press('#prompt', 'Shift+Enter');
    expect(await page.inputValue('#prompt')).toBe('second\n');
    expect(await page.locator('#transcript .run').count()).toBe(1);
    await page.press('#prompt', 'Enter');
    const runs = page.locator('#transcript .run');
    await runs.nth(1).locator('.outcome[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await runs.count()).toBe(2);
    for (const [index, prompt] of ['first', 'second'].entries()) {
      const run = runs.nth(index);
      expect(await run.locator('.prompt').textContent()).toBe(prompt);
      expect(await run.locator('.assistant').allTextContents()).toEqual(ANSWER);
      expect(await run.locator('.tool').getAttribute('data-state')).toBe('completed');
      expect(await run.locator('.outcome').textContent()).toMatch(/^✓ Completed · 267 tokens/);
    }
    await screenshot(page, 'conversation.png');
    await page.click('#clear');
    expect(await runs.count()).toBe(0);
    expect(await page.getAttribute('#status', 'data-state')).toBe('idle');
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
    expect(await page.textContent('#status')).toBe('■ Stopped');
    expect(await page.locator('#transcript .run .outcome').textContent()).toBe('■ StoppedThe server ends the agent and its processes.');
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

// The real pi's place taken by an agent whose tool never ends: a tool card that is running when the run ends.
describe('the web example with a tool still running in Chromium', () => {
  let stuck: WebServer | undefined;
  beforeAll(async () => {
    stuck = await startWebServer({ agent: { kind: 'real', agent: 'pi', executable: STUCK_TOOL_AGENT }, log: () => undefined });
  });
  afterAll(async () => {
    await stuck?.close();
  });

  it('ends the running tool card as stopped when Stop is pressed, and its processes are gone', async () => {
    const page = await openPage(stuck?.url);
    // The real agent runs: no replay banner, no note on the run.
    expect(await page.getAttribute('#app', 'data-mode')).toBe('real');
    expect(await page.locator('#mode-banner').isHidden()).toBe(true);
    expect(await page.textContent('#prompt-label')).toBe('Prompt');
    await page.click('#run');
    const { agentPid, toolPid } = await toolPidsOn(page);
    const tool = page.locator('.tool');
    expect(await tool.getAttribute('data-state')).toBe('running');
    expect(await tool.locator('.tool-state').textContent()).toBe('running…');
    expect(await page.locator('.replayed').count()).toBe(0);
    await page.click('#stop');
    await page.locator('#status[data-state="stopped"]').waitFor();
    expect(await tool.getAttribute('data-state')).toBe('stopped');
    expect(await tool.locator('.tool-state').textContent()).toBe('■ stopped with the run');
    expect(await page.locator('#transcript .run').getAttribute('data-state')).toBe('stopped');
    await waitUntil(() => !isAlive(agentPid) && !isAlive(toolPid), 'the agent and its tool to be gone');
    await screenshot(page, 'stopped.png');
    await page.close();
  }, 60_000);
});

describe('the web example when a run fails, in Chromium', () => {
  it("shows the failure as the run's outcome (reason and message), and a short status line", async () => {
    const failing = await startWebServer({ agent: { kind: 'replay', agent: 'pi', transcript: 'http401', env: { PI_REPLAY_STARTUP_MS: '0' } }, log: () => undefined });
    try {
      const page = await openPage(failing.url);
      await page.click('#run');
      await page.locator('#status[data-state="failed"]').waitFor({ timeout: 30_000 });
      const outcome = page.locator('#transcript .run .outcome');
      expect(await outcome.getAttribute('data-state')).toBe('failed');
      expect(await outcome.locator('.outcome-title').textContent()).toMatch(/^✗ Failed · agent-error · \d+\.\d s$/);
      expect(await outcome.locator('.outcome-message').textContent()).toContain('401');
      expect(await page.textContent('#status')).toBe('✗ Failed · agent-error');
      await screenshot(page, 'failed.png');
      await page.close();
    } finally {
      await failing.close();
    }
  }, 60_000);

  it('ends a running tool card as failed when the server goes away, and says so in the run, not in the status line', async () => {
    const gone = await startWebServer({ agent: { kind: 'real', agent: 'pi', executable: STUCK_TOOL_AGENT }, log: () => undefined });
    const page = await openPage(gone.url);
    try {
      await page.click('#run');
      const { agentPid, toolPid } = await toolPidsOn(page);
      await gone.close(); // the open stream closes, which stops the run
      expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([false, false]);
      await page.locator('#status[data-state="failed"]').waitFor();
      expect(await page.textContent('#status')).toBe('✗ Failed · missing-terminal');
      const tool = page.locator('.tool');
      expect(await tool.getAttribute('data-state')).toBe('failed');
      expect(await tool.locator('.tool-state').textContent()).toBe('✗ failed: the run ended first');
      const run = page.locator('#transcript .run');
      expect(await run.getAttribute('data-state')).toBe('failed');
      expect(await run.locator('.outcome-title').textContent()).toMatch(/^✗ Failed · missing-terminal · \d+\.\d s$/);
      expect(await run.locator('.outcome-message').textContent()).toMatch(/^the event stream http:\/\/127\.0\.0\.1:\d+\/run ended before the run's terminal message/);
      await screenshot(page, 'server-gone.png');
      // A run sent to the server that is gone: its own block says it could not connect.
      await page.fill('#prompt', 'again');
      await page.click('#run');
      await run.nth(1).locator('.outcome[data-state="failed"]').waitFor();
      expect(await run.nth(1).locator('.outcome-message').textContent()).toMatch(/^(could not connect to|the event stream .* could not be opened)/);
      expect(await run.nth(0).locator('.outcome-title').textContent()).toMatch(/^✗ Failed · missing-terminal/);
      await screenshot(page, 'server-gone-again.png');
    } finally {
      await page.close();
      await gone.close();
    }
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
    expect(await page.textContent('#mode-banner')).toContain(`the recording “${DEFAULT_TRANSCRIPTS[expected.agent]}”`);
    await page.fill('#prompt', DEFAULT_PROMPT);
    await page.click('#run');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.assistant').allTextContents()).toEqual(expected.texts);
    const tool = page.locator('.tool');
    expect(await tool.getAttribute('data-state')).toBe('completed');
    expect(await tool.locator('.tool-head b').textContent()).toBe(`▸ ${expected.tool.name}`);
    // The card shows the call's one-line summary (a Codex command without its `bash -lc` wrapping).
    expect(await tool.locator('.tool-input').textContent()).toBe(expected.tool.summary);
    expect(await tool.locator('pre').textContent()).toBe(expected.tool.output);
    expect(await page.textContent('#status')).toMatch(new RegExp(`^✓ Completed · ${expected.totalTokens} tokens · \\d+\\.\\d s$`));
    await screenshot(page, `completed-${expected.agent}.png`);
    await page.close();
  }, 60_000);
});

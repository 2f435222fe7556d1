// The web example in fleet mode in a real Chromium: its EventSource reconnects by itself after the
// stream is cut (by a proxy in front of the server), and the page goes on where it stopped; Stop
// and closing the tab cancel the run on its worker.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { DEFAULT_PROMPT, type AgentChoice } from '../../examples/web/options.js';
import type { WebFleetOptions } from '../../examples/web/fleet-runs.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { fleetWorld, gone } from '../fleet/fleet-world.js';
import { isAlive } from '../helpers/processes.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';
import { startDroppingProxy, type DroppingProxy } from './dropping-proxy.js';

const world = fleetWorld();
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const opened: { server: WebServer; proxy: DroppingProxy }[] = [];
let logs: string[] = [];

beforeAll(async () => {
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

afterEach(async () => {
  for (const { server, proxy } of opened.splice(0)) {
    await proxy.close();
    await server.close();
  }
  logs = [];
});

afterAll(async () => {
  await context?.close();
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true });
}, 30_000);

// The example's page in fleet mode, behind the proxy.
async function openFleetPage(agent: AgentChoice, fleet: Partial<WebFleetOptions> = {}): Promise<{ page: Page; proxy: DroppingProxy }> {
  if (context === undefined) throw new Error('the browser did not start');
  const server = await startWebServer({ agent, fleet: { connection: world.redis().url, ...fleet }, log: (line) => logs.push(line) });
  const proxy = await startDroppingProxy(server.url);
  opened.push({ server, proxy });
  const page = await context.newPage();
  await page.goto(proxy.url);
  await page.fill('#prompt', DEFAULT_PROMPT);
  return { page, proxy };
}

// The stuck agent's pids, from its tool card on the page.
async function toolPidsOn(page: Page): Promise<{ agentPid: number; toolPid: number }> {
  const output = page.locator('.tool pre');
  await output.filter({ hasText: 'toolPid' }).waitFor();
  return JSON.parse((await output.textContent()) ?? '') as { agentPid: number; toolPid: number };
}

describe('the web example with a fleet in Chromium', () => {
  it('goes on where it stopped when the stream is cut mid-run: the EventSource reconnects, nothing twice, nothing lost, one run', async () => {
    const worker = await world.startWorker('browser-1', { replaySpeed: '3' });
    const { page, proxy } = await openFleetPage({ kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text' });
    await page.click('#run');
    await page.locator('.assistant').first().waitFor();
    expect(proxy.dropStreams()).toBe(1);
    expect(await page.getAttribute('#status', 'data-state')).toBe('running');
    await page.locator('#status[data-state="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.assistant').allTextContents()).toEqual(['Let me run a tool first.', 'The tool returned: "hello\\n". Done.']);
    expect(await page.locator('.tool').count()).toBe(1);
    expect(await page.locator('.tool').getAttribute('data-state')).toBe('completed');
    expect(await page.textContent('#status')).toMatch(/^✓ Completed · 267 tokens · \d+\.\d s$/);
    // The browser came back with the id of the last event it had: the server resumed after it.
    const resumed = logs.filter((line) => line.startsWith('run 1: resumed after entry '));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).not.toBe('run 1: resumed after entry 0-0');
    expect(worker.lines().filter((line) => line.event === 'started')).toHaveLength(1);
    expect(worker.lines().find((line) => line.event === 'ended')?.stopped).toBeNull();
    await page.close();
  }, 60_000);

  it('Stop cancels the run on its worker: the agent and its tool are gone', async () => {
    const worker = await world.startWorker('browser-stop');
    const { page } = await openFleetPage({ kind: 'real', agent: 'pi', model: 'fake_tool' }, { reconnectGraceMs: 60_000 });
    await page.click('#run');
    const { agentPid, toolPid } = await toolPidsOn(page);
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    expect(await page.locator('.tool').getAttribute('data-state')).toBe('running');
    await page.click('#stop');
    await page.locator('#status[data-state="stopped"]').waitFor();
    expect(await page.locator('.tool').getAttribute('data-state')).toBe('stopped');
    await gone([agentPid, toolPid], 5_000); // long before the grace: the cancel did it
    expect((await worker.waitFor((line) => line.event === 'ended')).stopped).toBe('cancel');
    expect(logs).toContain('run 1: cancelled (Stop)');
    await page.close();
  }, 60_000);

  it('closing the tab cancels the run at once (a beacon), not after the grace period', async () => {
    const worker = await world.startWorker('browser-close');
    const { page } = await openFleetPage({ kind: 'real', agent: 'pi', model: 'fake_tool' }, { reconnectGraceMs: 60_000 });
    await page.click('#run');
    const { agentPid, toolPid } = await toolPidsOn(page);
    await page.close({ runBeforeUnload: true });
    await gone([agentPid, toolPid], 5_000);
    expect((await worker.waitFor((line) => line.event === 'ended')).stopped).toBe('cancel');
    expect(logs).toContain('run 1: cancelled (Stop)');
  }, 60_000);
});

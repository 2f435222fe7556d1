import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startChatServer, type ChatServer } from '../../examples/use-chat/server.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { expectedText, scenarioMarker, startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from '../conformance/pi-env.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.js';

// The useChat example (examples/use-chat: React, @ai-sdk/react's useChat, bundled by esbuild) in
// a real Chromium, answered by the real pi against the fake model server: an answer streams in, the
// next prompt resumes the agent's session, Stop ends the agent.

const PI = piCommand();
const TAG = createProcessTag('AGENT_RX_USE_CHAT');

let model: FakeModelServer;
let pi: PiEnv;
let server: ChatServer;
let context: BrowserContext;
let userDataDir = '';

beforeAll(async () => {
  model = await startFakeModelServer();
  pi = await createPiEnv({ baseUrl: model.baseUrl });
  server = await startChatServer({ agent: { name: 'pi', options: { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'text', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } } } });
  userDataDir = mkdtempSync(join(tmpdir(), 'agent-rx-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await context.close();
  await server.close();
  await model.close();
  await pi.cleanup();
  rmSync(userDataDir, { recursive: true, force: true });
  expect(TAG.processes()).toEqual([]);
}, 30_000);

async function ask(page: Page, text: string): Promise<void> {
  await page.fill('#prompt', text);
  await page.click('#send');
}

// Read in the page (as expressions: the spec is compiled without the DOM's types).
const STATUS = "document.querySelector('#status')?.getAttribute('data-status')";
const ANSWER_TEXT = "(document.querySelector('li[data-role=\"assistant\"] .text')?.textContent ?? '')";
const ANSWERS = "document.querySelectorAll('li[data-role=\"assistant\"]').length";

/** Text as the page lays it out: runs of white space as one space. */
const spaced = (text: string): string => text.replace(/\s+/g, ' ').trim();

const answers = (page: Page): Promise<string[]> => page.locator('li[data-role="assistant"]').allInnerTexts();

describe('the useChat example in Chromium', () => {
  it('an answer streams in (text as it comes, then the whole); the next prompt resumes the agent’s session', async () => {
    const page = await context.newPage();
    await page.goto(server.url);
    await ask(page, `${scenarioMarker('slow_text')} hello`);
    // Part of the answer is on the page while it still streams.
    await page.waitForFunction(`${STATUS} === 'streaming' && ${ANSWER_TEXT}.length > 0`, undefined, { timeout: 30_000 });
    const partial = (await answers(page)).join('');
    await page.waitForSelector('#status[data-status="ready"]', { timeout: 30_000 });
    const whole = (await answers(page)).join('');
    expect(whole).toContain(expectedText('slow_text').trim());
    expect(partial.length).toBeLessThan(whole.length);
    await ask(page, `${scenarioMarker('recall')} again`);
    await page.waitForFunction(`${ANSWERS} === 2 && ${STATUS} === 'ready'`, undefined, { timeout: 30_000 });
    expect((await answers(page))[1]).toContain('User texts in context: 2');
    await page.close();
  }, 120_000);

  it('Stop ends the agent: no process of its run is left, and the page can ask again', async () => {
    // Its own server, whose model answers without end unless a prompt says otherwise: the stopped
    // answer goes again as text with the next prompt (it left no session to resume), and only the
    // next prompt's marker may pick the scenario.
    const endless = await startChatServer({ agent: { name: 'pi', options: { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'endless_text', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } } } });
    const page = await context.newPage();
    try {
      await page.goto(endless.url);
      await ask(page, 'go on');
      await page.waitForFunction(`${ANSWER_TEXT}.length > 20`, undefined, { timeout: 30_000 });
      expect(TAG.processes().length).toBeGreaterThan(0);
      await page.click('#stop');
      expect(await TAG.waitUntilNone(15_000)).toEqual([]);
      await page.waitForSelector('#status[data-status="ready"]', { timeout: 15_000 });
      await ask(page, `${scenarioMarker('text')} after the stop`);
      await page.waitForFunction(`${ANSWERS} === 2 && ${STATUS} === 'ready'`, undefined, { timeout: 30_000 });
      expect(spaced((await answers(page))[1] ?? '')).toContain(spaced(expectedText('text')));
    } finally {
      await page.close();
      await endless.close();
    }
  }, 120_000);
});

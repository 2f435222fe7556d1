import { afterEach, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Observable, OperatorFunction } from 'rxjs';
import * as z from 'zod';
import { collectRunResult, type CliMessage, type OutputSchema, type Prompt, type SessionCommand, type SessionMessage, type StopReport } from '../../lib/index.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import type { FakeModelServer, RequestLogEntry } from './fake-model-server.js';
import { imagesInRequest, JSON_OK_VALUE, JSON_PROSE, scenarioMarker, testPng } from './scenarios.js';
import { SessionDriver } from './session-driver.js';

/** One agent as the shared prompt-part and typed-answer cases need it. */
export interface PromptAgent {
  readonly name: string;
  /** Carried by every process of the agent's runs and sessions. */
  readonly tag: ProcessTag;
  /** The folder the agent works in (where the cases write their image and file). */
  readonly cwd: string;
  /** The fake model server the agent talks to. */
  readonly server: FakeModelServer;
  /** A run of the agent with this prompt (and schema), its other options the test's. */
  run<Output>(prompt: Prompt, outputSchema?: OutputSchema<Output>): Observable<CliMessage<Output>>;
  /** A session of the agent. */
  session(onStopped: (report: StopReport) => void): OperatorFunction<SessionCommand, SessionMessage>;
}

/** The schema of the typed-answer scenarios (`json_ok` satisfies it, `json_bad` does not). */
export const Answer = z.object({ answer: z.string(), n: z.number() });

const PIXEL = 'pixel-for-agent.png';
const BRIEF = 'brief-for-agent.txt';
const BRIEF_TEXT = 'The launch code is ZEBRA-7731.\nSecond line.\n';

/** The requests made since `from` (an index into the server's log). */
function since(server: FakeModelServer, from: number): RequestLogEntry[] {
  return server.requests.slice(from).filter((request) => request.method === 'POST');
}

/**
 * What every agent does with a prompt of parts and an `outputSchema`: an image (a file, or bytes)
 * reaches the model as that wire's image, with the very bytes made here; a file's text reaches the
 * model; a typed answer is `output`, typed through the schema; prose and a value that fails the
 * schema end `output-schema`, with the issues and the answer; in a session, per turn.
 */
export function promptConformance(agent: () => PromptAgent): void {
  const drivers: SessionDriver[] = [];
  const png = testPng();

  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    const left = await agent().tag.waitUntilNone(10_000);
    expect(describeProcesses(left)).toBe('none');
    rmSync(join(agent().cwd, PIXEL), { force: true });
    rmSync(join(agent().cwd, BRIEF), { force: true });
  });

  it('a run with an image file: the model request carries its bytes as an image', async () => {
    const { server, cwd } = agent();
    writeFileSync(join(cwd, PIXEL), png.bytes);
    const from = server.requests.length;
    const result = await collectRunResult(agent().run([`${scenarioMarker('echo')}What is in this picture?`, { type: 'image', path: PIXEL }]));
    expect(result.terminal).toMatchObject({ type: 'terminal.completed' });
    const images = since(server, from).flatMap((request) => imagesInRequest(request.body));
    expect(images).toContainEqual({ mimeType: 'image/png', data: png.base64 });
  });

  it("a run with a file: the file's text reaches the model", async () => {
    const { server, cwd } = agent();
    writeFileSync(join(cwd, BRIEF), BRIEF_TEXT);
    const from = server.requests.length;
    const result = await collectRunResult(agent().run([`${scenarioMarker('echo')}Summarize the brief.`, { type: 'file', path: BRIEF }]));
    expect(result.terminal).toMatchObject({ type: 'terminal.completed' });
    const bodies = since(server, from).map((request) => JSON.stringify(request.body));
    expect(bodies.some((body) => body.includes('ZEBRA-7731'))).toBe(true);
  });

  it('a run with outputSchema: a valid answer is the typed output', async () => {
    const result = await collectRunResult(agent().run(`${scenarioMarker('json_ok')}Answer as JSON.`, Answer));
    expect(result.terminal).toMatchObject({ type: 'terminal.completed' });
    if (!result.ok) throw new Error(`the run failed: ${result.terminal?.message ?? 'incomplete'}`);
    const output: { answer: string; n: number } = result.output;
    expect(output).toEqual(JSON_OK_VALUE);
    expect(result.terminal.output).toEqual(JSON_OK_VALUE);
  });

  it('a run with outputSchema: prose is a failure of its own (output-schema), with the issues and the answer', async () => {
    const result = await collectRunResult(agent().run(`${scenarioMarker('json_prose')}Answer as JSON.`, Answer));
    expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'output-schema' });
    if (result.terminal?.type !== 'terminal.failed') throw new Error('not failed');
    expect(result.terminal.outputIssues?.length).toBeGreaterThan(0);
    expect(result.terminal.answer).toContain(JSON_PROSE);
  });

  it('a run with outputSchema: JSON that fails the schema is output-schema, naming the field', async () => {
    const result = await collectRunResult(agent().run(`${scenarioMarker('json_bad')}Answer as JSON.`, Answer));
    expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'output-schema' });
    if (result.terminal?.type !== 'terminal.failed') throw new Error('not failed');
    expect(result.terminal.outputIssues?.map((issue) => issue.path)).toContain('answer');
  });

  it('a session: an image as bytes reaches the model; a turn with outputSchema gets its output, a bad answer fails that turn only', async () => {
    const { server } = agent();
    const driver = new SessionDriver((onStopped) => agent().session(onStopped));
    drivers.push(driver);
    const from = server.requests.length;
    driver.send({ type: 'prompt', text: `${scenarioMarker('echo')}Describe this.`, parts: [{ type: 'image', data: png.bytes, mimeType: 'image/png' }] });
    expect(await driver.nextOf('turn.completed', 90_000)).toMatchObject({ turn: 1 });
    const images = since(server, from).flatMap((request) => imagesInRequest(request.body));
    expect(images).toContainEqual({ mimeType: 'image/png', data: png.base64 });

    driver.send({ type: 'prompt', text: `${scenarioMarker('json_ok')}Answer as JSON.`, outputSchema: Answer });
    expect(await driver.nextOf('turn.completed', 90_000)).toMatchObject({ turn: 2, output: JSON_OK_VALUE });

    driver.send({ type: 'prompt', text: `${scenarioMarker('json_bad')}Answer as JSON.`, outputSchema: Answer });
    const failed = await driver.nextOf('turn.failed', 90_000);
    expect(failed).toMatchObject({ turn: 3, reason: 'output-schema' });
    expect(failed.outputIssues?.map((issue) => issue.path)).toContain('answer');
    driver.end();
    expect(await driver.nextOf('terminal.completed', 60_000)).toMatchObject({ type: 'terminal.completed' });
  });
}

/**
 * An ACP agent's file part in a session: it goes as embedded context (an ACP resource with its
 * text), which the agent puts before the model under its own `header`; beside an image, as a
 * `<file>` text block, the image kept (Gemini CLI drops images beside an embedded resource).
 */
export function acpFilePartConformance(agent: () => PromptAgent, header: string): void {
  it(`goes as embedded context (an ACP resource with its text: "${header}"); beside an image, as text, the image kept`, async () => {
    const { server, cwd } = agent();
    const path = join(cwd, 'brief for the session.txt');
    writeFileSync(path, 'The launch code is OKAPI-5150.\n');
    const png = testPng();
    const session = new SessionDriver((onStopped) => agent().session(onStopped));
    try {
      let from = server.requests.length;
      session.send({ type: 'prompt', text: `${scenarioMarker('echo')}Summarize the brief.`, parts: [{ type: 'file', path: 'brief for the session.txt' }] });
      expect(await session.nextOf('turn.completed', 90_000)).toMatchObject({ turn: 1 });
      let bodies = server.requests.slice(from).map((request) => JSON.stringify(request.body));
      expect(bodies.some((body) => body.includes('OKAPI-5150') && body.includes(header) && body.includes(`file://${path}`))).toBe(true);

      from = server.requests.length;
      session.send({ type: 'prompt', text: `${scenarioMarker('echo')}Both, please.`, parts: [{ type: 'file', path: 'brief for the session.txt' }, { type: 'image', data: png.bytes, mimeType: 'image/png' }] });
      expect(await session.nextOf('turn.completed', 90_000)).toMatchObject({ turn: 2 });
      const requests = since(server, from);
      bodies = requests.map((request) => JSON.stringify(request.body));
      expect(requests.flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
      expect(bodies.some((body) => body.includes('OKAPI-5150') && body.includes(JSON.stringify(`<file path=${JSON.stringify(path)}>`).slice(1, -1)))).toBe(true);
      session.end();
      await session.done;
    } finally {
      session.unsubscribe();
      rmSync(path, { force: true });
    }
  });
}

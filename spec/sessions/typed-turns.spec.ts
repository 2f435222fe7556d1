import { afterEach, describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import type { SessionProtocol } from '../../lib/index.js';
import { SessionDriver } from '../conformance/session-driver.js';
import { testPng } from '../conformance/scenarios.js';
import { fixtureProtocol, fixtureSession } from '../helpers/fixture-session.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// Prompt parts and typed answers in the session shell, on a real child process (the fixture agent
// says what its turn's text asks: `echo:X` says "X|").

const TAG = createProcessTag('AGENT_RX_TYPED_TURNS');
const drivers: SessionDriver[] = [];
const Point = z.object({ x: z.number(), y: z.number() });

/** The fixture's protocol, told that it takes images; it writes what a turn was given. */
const seeing: SessionProtocol<{ ready: boolean }> = {
  ...fixtureProtocol,
  prompts: { image: true, file: true },
  act: (state, ask) => {
    if (ask.type !== 'start') return fixtureProtocol.act(state, ask);
    const parts = (ask.input.content ?? []).map((part) => (part.type === 'image' ? `image:${part.mimeType}:${String(part.bytes)}` : part.type));
    return { outputs: [{ type: 'write', line: { op: 'start', text: `echo:${parts.join(',')}` } }] };
  },
};

function drive(protocol = fixtureProtocol): SessionDriver {
  const driver = new SessionDriver((onStopped) => fixtureSession(onStopped, { tag: TAG, protocol }));
  drivers.push(driver);
  return driver;
}

afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.unsubscribe();
  expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
});

describe('typed turns in a session', () => {
  it('gives a turn with outputSchema its parsed output; a turn whose answer fails gets output-schema, and the session goes on', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: 'echo:{"x":1,"y":2}', outputSchema: Point, id: 'p1' });
    expect(await session.nextOf('turn.completed')).toEqual({ type: 'turn.completed', turn: 1, stopReason: 'end_turn', output: { x: 1, y: 2 } });

    session.send({ type: 'prompt', text: 'echo:{"x":"one"}', outputSchema: Point });
    const failed = await session.nextOf('turn.failed');
    expect(failed).toMatchObject({ turn: 2, reason: 'output-schema', answer: '{"x":"one"}|' });
    expect(failed.outputIssues?.map((issue) => issue.path)).toEqual(['x', 'y']);

    // The repair: a follow-up that quotes the issues, under the same schema.
    const issues = (failed.outputIssues ?? []).map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    session.send({ type: 'follow-up', text: `echo:{"x":1,"y":0} (fixed: ${issues})`, outputSchema: Point });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 3, output: { x: 1, y: 0 } });

    session.send({ type: 'prompt', text: 'echo:no schema, any text' });
    const plain = await session.nextOf('turn.completed');
    expect(plain).toMatchObject({ turn: 4 });
    expect('output' in plain).toBe(false);
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed' });
  });

  it('drops a command with a part its agent cannot take, or cannot be read, naming it (unsupported); nothing is lost', async () => {
    const session = drive();
    const png = testPng();
    session.send({ type: 'prompt', text: 'look', parts: [{ type: 'image', data: png.bytes, mimeType: 'image/png' }], id: 'img' });
    expect(await session.nextOf('input.dropped')).toEqual({
      type: 'input.dropped',
      kind: 'prompt',
      reason: 'unsupported',
      message: 'fixture sessions cannot take an image (parts[0])',
      text: 'look',
      commandId: 'img',
    });
    session.send({ type: 'prompt', text: 'read', parts: [{ type: 'file', path: '/nonexistent/agent-rx-missing.txt' }] });
    expect(await session.nextOf('input.dropped')).toMatchObject({ reason: 'unsupported', message: 'parts[0]: cannot read /nonexistent/agent-rx-missing.txt (ENOENT)' });
    session.send({ type: 'prompt', text: 'echo:still here' });
    expect(await session.nextOf('assistant')).toEqual({ type: 'assistant', text: 'still here|' });
    session.end();
    await session.done;
  });

  it('gives a protocol that takes images the content in order: the text, then each part read and checked', async () => {
    const session = drive(seeing);
    const png = testPng();
    session.send({ type: 'prompt', text: 'look', parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }, { type: 'text', text: 'and this' }, { type: 'image', data: png.bytes, mimeType: 'image/png' }] });
    expect(await session.nextOf('assistant', 10_000)).toEqual({ type: 'assistant', text: `text,image:image/png:${String(png.bytes.length)},text,image:image/png:${String(png.bytes.length)}|` });
    session.end();
    await session.done;
  });
});

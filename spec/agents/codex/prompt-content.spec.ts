import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { from, lastValueFrom, toArray } from 'rxjs';
import * as z from 'zod';
import { runCodex, type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { codexAppServerDialect, codexAppServerProtocol, type AppServerSessionState } from '../../../lib/dialects.js';
import { codexAgent } from '../../../lib/agents/codex/definition.js';
import { turnInput } from '../../../lib/agents/codex/app-server/session.js';
import { inlineImage } from '../../../lib/agents/codex/tool-content.js';
import { outputContract, outputInstruction } from '../../../lib/operators/output-schema.js';
import type { PromptContent } from '../../../lib/operators/prompt-parts.js';
import type { ProtocolReaction, SessionProtocol } from '../../../lib/operators/session-protocol.js';
import { agentOutputToMessages } from '../../../lib/operators/agent-output-to-messages.js';
import { makeOverlay } from '../../../lib/process/overlay.js';
import type { SessionInput } from '../../../lib/sessions/session-machine.js';
import { runInvocation } from '../../../lib/sources/run-agent.js';
import { exit } from '../../helpers/items.js';
import { fixture } from '../../helpers/processes.js';
import { processInvocation } from '../../helpers/invocation.js';

/** A 1x1 PNG, as the fixtures hold it. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const Answer = z.object({ answer: z.string(), n: z.number() });
const ANSWER_SCHEMA = { type: 'object', properties: { answer: { type: 'string' }, n: { type: 'number' } }, required: ['answer', 'n'], additionalProperties: false };

const folder = mkdtempSync(join(tmpdir(), 'agent-rx-codex-prompt-'));
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

const content: PromptContent = [
  { type: 'text', text: 'Look at these.' },
  { type: 'file', path: '/work/brief.txt', text: 'The brief.\n' },
  { type: 'image', data: PNG, mimeType: 'image/png', bytes: 70, path: '/work/pixel.png' },
  { type: 'text', text: '' },
  { type: 'text', text: 'Then answer.' },
];
const ITEMS = [
  { type: 'text', text: 'Look at these.', text_elements: [] },
  { type: 'text', text: '<file path="/work/brief.txt">\nThe brief.\n</file>', text_elements: [] },
  { type: 'image', url: `data:image/png;base64,${PNG}` },
  { type: 'text', text: 'Then answer.', text_elements: [] },
];

/** A protocol whose thread is open. */
function opened(): { readonly protocol: SessionProtocol<AppServerSessionState>; readonly state: AppServerSessionState } {
  const protocol = codexAppServerProtocol({ thread: { start: { cwd: '/work' } } });
  const state = protocol.createState();
  protocol.read(state, { type: 'response', id: 'agent-rx-thread', result: { thread: { id: 't1' } } });
  return { protocol, state };
}

const lines = (reaction: ProtocolReaction): unknown[] => (reaction.outputs ?? []).flatMap((output) => (output.type === 'write' ? [output.line] : []));
const input = (fields: Partial<SessionInput> = {}): SessionInput => ({ kind: 'prompt', text: 'Look at these.', ...fields });

describe('codexAppServerProtocol: prompt parts and schemas on the wire', () => {
  it('takes images and files, and a schema natively', () => {
    expect(codexAppServerProtocol({ thread: { start: {} } }).prompts).toEqual({ image: true, file: true, nativeOutput: true });
  });

  it('turn/start: the parts in order (text, a file as a <file> block, an image as a data URL, no empty text); the schema as outputSchema', () => {
    const { protocol, state } = opened();
    const output = outputContract(Answer);
    expect(lines(protocol.act(state, { type: 'start', turn: 1, input: input({ content, output }) }))).toEqual([
      { id: 'agent-rx-1', method: 'turn/start', params: { threadId: 't1', input: ITEMS, outputSchema: ANSWER_SCHEMA } },
    ]);
  });

  it('turn/start without parts or a schema: the text alone, no outputSchema', () => {
    const { protocol, state } = opened();
    expect(lines(protocol.act(state, { type: 'start', turn: 1, input: input() }))).toEqual([
      { id: 'agent-rx-1', method: 'turn/start', params: { threadId: 't1', input: [{ type: 'text', text: 'Look at these.', text_elements: [] }] } },
    ]);
  });

  it('a prompt that waited for the thread is sent with its parts and schema once the thread is open', () => {
    const protocol = codexAppServerProtocol({ thread: { start: { cwd: '/work' } } });
    const state = protocol.createState();
    expect(lines(protocol.act(state, { type: 'start', turn: 1, input: input({ content, output: outputContract(ANSWER_SCHEMA) }) }))).toEqual([]);
    const reaction = protocol.read(state, { type: 'response', id: 'agent-rx-thread', result: { thread: { id: 't1' } } });
    expect(lines(reaction)).toEqual([{ id: 'agent-rx-1', method: 'turn/start', params: { threadId: 't1', input: ITEMS, outputSchema: ANSWER_SCHEMA } }]);
  });

  it("turn/steer: the steer's parts; it takes no schema, so a steer's schema goes last as the instruction; sent as turn/start (outputSchema) when Codex has no active turn", () => {
    const { protocol, state } = opened();
    protocol.act(state, { type: 'start', turn: 1, input: input() });
    protocol.read(state, { type: 'response', id: 'agent-rx-1', result: { turn: { id: 'u1' } } });
    const output = outputContract(Answer);
    const steer = input({ kind: 'steer', content, output });
    expect(lines(protocol.act(state, { type: 'steer', turn: 1, input: steer }))).toEqual([
      {
        id: 'agent-rx-2',
        method: 'turn/steer',
        params: { threadId: 't1', expectedTurnId: 'u1', input: [...ITEMS, { type: 'text', text: outputInstruction(output), text_elements: [] }] },
      },
    ]);
    const refused = protocol.read(state, { type: 'response', id: 'agent-rx-2', error: { code: -32600, message: 'no active turn to steer' } });
    expect(lines(refused)).toEqual([{ id: 'agent-rx-3', method: 'turn/start', params: { threadId: 't1', input: ITEMS, outputSchema: ANSWER_SCHEMA } }]);
  });

  it('a steer held until the turn is known goes with its parts', () => {
    const { protocol, state } = opened();
    protocol.act(state, { type: 'start', turn: 1, input: input() });
    expect(lines(protocol.act(state, { type: 'steer', turn: 1, input: input({ kind: 'steer', content }) }))).toEqual([]);
    const reaction = protocol.read(state, { type: 'response', id: 'agent-rx-1', result: { turn: { id: 'u1' } } });
    expect(lines(reaction)).toEqual([{ id: 'agent-rx-2', method: 'turn/steer', params: { threadId: 't1', expectedTurnId: 'u1', input: ITEMS } }]);
  });

  it('turnInput: the text when there is no content; an instruction last', () => {
    expect(turnInput({ text: 'hi' })).toEqual([{ type: 'text', text: 'hi', text_elements: [] }]);
    expect(turnInput({ text: 'hi' }, 'as JSON')).toEqual([
      { type: 'text', text: 'hi', text_elements: [] },
      { type: 'text', text: 'as JSON', text_elements: [] },
    ]);
  });
});

describe('runCodex: prompt parts and schemas on the command line', () => {
  const brief = join(folder, 'brief.txt');
  writeFileSync(brief, 'The launch code is ZEBRA-7731.\n');
  const pixel = join(folder, 'pixel.png');
  writeFileSync(pixel, Buffer.from(PNG, 'base64'));

  it('exec with outputSchema: the schema natively (the setup makes its file), the prompt without the instruction', () => {
    const invocation = processInvocation(codexAgent, { prompt: 'Answer as JSON.', outputSchema: Answer });
    expect(invocation.setup).toEqual({ outputSchema: ANSWER_SCHEMA });
    expect(invocation.processOptions.stdin).toBe('Answer as JSON.');
    // The file's argument is the overlay's, appended when the run starts.
    expect(invocation.args).not.toContain('--output-schema');
    expect(processInvocation(codexAgent, { prompt: 'no schema' }).setup).toBeUndefined();
  });

  it('exec with a file: its text in the prompt, as a <file> block with its absolute path', () => {
    const invocation = processInvocation(codexAgent, { prompt: ['Summarize.', { type: 'file', path: 'brief.txt' }], cwd: folder });
    expect(invocation.processOptions.stdin).toBe(`Summarize.\n\n<file path=${JSON.stringify(brief)}>\nThe launch code is ZEBRA-7731.\n</file>`);
  });

  it('an image goes over app-server (a one-prompt session with the parts and the schema); exec with an image is a TypeError', () => {
    const invocation = runInvocation(codexAgent, { prompt: ['What is this?', { type: 'image', path: pixel }], outputSchema: Answer });
    if (!('asSession' in invocation)) throw new Error('not a session');
    expect(invocation.asSession.prompt.content.map((part) => part.type)).toEqual(['text', 'image']);
    expect(invocation.asSession.prompt.output?.jsonSchema).toEqual(ANSWER_SCHEMA);
    expect(() => runCodex({ prompt: ['What is this?', { type: 'image', path: pixel }], transport: 'exec' })).toThrow(new TypeError("agent-rx: a Codex run with an image goes over transport 'app-server'"));
  });

  it("the setup's overlay: schema.json in a folder of its own, named by --output-schema, no variable set, removed after", () => {
    const overlay = codexAgent.setup?.overlay?.({ outputSchema: ANSWER_SCHEMA });
    if (overlay === undefined) throw new Error('no overlay');
    expect(overlay.env).toBeUndefined();
    const made = makeOverlay(overlay, { KEEP: '1' });
    if (!made.ok) throw new Error(made.problem);
    expect(made.env).toEqual({ KEEP: '1' });
    expect(made.args[0]).toBe('--output-schema');
    const file = made.args[1] ?? '';
    expect(made.args).toHaveLength(2);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(ANSWER_SCHEMA);
    made.remove();
    made.remove();
    expect(existsSync(file)).toBe(false);
  });
});

describe('Codex tool content', () => {
  it('exec: an MCP result\'s image block is the image content of its tool.completed', async () => {
    // A stand-in prints the transcript as Codex would.
    const messages = await lastValueFrom(runCodex({ prompt: 'replayed', executable: process.execPath, executableArgs: [fixture('fake-pi.mjs'), fixture('codex-content/exec-mcp-image.jsonl')] }).pipe(toArray()));
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      expect.objectContaining({ type: 'tool.call', toolCallId: 'item_0', name: 'mcp__shots__screenshot' }),
      { type: 'tool.completed', toolCallId: 'item_0', name: 'mcp__shots__screenshot', output: 'The page, 1x1.', content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
    ]);
  });

  it('app-server: a new file is a diff with no old text (updates and deletes, a unified diff or the old text only, are not); an MCP image; a generated image held inline; a viewed image names its path', async () => {
    const text = readFileSync(fixture('codex-content/app-server-tool-content.jsonl'), 'utf8');
    const items: ProcessItem[] = [...text.trim().split('\n').map((line): ProcessItem => ({ kind: 'line', text: line })), exit()];
    const messages: CliMessage[] = await lastValueFrom(from(items).pipe(agentOutputToMessages(codexAppServerDialect()), toArray()));
    const results = messages.filter((message) => message.type === 'tool.completed' || message.type === 'tool.failed');
    expect(results).toEqual([
      {
        type: 'tool.completed',
        toolCallId: 'call_patch',
        name: 'file_change',
        output: 'add /work/new.txt\nupdate /work/old.txt\ndelete /work/gone.txt',
        content: [{ type: 'diff', path: '/work/new.txt', oldText: null, newText: 'first line\nsecond line\n' }],
      },
      { type: 'tool.failed', toolCallId: 'call_refused', name: 'file_change', output: 'add /work/other.txt' },
      {
        type: 'tool.completed',
        toolCallId: 'call_shot',
        name: 'mcp__shots__screenshot',
        output: expect.stringContaining('The page.'),
        content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
      },
      { type: 'tool.completed', toolCallId: 'call_view', name: 'view_image', output: '' },
      { type: 'tool.completed', toolCallId: 'ig_1', name: 'image_generation', output: '/home/u/.codex/generated_images/ig_1.png', content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
      { type: 'tool.completed', toolCallId: 'ig_2', name: 'image_generation', output: '' },
    ]);
    expect(messages.filter((message) => message.type === 'tool.call')).toEqual(
      expect.arrayContaining([
        { type: 'tool.call', toolCallId: 'call_view', name: 'view_image', input: { path: '/work/shot.png' }, kind: 'read', summary: '/work/shot.png' },
        { type: 'tool.call', toolCallId: 'ig_1', name: 'image_generation', input: { revisedPrompt: null }, kind: 'other' },
      ]),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
  });

  it('inlineImage: base64 whose bytes are an image, or a data URL; not a URL to fetch, not other bytes, not empty', () => {
    expect(inlineImage(PNG)).toEqual({ type: 'image', data: PNG, mimeType: 'image/png' });
    expect(inlineImage(`data:image/png;base64,${PNG}`)).toEqual({ type: 'image', data: PNG, mimeType: 'image/png' });
    expect(inlineImage('https://images.invalid/x.png')).toBeUndefined();
    expect(inlineImage(Buffer.from('hello, not an image').toString('base64'))).toBeUndefined();
    expect(inlineImage('')).toBeUndefined();
    expect(inlineImage(null)).toBeUndefined();
  });
});

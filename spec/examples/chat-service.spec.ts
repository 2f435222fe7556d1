import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { ChatService } from '../../examples/chat-service.js';
import { piSession } from '../../lib/index.js';
import { scenarioMarker } from '../conformance/fake-model-server.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

/** examples/chat-service.ts on the real pi and the fake model server: two conversations, each its own process. */

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const TAG = createProcessTag('AGENT_RX_CHAT_SERVICE');
const world = piWorld();

const service = (): ChatService =>
  new ChatService(() => piSession({ executable: PI, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd: world.env.cwd, env: { ...world.env.env, ...TAG.env } }));

describe('examples/chat-service.ts', () => {
  it('keeps conversations apart, each in one process over its turns, and ends one gracefully', async () => {
    const chats = service();
    const a = chats.start();
    const b = chats.start();
    const stream = chats.messages(a);
    if (stream === undefined) throw new Error('no conversation');
    const messagesOfA = lastValueFrom(stream.pipe(toArray()));
    chats.send(a, { type: 'prompt', text: 'first for a' });
    chats.send(b, { type: 'prompt', text: 'only for b' });
    chats.send(a, { type: 'prompt', text: 'second for a' });
    chats.end(a);
    const messages = await messagesOfA;
    const answers = messages.filter((message) => message.type === 'turn.completed');
    expect(answers).toHaveLength(2);
    expect(messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('')).toContain(
      'User texts in context: 2 ("first for a" | "second for a").',
    );
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    expect(chats.send(a, { type: 'prompt', text: 'too late' })).toBe(false);
    chats.stopAll();
    expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
  });

  it('stopAll stops a conversation mid-turn, its tool included', async () => {
    const chats = service();
    const id = chats.start();
    chats.send(id, { type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep` });
    const sleep = await TAG.waitFor('sleep');
    chats.stopAll();
    expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
    expect(isAlive(sleep)).toBe(false);
  });
});

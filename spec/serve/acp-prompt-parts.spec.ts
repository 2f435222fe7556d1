import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as acp from '@agentclientprotocol/sdk';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { piAgent } from '../../lib/index.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';
import { AcpBridge } from '../conformance/acp-bridge.js';
import { startFakeModelServer, type FakeModelServer, type RequestLogEntry } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';
import { imagesInRequest, scenarioMarker, testPng } from '../conformance/scenarios.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

/**
 * `agent-rx acp --agent pi` driven by the ACP SDK's client over stdio, the real pi behind it and
 * the fake model server on 127.0.0.1: what an editor's prompt holds besides text reaches the model.
 * Whether pi's sessions take images is read from its definition, as the command does: where they
 * do, the image's bytes reach the model; where not, the prompt is refused (`unsupported`). The
 * files' text reaches the model where pi's session protocol gives it the command's parts.
 */

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const tag = createProcessTag('AGENT_RX_ACP_PARTS');
let server: FakeModelServer;
let env: PiEnv;

beforeAll(async () => {
  server = await startFakeModelServer();
  env = await createPiEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await server.close();
  await env.cleanup();
});

const since = (from: number): RequestLogEntry[] => server.requests.slice(from).filter((request) => request.method === 'POST');

describe('agent-rx acp --agent pi: images, embedded files and file links in a prompt', () => {
  it('says in initialize whether pi takes images; an image reaches the model as its bytes (or is refused); an embedded file and a linked one reach it as text', async () => {
    const { prompts } = sessionInvocation(piAgent, { executable: PI, provider: OPENAI_PROVIDER, model: 'recall' }).protocol;
    const takesImages = prompts?.image === true;
    // A protocol that declares what its prompts take gives the agent the command's parts
    // (`ask.input.content`); one that does not yet gives it the command's text alone.
    const takesParts = prompts !== undefined;
    const linked = join(env.cwd, 'linked-brief.txt');
    writeFileSync(linked, 'The linked brief says OKAPI-5150.\n');
    const bridge = new AcpBridge(['--agent', 'pi', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall'], { ...env.env, ...tag.env });
    try {
      const init = await bridge.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      expect(init.agentCapabilities?.promptCapabilities).toEqual({ image: takesImages, audio: false, embeddedContext: true });
      const { sessionId } = await bridge.agent.request(acp.methods.agent.session.new, { cwd: env.cwd, mcpServers: [] });

      const png = testPng();
      const from = server.requests.length;
      const withImage = bridge.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: `${scenarioMarker('echo')}What is in this picture?` }, { type: 'image', data: png.base64, mimeType: 'image/png' }],
      });
      if (takesImages) {
        expect(await withImage).toMatchObject({ stopReason: 'end_turn' });
        expect(since(from).flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
      } else {
        await expect(withImage).rejects.toMatchObject({ message: expect.stringContaining('cannot take an image') as unknown, data: { reason: 'unsupported' } });
        expect(since(from)).toEqual([]);
      }

      const next = server.requests.length;
      const withFiles = await bridge.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: 'text', text: `${scenarioMarker('echo')}Summarize these.` },
          { type: 'resource', resource: { uri: pathToFileURL(join(env.cwd, 'open-buffer.md')).href, text: 'The open buffer says ZEBRA-7731.' } },
          { type: 'resource_link', uri: pathToFileURL(linked).href, name: 'linked-brief.txt' },
        ],
      });
      expect(withFiles).toMatchObject({ stopReason: 'end_turn' });
      const bodies = since(next).map((request) => JSON.stringify(request.body));
      expect(bodies.some((body) => body.includes('Summarize these.'))).toBe(true);
      if (takesParts) expect(bodies.some((body) => body.includes('ZEBRA-7731') && body.includes('OKAPI-5150') && body.includes('open-buffer.md'))).toBe(true);
    } finally {
      bridge.disconnect();
      await bridge.exited;
      rmSync(linked, { force: true });
    }
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  }, 120_000);
});

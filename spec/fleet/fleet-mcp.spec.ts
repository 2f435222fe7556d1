import { describe, expect, it } from '@jest/globals';
import { firstValueFrom, last } from 'rxjs';
import * as z from 'zod';
import { checkRunSpec, toRunSpec, type RunSpec } from '../../lib/fleet.js';
import { agentRunOptions } from '../../lib/fleet/worker-agents.js';
import { checkMcpCatalog, offeredMcpServers } from '../../lib/fleet/mcp-catalog.js';
import { piAgent } from '../../lib/agents/pi/definition.js';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { runAgent } from '../../lib/sources/run-agent.js';
import { tool, type McpServers } from '../../lib/index.js';
import { fleetWorld } from './fleet-world.js';

// MCP servers on a fleet: a spec names servers of the worker's catalog, the worker resolves the
// names (refusing one it does not offer, as a folder it does not allow) and gives the run their
// configs; host tools (functions) cannot cross Redis and are refused at call time.

const CATALOG: McpServers = {
  docs: { command: 'docs-mcp', args: ['--root', '/srv/docs'], trust: true },
  wiki: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer worker-secret' } },
};

const lookup = tool({ name: 'lookup', description: 'Looks a thing up', input: z.object({ id: z.string() }), run: () => 'found' });

describe('a run spec names MCP servers of the worker', () => {
  it('every agent’s spec takes mcpServers as names', () => {
    for (const agent of AGENT_NAMES) {
      const spec = { agent, options: { prompt: 'p', mcpServers: ['docs', 'wiki'], ...(agent === 'gemini' || agent === 'qwen' ? { session: 'new' } : {}) } } as unknown as RunSpec;
      expect(checkRunSpec(spec).options.mcpServers).toEqual(['docs', 'wiki']);
    }
  });

  it('refuses configs in a spec (what a server is, is the worker’s) and names that are not names', () => {
    expect(() => checkRunSpec({ agent: 'pi', options: { prompt: 'p', mcpServers: { docs: { command: 'docs-mcp' } } } })).toThrow(
      'agent-rx: not a run spec: options.mcpServers names servers of the worker\'s (an array of names, e.g. ["docs"]): what a server is (its command, its URL) is the worker\'s (serveRuns({ mcpServers }))',
    );
    expect(() => checkRunSpec({ agent: 'claude', options: { prompt: 'p', mcpServers: ['a b'] } })).toThrow(/options\.mcpServers\.0 names must start with a letter/);
  });

  it('refuses host tools with a TypeError: their functions cannot cross Redis', () => {
    const spec = { agent: 'pi', options: { prompt: 'p', tools: [lookup] } } as unknown as RunSpec;
    expect(() => toRunSpec(spec)).toThrow(TypeError);
    expect(() => toRunSpec(spec)).toThrow(/options\.tools holds host tools \(tool\(\.\.\.\)\): their functions run in the caller's process and cannot cross Redis/);
    expect(() => checkRunSpec({ agent: 'claude', options: { prompt: 'p', tools: [lookup] } })).toThrow(/cannot cross Redis/);
    // pi's own tool names are still a spec's.
    expect(checkRunSpec({ agent: 'pi', options: { prompt: 'p', tools: ['read'] } }).options).toEqual({ prompt: 'p', tools: ['read'] });
  });
});

describe('the worker’s catalog', () => {
  it('is checked when the worker is made', () => {
    expect(checkMcpCatalog(undefined)).toEqual({});
    expect(checkMcpCatalog(CATALOG)).toBe(CATALOG);
    expect(() => checkMcpCatalog({ docs: { url: 'x' } })).toThrow(TypeError);
    expect(() => checkMcpCatalog({ docs: { type: 'http', url: 'ftp://x' } })).toThrow(/mcpServers docs\.url must be an http or https URL/);
  });

  it('gives the servers a spec names, and refuses one it does not offer', () => {
    expect(offeredMcpServers(CATALOG, undefined)).toEqual({});
    expect(offeredMcpServers(CATALOG, ['wiki'])).toEqual({ wiki: CATALOG['wiki'] });
    expect(() => offeredMcpServers(CATALOG, ['docs', 'mail'])).toThrow('the MCP server mail is not one this worker offers (it offers docs, wiki)');
    expect(() => offeredMcpServers({}, ['toString'])).toThrow('the MCP server toString is not one this worker offers (it offers none)');
  });

  it('puts the resolved servers into the agent’s run options, with the worker’s own servers for the agent', () => {
    const own = { pi: { executable: '/bin/pi', mcpServers: { always: { command: 'always-mcp' } } } };
    const spec = checkRunSpec({ agent: 'pi', options: { prompt: 'p', mcpServers: ['docs'] } });
    const options = agentRunOptions(own, 'w1', spec, { cwd: '/srv', mcpServers: offeredMcpServers(CATALOG, spec.options.mcpServers) }, () => undefined, () => 'deny');
    expect(options).toMatchObject({ prompt: 'p', executable: '/bin/pi', cwd: '/srv', mcpServers: { always: { command: 'always-mcp' }, docs: CATALOG['docs'] } });
    // None named, none given: the option is left out.
    const plain = agentRunOptions({ pi: {} }, 'w1', checkRunSpec({ agent: 'pi', options: { prompt: 'p' } }), { cwd: '/srv', mcpServers: {} }, () => undefined, () => 'deny');
    expect(plain).not.toHaveProperty('mcpServers');
  });

  it('an agent that takes MCP servers in its runs gets the configs (a definition that records its options)', () => {
    let given: Readonly<Record<string, unknown>> | undefined;
    const recording = {
      ...piAgent,
      mcp: { runs: true, sessions: true },
      run: (options: Readonly<Record<string, unknown>>) => {
        given = options;
        throw new Error('recorded');
      },
    } as unknown as typeof piAgent;
    const spec = checkRunSpec({ agent: 'pi', options: { prompt: 'p', mcpServers: ['docs', 'wiki'] } });
    const options = agentRunOptions({ pi: {} }, 'w1', spec, { cwd: process.cwd(), mcpServers: offeredMcpServers(CATALOG, spec.options.mcpServers) }, () => undefined, () => 'deny');
    expect(() => runAgent(recording, options as never)).toThrow('recorded');
    expect(given?.['mcpServers']).toEqual({ docs: CATALOG['docs'], wiki: CATALOG['wiki'] });
  });
});

describe('on a worker, with Redis', () => {
  const world = fleetWorld();

  it('a spec that names a server the worker does not offer is refused, as a folder is (setup)', async () => {
    const worker = await world.startWorker('mcp-1', { mcpServers: CATALOG });
    const dispatcher = world.dispatcher();
    const terminal = await firstValueFrom(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', mcpServers: ['docs', 'mail'] } }).pipe(last()));
    expect(terminal).toMatchObject({
      type: 'terminal.failed',
      reason: 'setup',
      message: 'the worker refused the run: the MCP server mail is not one this worker offers (it offers docs, wiki)',
    });
    await worker.waitFor((line) => line.event === 'ended');
  }, 60_000);

  it('a worker without a catalog refuses every named server, and runs a spec that names none', async () => {
    await world.startWorker('mcp-2');
    const dispatcher = world.dispatcher();
    const refused = await firstValueFrom(dispatcher.run({ agent: 'pi', options: { prompt: 'hi', mcpServers: ['docs'] } }).pipe(last()));
    expect(refused).toMatchObject({ type: 'terminal.failed', reason: 'setup', message: 'the worker refused the run: the MCP server docs is not one this worker offers (it offers none)' });
    const ran = await firstValueFrom(dispatcher.run({ agent: 'pi', options: { prompt: 'hi' } }).pipe(last()));
    expect(ran).toMatchObject({ type: 'terminal.completed' });
  }, 60_000);

  it('dispatcher.run refuses host tools with a TypeError at call time, before anything is enqueued', () => {
    const dispatcher = world.dispatcher();
    const run = () => dispatcher.run({ agent: 'pi', options: { prompt: 'hi', tools: [lookup] } } as unknown as RunSpec);
    expect(run).toThrow(TypeError);
    expect(run).toThrow(/host tools .* cannot cross Redis/);
  });
});

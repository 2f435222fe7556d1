import { describe, expect, it } from '@jest/globals';
import { piAgent } from '../../../lib/agents/pi/definition.js';
import type { RunPiOptions } from '../../../lib/agents/pi/options.js';
import type { PiSetup } from '../../../lib/agents/pi/args.js';
import type { ProcessRunInvocation } from '../../../lib/agents/definition.js';
import { runInvocation } from '../../../lib/sources/run-agent.js';
import { sessionInvocation } from '../../../lib/sessions/agent-session.js';
import { PI_MCP_EXTENSION, PI_PERMISSION_EXTENSION } from '../../../lib/agents/pi/setup/extensions.js';
import { PI_MCP_FILE, piRunOverlay } from '../../../lib/agents/pi/setup/run-overlay.js';
import { makeOverlay } from '../../../lib/process/overlay.js';
import { readFileSync, statSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// A run's invocation as runPi builds it: the options checked against the schema, then mapped.
const buildPiInvocation = (options: RunPiOptions): ProcessRunInvocation<PiSetup> => {
  const invocation = runInvocation(piAgent, options);
  if ('asSession' in invocation) throw new Error('a pi run is a process');
  return invocation;
};

describe('pi arguments', () => {
  it('builds argv from the options, the prompt going to stdin, interrupting with SIGTERM', () => {
    const invocation = buildPiInvocation({
      prompt: '--not-a-flag',
      executable: '/opt/node',
      executableArgs: ['cli.js'],
      provider: 'anthropic',
      model: 'claude',
      thinking: 'high',
      session: { id: 'abc' },
      sessionDir: '/tmp/sessions',
      tools: ['read', 'bash'],
      systemPrompt: 'Be brief.',
      appendSystemPrompt: 'Really.',
      extraArgs: ['--verbose'],
      gracePeriodMs: 500,
    });
    expect(invocation.executable).toBe('/opt/node');
    expect(invocation.args).toEqual([
      'cli.js',
      '--mode',
      'json',
      '--provider',
      'anthropic',
      '--model',
      'claude',
      '--thinking',
      'high',
      '--session',
      'abc',
      '--session-dir',
      '/tmp/sessions',
      '--tools',
      'read,bash',
      '--system-prompt',
      'Be brief.',
      '--append-system-prompt',
      'Really.',
      '--verbose',
    ]);
    expect(invocation.processOptions).toEqual({ interrupt: { signal: 'SIGTERM', stdin: null }, gracePeriodMs: 500, lineEncoding: 'buffer', stdin: '--not-a-flag' });
    expect(invocation.resuming).toBe(true);
  });

  it('maps the session choices and an empty tool list', () => {
    expect(buildPiInvocation({ prompt: 'p' }).args).toEqual(['--mode', 'json']);
    expect(buildPiInvocation({ prompt: 'p', session: 'none', tools: [] }).args).toEqual(['--mode', 'json', '--no-session', '--no-tools']);
    const continuing = buildPiInvocation({ prompt: 'p', session: 'continue' });
    expect(continuing.args).toEqual(['--mode', 'json', '--continue']);
    expect(continuing.resuming).toBe(true);
  });

  it('lets the caller choose another interrupt', () => {
    expect(buildPiInvocation({ prompt: 'p', interrupt: { signal: 'SIGINT' } }).processOptions.interrupt).toEqual({ signal: 'SIGINT' });
  });

  it('rejects bad options with a TypeError', () => {
    const bad: unknown[] = [
      null,
      { prompt: '   ' },
      { prompt: 'p', executable: '' },
      { prompt: 'p', model: 3 },
      { prompt: 'p', extraArgs: [1] },
      { prompt: 'p', session: { id: '' } },
      { prompt: 'p', agentRetry: 'no' },
      { prompt: 'p', thinking: 'max' },
      { prompt: 'p', modle: 'typo' },
    ];
    for (const options of bad) expect(() => buildPiInvocation(options as never)).toThrow(TypeError);
  });

  it('names the option and what it must be', () => {
    expect(() => buildPiInvocation({ prompt: 'p', thinking: 'max' } as never)).toThrow('agent-rx: thinking must be one of off, minimal, low, medium, high, xhigh; got "max"');
    expect(() => buildPiInvocation({ prompt: 'p', modle: 'typo' } as never)).toThrow('agent-rx: a pi run has no option "modle"');
    expect(() => buildPiInvocation({ prompt: ' ' })).toThrow('agent-rx: prompt must not be empty (nor only whitespace); got " "');
    expect(() => buildPiInvocation({ prompt: 'p', session: { id: '' } })).toThrow('agent-rx: session.id must be a non-empty string; got ""');
  });

  it('asks for a configuration without retries when agentRetry is false, kept sessions unless none are saved', () => {
    expect(buildPiInvocation({ prompt: 'p' }).setup).toBeUndefined();
    expect(buildPiInvocation({ prompt: 'p', agentRetry: false }).setup).toEqual({ noRetry: { savesSession: true } });
    expect(buildPiInvocation({ prompt: 'p', agentRetry: false, session: 'none' }).setup).toEqual({ noRetry: { savesSession: false } });
  });

  it('a session with permission loads the permission extension, after its own flags and before extraArgs; the policy goes on the invocation', () => {
    const permission = (): 'allow' => 'allow';
    const invocation = sessionInvocation(piAgent, { model: 'm', extraArgs: ['--verbose'], permission, permissionTimeoutMs: 5000 });
    expect(invocation.args).toEqual(['--mode', 'rpc', '--model', 'm', '--extension', PI_PERMISSION_EXTENSION, '--verbose']);
    expect(invocation.permission).toBe(permission);
    expect(invocation.permissionTimeoutMs).toBe(5000);
    expect(invocation.processOptions).not.toHaveProperty('permission');
    expect(sessionInvocation(piAgent, { permission: 'ask' }).args).toEqual(['--mode', 'rpc', '--extension', PI_PERMISSION_EXTENSION]);
  });

  it('a session without permission loads no extension and asks nothing', () => {
    const invocation = sessionInvocation(piAgent, { model: 'm' });
    expect(invocation.args).toEqual(['--mode', 'rpc', '--model', 'm']);
    expect(invocation.permission).toBeUndefined();
  });

  it("the extension is a folder pi loads by itself: index.ts in the sources (index.js once built)", () => {
    expect(existsSync(join(PI_PERMISSION_EXTENSION, 'index.ts')) || existsSync(join(PI_PERMISSION_EXTENSION, 'index.js'))).toBe(true);
  });

  it("a session checks permission; a run with permission is a one-prompt RPC session (pi asks only there), and refuses 'ask'", () => {
    expect(() => sessionInvocation(piAgent, { permission: 'maybe' } as never)).toThrow(TypeError);
    expect(() => sessionInvocation(piAgent, { permission: 'ask', permissionTimeoutMs: -1 } as never)).toThrow(TypeError);
    expect(runInvocation(piAgent, { prompt: 'p', model: 'm', permission: 'allow-all', permissionTimeoutMs: 1000 })).toEqual({
      asSession: { options: { model: 'm', permission: 'allow-all', permissionTimeoutMs: 1000 }, prompt: { content: [{ type: 'text', text: 'p' }] } },
    });
    expect(() => runInvocation(piAgent, { prompt: 'p', permission: 'ask' } as never)).toThrow(/permission must be 'allow-all', 'allow-reads', 'deny-all' or a function of the request \('ask' is for sessions/);
  });

  it('gives MCP servers to pi through the MCP extension, their file in the overlay: never in argv, pi\'s own tools kept by the extension', () => {
    const mcpServers = {
      orders: { command: 'node', args: ['orders.js'], env: { KEY: 'v' }, trust: true },
      host: { type: 'http' as const, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer secret' } },
    };
    const run = buildPiInvocation({ prompt: 'p', mcpServers, tools: ['read'] });
    expect(run.args).toEqual(['--mode', 'json']);
    expect(run.processOptions).not.toHaveProperty('mcpServers');
    expect(run.setup).toEqual({
      mcp: {
        servers: { orders: { command: 'node', args: ['orders.js'], env: { KEY: 'v' } }, host: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer secret' } } },
        tools: ['read'],
      },
    });
    expect(buildPiInvocation({ prompt: 'p', mcpServers, tools: [] }).setup?.mcp?.tools).toEqual([]);
    expect(buildPiInvocation({ prompt: 'p', mcpServers }).setup?.mcp).not.toHaveProperty('tools');
    expect(buildPiInvocation({ prompt: 'p', mcpServers: {}, tools: ['read'] })).toMatchObject({ args: ['--mode', 'json', '--tools', 'read'] });
    expect(buildPiInvocation({ prompt: 'p', mcpServers, agentRetry: false, session: 'none' }).setup).toMatchObject({ noRetry: { savesSession: false }, mcp: {} });
    expect(sessionInvocation(piAgent, { mcpServers, permission: 'allow-all' }).setup).toEqual({ mcp: { servers: expect.any(Object) } });

    const made = makeOverlay(piRunOverlay({ mcp: { servers: mcpServers, tools: ['read'] } }), {});
    if (!made.ok) throw new Error(made.problem);
    try {
      const file = made.args[3] ?? '';
      expect(made.args).toEqual(['--extension', PI_MCP_EXTENSION, '--agent-rx-mcp', file]);
      expect(file.endsWith(PI_MCP_FILE)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ servers: mcpServers, tools: ['read'] });
      expect(made.env).toEqual({});
    } finally {
      made.remove();
    }
    expect(existsSync(join(PI_MCP_EXTENSION, 'index.ts')) || existsSync(join(PI_MCP_EXTENSION, 'index.js'))).toBe(true);
  });
});

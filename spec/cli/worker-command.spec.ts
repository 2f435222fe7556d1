import { describe, expect, it } from '@jest/globals';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { tmpdir } from 'node:os';
import { parseWorkerArgs, describeWorkerEvent } from '../../lib/cli/worker-command.js';

const noFile = (path: string): string => {
  throw new Error(`ENOENT: no such file, open '${path}'`);
};

describe('agent-rx worker: its arguments', () => {
  it('takes the Redis URL and defaults the rest', () => {
    expect(parseWorkerArgs(['--redis', 'redis://127.0.0.1:6380'], noFile)).toEqual({
      kind: 'worker',
      settings: {
        redis: 'redis://127.0.0.1:6380',
        concurrency: 1,
        agents: { pi: {} },
        allowCwd: [],
        mcpServers: {},
        name: undefined,
        queue: undefined,
        drainMs: 30_000,
        heartbeatMs: undefined,
        heartbeatTtlMs: undefined,
        json: false,
      },
    });
  });

  it('reads a config file, and flags win over it', () => {
    const config = JSON.stringify({ redis: 'redis://a', concurrency: 4, agents: { pi: { executable: '/opt/pi' }, claude: {} }, allowCwd: [tmpdir()], name: 'w1', drain: '10s', heartbeatTtl: 5000 });
    const request = parseWorkerArgs(['--config', 'w.json', '--concurrency', '2', '--executable', 'claude=/opt/claude', '--drain', '1m', '--json'], () => config);
    expect(request).toEqual({
      kind: 'worker',
      settings: {
        redis: 'redis://a',
        concurrency: 2,
        agents: { pi: { executable: '/opt/pi' }, claude: { executable: '/opt/claude' } },
        allowCwd: [tmpdir()],
        mcpServers: {},
        name: 'w1',
        queue: undefined,
        drainMs: 60_000,
        heartbeatMs: undefined,
        heartbeatTtlMs: 5000,
        json: true,
      },
    });
  });

  it.each([
    [[], /--redis .* is needed/],
    [['--redis', 'redis://r', '--concurrency', '0'], /--concurrency must be an integer >= 1/],
    [['--redis', 'redis://r', '--agents', 'pi,cursor'], new RegExp(`--agents must list some of ${AGENT_NAMES.join(', ')}`)],
    [['--redis', 'redis://r', '--executable', 'pi'], /--executable takes <agent>=<path>/],
    [['--redis', 'redis://r', '--executable', 'claude=/x'], /this worker does not run claude/],
    [['--redis', 'redis://r', '--drain', 'soon'], /--drain must be a duration/],
    [['--redis', 'redis://r', '--heartbeat', '0'], /--heartbeat must be a duration/],
    [['--redis', 'redis://r', 'extra'], /^unexpected argument extra: this command takes options only$/],
    [['--config', 'missing.json'], /--config missing.json cannot be read: ENOENT/],
    [['--redis', 'notaurl'], /^--redis must be a redis:\/\/, rediss:\/\/ or unix:\/\/ URL; got 'notaurl'$/],
    [['--redis', 'http://example'], /^--redis must be a redis:\/\/, rediss:\/\/ or unix:\/\/ URL; got 'http:\/\/example'$/],
    [['--redis', 'redis://'], /^--redis must be a redis:\/\/, rediss:\/\/ or unix:\/\/ URL; got 'redis:\/\/'$/],
    [['--redis', 'redis://r', '--allow-cwd', '/no/such/folder'], /^--allow-cwd \/no\/such\/folder: no such directory$/],
  ])('refuses %j', (argv, message) => {
    const request = parseWorkerArgs(argv, noFile);
    expect(request.kind).toBe('usage-error');
    expect(request.kind === 'usage-error' ? request.message : '').toMatch(message);
  });

  it('refuses a config file whose Redis is not a Redis URL, or whose allowed folder does not exist, naming the file', () => {
    expect(parseWorkerArgs(['--config', 'w.json'], () => '{"redis":"notaurl"}')).toEqual({ kind: 'usage-error', message: "--config w.json: redis must be a redis://, rediss:// or unix:// URL; got 'notaurl'" });
    expect(parseWorkerArgs(['--config', 'w.json'], () => '{"redis":"redis://r","allowCwd":["/no/such/folder"]}')).toEqual({ kind: 'usage-error', message: '--config w.json: allowCwd /no/such/folder: no such directory' });
  });

  it('refuses a config file that is not JSON or names a setting it does not have', () => {
    expect(parseWorkerArgs(['--config', 'c'], () => '{')).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/is not JSON/) });
    expect(parseWorkerArgs(['--config', 'c'], () => '{"redis":"r","agents":{"pi":{"env":{"A":1}}}}')).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/agents\.pi\.env\.A/) });
    expect(parseWorkerArgs(['--config', 'c'], () => '{"redis":"r","executable":"/bin/sh"}')).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/executable/) });
  });

  it('takes the MCP servers runs may name from --mcp-config (Claude Code\'s form) or "mcpServers" in --config; the flag wins', () => {
    const docs = { command: 'docs-mcp', args: ['--root', '/srv/docs'], trust: true };
    const wiki = { type: 'http', url: 'http://127.0.0.1:8931/mcp' };
    const files: Record<string, string> = {
      'mcp.json': JSON.stringify({ mcpServers: { docs } }),
      'w.json': JSON.stringify({ redis: 'redis://r', mcpServers: { wiki } }),
      'bad.json': JSON.stringify({ mcpServers: { docs: { type: 'http', url: 'ftp://x' } } }),
    };
    const read = (path: string): string => {
      const text = files[path];
      if (text === undefined) throw new Error('ENOENT');
      return text;
    };
    expect(parseWorkerArgs(['--redis', 'redis://r', '--mcp-config', 'mcp.json'], read)).toMatchObject({ kind: 'worker', settings: { mcpServers: { docs } } });
    expect(parseWorkerArgs(['--config', 'w.json'], read)).toMatchObject({ kind: 'worker', settings: { mcpServers: { wiki } } });
    expect(parseWorkerArgs(['--config', 'w.json', '--mcp-config', 'mcp.json'], read)).toMatchObject({ kind: 'worker', settings: { mcpServers: { docs } } });
    expect(parseWorkerArgs(['--redis', 'redis://r', '--mcp-config', 'bad.json'], read)).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/^--mcp-config bad.json: mcpServers\.docs/) });
    expect(parseWorkerArgs(['--config', 'c'], () => '{"redis":"redis://r","mcpServers":{"docs":{"args":[]}}}')).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/^--config c: mcpServers\.docs/) });
  });

  it('shows each run event as one line', () => {
    expect(describeWorkerEvent({ type: 'started', runId: 'r1', agent: 'pi' })).toBe('started r1 (pi)');
    expect(describeWorkerEvent({ type: 'refused', runId: 'r1', why: 'duplicate' })).toBe('refused r1: duplicate');
    expect(describeWorkerEvent({ type: 'ended', runId: 'r1', stopped: null })).toBe('ended r1');
    expect(describeWorkerEvent({ type: 'ended', runId: 'r1', stopped: 'cancel' })).toBe('ended r1 (stopped: cancel)');
  });
});

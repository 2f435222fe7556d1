import { describe, expect, it } from '@jest/globals';
import { buildPiInvocation } from '../../../lib/agents/pi/args.js';

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
    expect(invocation.command).toBe('/opt/node');
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
    ];
    for (const options of bad) expect(() => buildPiInvocation(options as never)).toThrow(TypeError);
  });
});

import { describe, expect, it } from '@jest/globals';
import { GEMINI_APPROVAL_MODES, runGemini, type RunGeminiOptions } from '../../../lib/index.js';
import { geminiAgent } from '../../../lib/agents/gemini/definition.js';
import { processInvocation } from '../../helpers/invocation.js';

const buildGeminiInvocation = (options: RunGeminiOptions) => processInvocation(geminiAgent, options);

const BASE = ['--output-format', 'stream-json'];
const argsOf = (options: Omit<RunGeminiOptions, 'prompt'>) => buildGeminiInvocation({ prompt: 'p', ...options }).args;

describe('Gemini CLI arguments', () => {
  it('defaults: --output-format stream-json --skip-trust, the prompt on stdin, stderr lines, one process, SIGTERM to interrupt, a new session', () => {
    expect(buildGeminiInvocation({ prompt: '-p --help' })).toEqual({
      executable: undefined,
      args: [...BASE, '--skip-trust'],
      processOptions: {
        interrupt: { signal: 'SIGTERM', stdin: null },
        env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
        stdin: '-p --help',
        stderrLines: true,
      },
      resuming: false,
    });
  });

  it('builds argv from every option, in order, and passes the process options through', () => {
    const invocation = buildGeminiInvocation({
      prompt: '--not-a-flag',
      executable: '/opt/node',
      executableArgs: ['bundle/gemini.js'],
      model: 'gemini-2.5-flash',
      approvalMode: 'auto_edit',
      session: { resume: '5' },
      skipTrust: true,
      includeDirectories: ['/a', '/b c'],
      agentRetry: false,
      extraArgs: ['--debug', '--allowed-tools', 'read_file'],
      cwd: '/work',
      env: { A: '1', B: undefined },
      gracePeriodMs: 500,
      timeoutMs: 60_000,
    });
    expect(invocation.executable).toBe('/opt/node');
    expect(invocation.args).toEqual([
      'bundle/gemini.js',
      ...BASE,
      '--model=gemini-2.5-flash',
      '--approval-mode=auto_edit',
      '--skip-trust',
      '--include-directories=/a',
      '--include-directories=/b c',
      '--resume=5',
      '--debug',
      '--allowed-tools',
      'read_file',
    ]);
    expect(invocation.args).not.toContain('--not-a-flag');
    expect(invocation.args).not.toContain('-p');
    expect(invocation.processOptions).toEqual({
      interrupt: { signal: 'SIGTERM', stdin: null },
      cwd: '/work',
      env: { GEMINI_CLI_NO_RELAUNCH: 'true', A: '1', B: undefined },
      gracePeriodMs: 500,
      timeoutMs: 60_000,
      stdin: '--not-a-flag',
      stderrLines: true,
    });
    expect(invocation.resuming).toBe(true);
    expect(invocation.setup).toEqual({ noRetries: true, resumed: true });
  });

  it('maps each option on its own', () => {
    const cases: [Omit<RunGeminiOptions, 'prompt'>, string[]][] = [
      [{ model: 'gemini-2.5-pro' }, ['--model=gemini-2.5-pro', '--skip-trust']],
      // A value that starts with - stays one argument.
      [{ model: '-x' }, ['--model=-x', '--skip-trust']],
      ...GEMINI_APPROVAL_MODES.map((mode): [Omit<RunGeminiOptions, 'prompt'>, string[]] => [{ approvalMode: mode }, [`--approval-mode=${mode}`, '--skip-trust']]),
      [{ skipTrust: true }, ['--skip-trust']],
      [{ skipTrust: false }, []],
      [{ includeDirectories: ['/x'] }, ['--skip-trust', '--include-directories=/x']],
      [{ includeDirectories: ['-y'] }, ['--skip-trust', '--include-directories=-y']],
      [{ includeDirectories: [] }, ['--skip-trust']],
      [{ session: 'new' }, ['--skip-trust']],
      [{ session: 'latest' }, ['--skip-trust', '--resume=latest']],
      [{ session: { resume: '3' } }, ['--skip-trust', '--resume=3']],
      [{ session: { id: '11111111-2222-4333-8444-555555555555' } }, ['--skip-trust', '--session-id=11111111-2222-4333-8444-555555555555']],
      [{ agentRetry: true }, ['--skip-trust']],
      [{ agentRetry: false }, ['--skip-trust']],
      [{ extraArgs: ['--sandbox'] }, ['--skip-trust', '--sandbox']],
      [{ extraArgs: [] }, ['--skip-trust']],
    ];
    for (const [options, args] of cases) expect([options, argsOf(options)]).toEqual([options, [...BASE, ...args]]);
    expect(argsOf({ executableArgs: ['gemini.js', '--x'] })).toEqual(['gemini.js', '--x', ...BASE, '--skip-trust']);
    expect(GEMINI_APPROVAL_MODES).toEqual(['default', 'auto_edit', 'yolo', 'plan']);
  });

  it('says which runs resume a session: latest and { resume }, not new nor a new session with a chosen id', () => {
    expect(buildGeminiInvocation({ prompt: 'p' }).resuming).toBe(false);
    expect(buildGeminiInvocation({ prompt: 'p', session: 'new' }).resuming).toBe(false);
    expect(buildGeminiInvocation({ prompt: 'p', session: { id: 'x' } }).resuming).toBe(false);
    expect(buildGeminiInvocation({ prompt: 'p', session: 'latest' }).resuming).toBe(true);
    expect(buildGeminiInvocation({ prompt: 'p', session: { resume: '1' } }).resuming).toBe(true);
  });

  it('agentRetry: false adds no argument: it asks for a home overlay', () => {
    expect(buildGeminiInvocation({ prompt: 'p', agentRetry: false })).toMatchObject({ args: [...BASE, '--skip-trust'], setup: { noRetries: true, resumed: false } });
    expect(buildGeminiInvocation({ prompt: 'p', agentRetry: false }).processOptions.env).toEqual({ GEMINI_CLI_NO_RELAUNCH: 'true' });
  });

  it('one process by default (GEMINI_CLI_NO_RELAUNCH=true); the caller\'s env may set it otherwise, or remove it', () => {
    expect(buildGeminiInvocation({ prompt: 'p', env: { GEMINI_CLI_NO_RELAUNCH: 'false' } }).processOptions.env).toEqual({ GEMINI_CLI_NO_RELAUNCH: 'false' });
    expect(buildGeminiInvocation({ prompt: 'p', env: { GEMINI_CLI_NO_RELAUNCH: undefined } }).processOptions.env).toEqual({ GEMINI_CLI_NO_RELAUNCH: undefined });
    expect(buildGeminiInvocation({ prompt: 'p', env: { GEMINI_API_KEY: 'k' } }).processOptions.env).toEqual({ GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_API_KEY: 'k' });
  });

  it('interrupts with SIGTERM and no stdin byte by default; a caller\'s interrupt replaces it', () => {
    expect(buildGeminiInvocation({ prompt: 'p' }).processOptions.interrupt).toEqual({ signal: 'SIGTERM', stdin: null });
    expect(buildGeminiInvocation({ prompt: 'p', interrupt: { signal: 'SIGINT' } }).processOptions.interrupt).toEqual({ signal: 'SIGINT' });
    expect(buildGeminiInvocation({ prompt: 'p', interrupt: { signal: null, stdin: '\u0003' } }).processOptions.interrupt).toEqual({ signal: null, stdin: '\u0003' });
  });

  it('stdin is always the prompt, byte for byte, and stderr always comes as lines', () => {
    const prompt = '-rf\n«ü» 🚀\r\n';
    expect(buildGeminiInvocation({ prompt }).processOptions.stdin).toBe(prompt);
    expect(buildGeminiInvocation({ prompt }).processOptions).toMatchObject({ stdin: prompt, stderrLines: true });
    // A stdin or stderrLines of the caller's is refused, never silently dropped.
    const forced = { prompt, stdin: 'other', stderrLines: false } as unknown as RunGeminiOptions;
    expect(() => buildGeminiInvocation(forced)).toThrow('agent-rx: a gemini run has no options "stdin", "stderrLines"');
  });

  it('rejects each invalid option with a TypeError, in buildGeminiInvocation and in runGemini at call time', () => {
    const bad: unknown[] = [
      undefined,
      null,
      'prompt',
      {},
      { prompt: '' },
      { prompt: ' \t\n' },
      { prompt: 5 },
      { prompt: 'p', executable: '' },
      { prompt: 'p', executable: 7 },
      { prompt: 'p', executableArgs: 'node' },
      { prompt: 'p', executableArgs: [1] },
      { prompt: 'p', model: '' },
      { prompt: 'p', model: 3 },
      { prompt: 'p', approvalMode: 'always' },
      { prompt: 'p', approvalMode: '' },
      { prompt: 'p', approvalMode: 'YOLO' },
      { prompt: 'p', session: 'continue' },
      { prompt: 'p', session: 'last' },
      { prompt: 'p', session: null },
      { prompt: 'p', session: {} },
      { prompt: 'p', session: { resume: '' } },
      { prompt: 'p', session: { resume: 5 } },
      { prompt: 'p', session: { id: '' } },
      { prompt: 'p', session: { id: null } },
      { prompt: 'p', skipTrust: 'yes' },
      { prompt: 'p', skipTrust: 0 },
      { prompt: 'p', agentRetry: 'no' },
      { prompt: 'p', includeDirectories: '/tmp' },
      { prompt: 'p', includeDirectories: [null] },
      // Gemini CLI would split it at the comma.
      { prompt: 'p', includeDirectories: ['/a,b'] },
      { prompt: 'p', extraArgs: '--debug' },
      { prompt: 'p', extraArgs: [1] },
    ];
    for (const options of bad) {
      expect(() => buildGeminiInvocation(options as RunGeminiOptions)).toThrow(TypeError);
      expect(() => runGemini(options as RunGeminiOptions)).toThrow(TypeError);
    }
    expect(() => argsOf({ approvalMode: 'always' as 'yolo' })).toThrow(/approvalMode must be one of default, auto_edit, yolo, plan/);
    expect(() => argsOf({ session: 'continue' as 'new' })).toThrow(/session must be 'new', 'latest', \{ id \} or \{ resume \}/);
    // Process options are checked by runGemini at call time too.
    for (const options of [{ gracePeriodMs: -1 }, { timeoutMs: 0 }, { idleTimeoutMs: Number.NaN }, { interrupt: { signal: 'TERM' } }, { maxLineBytes: 0 }]) {
      expect(() => runGemini({ prompt: 'p', ...options } as RunGeminiOptions)).toThrow(TypeError);
      expect(() => runGemini({ prompt: 'p', agentRetry: false, ...options } as RunGeminiOptions)).toThrow(TypeError);
    }
  });
});

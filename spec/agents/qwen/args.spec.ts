import { describe, expect, it } from '@jest/globals';
import { QWEN_APPROVAL_MODES, QWEN_MAX_PROMPT_BYTES, runQwen, qwenSession, type RunQwenOptions } from '../../../lib/index.js';
import { qwenAgent } from '../../../lib/agents/qwen/definition.js';
import { processInvocation } from '../../helpers/invocation.js';

const invocation = (options: RunQwenOptions) => processInvocation(qwenAgent, options);
const argsOf = (options: Omit<RunQwenOptions, 'prompt'>) => invocation({ prompt: 'p', ...options }).args;
const BASE = ['--output-format', 'stream-json', '--include-partial-messages'];
const ENV = { QWEN_CODE_NO_RELAUNCH: 'true', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' };

describe('Qwen Code arguments', () => {
  it('defaults: stream-json with partial messages, the prompt as one --prompt= argument, stdin closed, one process, SIGTERM to interrupt, quiet settings', () => {
    expect(invocation({ prompt: '-x --help' })).toEqual({
      executable: undefined,
      args: [...BASE, '--prompt=-x --help'],
      processOptions: { interrupt: { signal: 'SIGTERM', stdin: null }, env: ENV },
      resuming: false,
      setup: { noRetries: false },
    });
  });

  it('builds argv from every option, in order, and passes the process options through', () => {
    const built = invocation({
      prompt: 'fix it',
      executable: '/opt/node',
      executableArgs: ['cli.js'],
      model: 'qwen3-coder-plus',
      approvalMode: 'yolo',
      session: { resume: 'abc' },
      agentRetry: false,
      extraArgs: ['--max-wall-time', '90s'],
      cwd: '/work',
      env: { A: '1', QWEN_CODE_NO_RELAUNCH: undefined },
      gracePeriodMs: 500,
    });
    expect(built).toEqual({
      executable: '/opt/node',
      args: ['cli.js', ...BASE, '--model=qwen3-coder-plus', '--approval-mode=yolo', '--resume=abc', '--prompt=fix it', '--max-wall-time', '90s'],
      processOptions: { interrupt: { signal: 'SIGTERM', stdin: null }, cwd: '/work', gracePeriodMs: 500, env: { ...ENV, A: '1', QWEN_CODE_NO_RELAUNCH: undefined } },
      resuming: true,
      setup: { noRetries: true },
    });
  });

  it('chooses the session: latest is --continue, { id } a new session with that id; both resumes announce session.resumed', () => {
    expect(argsOf({ session: 'latest' })).toEqual([...BASE, '--continue', '--prompt=p']);
    expect(invocation({ prompt: 'p', session: 'latest' }).resuming).toBe(true);
    expect(argsOf({ session: { id: 'f0e1' } })).toEqual([...BASE, '--session-id=f0e1', '--prompt=p']);
    expect(invocation({ prompt: 'p', session: { id: 'f0e1' } }).resuming).toBe(false);
    expect(argsOf({ session: 'new' })).toEqual([...BASE, '--prompt=p']);
  });

  it('takes every approval mode', () => {
    for (const mode of QWEN_APPROVAL_MODES) expect(argsOf({ approvalMode: mode })).toContain(`--approval-mode=${mode}`);
  });

  it('refuses wrong options at call time with a TypeError that names them', () => {
    expect(() => runQwen({ prompt: ' ' })).toThrow(/prompt must not be empty/);
    expect(() => runQwen({ prompt: 'x'.repeat(QWEN_MAX_PROMPT_BYTES + 1) })).toThrow(`prompt must be at most ${String(QWEN_MAX_PROMPT_BYTES)} bytes`);
    expect(() => runQwen({ prompt: 'é'.repeat(QWEN_MAX_PROMPT_BYTES / 2 + 1) })).toThrow(TypeError);
    expect(() => runQwen({ prompt: 'x'.repeat(QWEN_MAX_PROMPT_BYTES) })).not.toThrow();
    expect(() => runQwen({ prompt: 'p', approvalMode: 'always' as never })).toThrow(/approvalMode must be one of plan, default, auto-edit, auto, yolo/);
    expect(() => runQwen({ prompt: 'p', session: 'continue' as never })).toThrow(/session must be 'new', 'latest', \{ id \} or \{ resume \}/);
    expect(() => runQwen({ prompt: 'p', includePartialMessages: false } as never)).toThrow(/has no option "includePartialMessages"/);
    expect(() => qwenSession({ prompt: 'p' } as never)).toThrow(/has no option "prompt"/);
  });

  it('a session is qwen --acp over the ACP client, with the same flags, environment and settings', () => {
    const session = qwenAgent.session({ model: 'm', approvalMode: 'default', agentRetry: false, extraArgs: ['--debug'], cwd: '/work' });
    expect(session.args).toEqual(['--acp', '--model=m', '--approval-mode=default', '--debug']);
    expect(session.processOptions).toEqual({ gracePeriodMs: 10_000, interrupt: { signal: 'SIGTERM', stdin: null }, cwd: '/work', env: ENV });
    expect(session.setup).toEqual({ noRetries: true });
    expect(session.resuming).toBe(false);
    expect(session.dialect?.name).toBe('Qwen Code');
    expect(session.dialect?.tools?.kind('run_shell_command')).toBe('execute');
  });

  it('its flags on the command line: --approval-mode and --session', () => {
    const flag = (name: string) => qwenAgent.flags.find((candidate) => candidate.name === name);
    expect(flag('approval-mode')?.options('yolo')).toEqual({ approvalMode: 'yolo' });
    expect(flag('approval-mode')?.options('always')).toMatch(/must be one of/);
    expect(flag('session')?.options('latest')).toEqual({ session: 'latest' });
    expect(flag('session')?.options('0b7e')).toEqual({ session: { resume: '0b7e' } });
  });

  it('the fleet run spec takes what a caller may choose, and nothing that runs the agent', () => {
    expect(qwenAgent.options.spec.safeParse({ prompt: 'p', model: 'm', approvalMode: 'yolo', session: 'latest', agentRetry: false, timeoutMs: 1000 }).success).toBe(true);
    expect(qwenAgent.options.spec.safeParse({ prompt: 'p', executable: '/bin/sh' }).success).toBe(false);
    expect(qwenAgent.options.spec.safeParse({ prompt: 'p', extraArgs: ['--yolo'] }).success).toBe(false);
  });
});

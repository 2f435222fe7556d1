import { describe, expect, it } from '@jest/globals';
import { QWEN_APPROVAL_MODES, QWEN_MAX_PROMPT_BYTES, runQwen, qwenSession, type RunQwenOptions } from '../../../lib/index.js';
import { qwenAgent } from '../../../lib/agents/qwen/definition.js';
import { processInvocation } from '../../helpers/invocation.js';
import { rootAcceptsObject } from '../../../lib/agents/qwen/args.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';

const invocation = (options: RunQwenOptions) => processInvocation(qwenAgent, options);
const argsOf = (options: Omit<RunQwenOptions, 'prompt'> & { prompt?: RunQwenOptions['prompt'] }) => invocation({ prompt: 'p', ...options }).args;
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
    // Its prompts may carry images: its model is said to take them (else Qwen Code may put a placeholder in their place).
    expect(session.setup).toEqual({ noRetries: true, images: true });
    expect(session.resuming).toBe(false);
    expect(session.dialect?.name).toBe('Qwen Code');
    expect(session.dialect?.tools?.kind('run_shell_command')).toBe('execute');
  });

  it('an outputSchema goes natively: --json-schema=<its JSON Schema>, before the prompt, which holds no instruction', () => {
    const Answer = z.object({ answer: z.string(), n: z.number() });
    const args = argsOf({ outputSchema: Answer });
    expect(args).toEqual([...BASE, expect.stringMatching(/^--json-schema=\{/), '--prompt=p']);
    const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(Answer);
    expect(JSON.parse(args[3]?.slice('--json-schema='.length) ?? '')).toEqual(jsonSchema);
    expect(argsOf({ outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } })).toContain('--json-schema={"type":"object","properties":{"ok":{"type":"boolean"}}}');
  });

  it('refuses a schema whose root takes no object at call time, for every run (Qwen Code takes the answer as a tool call\'s arguments)', () => {
    expect(() => runQwen({ prompt: 'p', outputSchema: z.array(z.string()) })).toThrow(/Qwen Code run's outputSchema must accept an object at its root/);
    expect(() => runQwen({ prompt: 'p', outputSchema: { type: 'string' } })).toThrow(TypeError);
    expect(() => runQwen({ prompt: 'p', outputSchema: z.string(), permission: 'allow-all' })).toThrow(TypeError);
    expect(() => runQwen({ prompt: 'p', outputSchema: z.union([z.object({ a: z.string() }), z.string()]) })).not.toThrow();
  });

  it('which roots accept an object, as Qwen Code checks them', () => {
    expect(rootAcceptsObject({})).toBe(true);
    expect(rootAcceptsObject({ type: ['object', 'null'] })).toBe(true);
    expect(rootAcceptsObject({ type: 'array' })).toBe(false);
    expect(rootAcceptsObject({ $ref: '#/$defs/A', $defs: { A: { type: 'object' } } })).toBe(false);
    expect(rootAcceptsObject({ enum: ['a', 'b'] })).toBe(false);
    expect(rootAcceptsObject({ const: { a: 1 } })).toBe(true);
    expect(rootAcceptsObject({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe(false);
    expect(rootAcceptsObject({ oneOf: [{ type: 'string' }, { type: 'object' }] })).toBe(true);
    expect(rootAcceptsObject({ allOf: [{ type: 'object' }, { type: 'string' }] })).toBe(false);
  });

  it('files are inlined into the one --prompt= argument: a prompt they make too long for it is refused at call time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-rx-qwen-args-'));
    try {
      writeFileSync(join(dir, 'small.txt'), 'small text\n');
      writeFileSync(join(dir, 'big.txt'), 'x'.repeat(100 * 1024));
      expect(argsOf({ cwd: dir, prompt: ['Read', { type: 'file', path: 'small.txt' }] } as never).at(-1)).toBe(`--prompt=Read\n\n<file path=${JSON.stringify(join(dir, 'small.txt'))}>\nsmall text\n</file>`);
      expect(() => runQwen({ cwd: dir, prompt: ['Read', { type: 'file', path: 'big.txt' }, { type: 'file', path: 'big.txt' }] })).toThrow(/holds at most 128 KiB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

import { describe, expect, it } from '@jest/globals';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { DEFAULT_PROMPT, demoOptionsFor, describeAgent, parseDemoArgs, USAGE } from '../../examples/demo-options.js';
import { DEFAULT_TRANSCRIPTS } from '../../examples/replay-agent/recordings.js';

const DEFAULT_TRANSCRIPT = DEFAULT_TRANSCRIPTS.pi;
import { DEMO_SCRIPT, runNode, startNode } from './child.js';

const demo = ['--import', 'tsx', DEMO_SCRIPT];
const quiet = { NO_COLOR: '1', AGENT_RX_DEMO_REAL: '0', PI_REPLAY_SPEED: '0' };

describe('parseDemoArgs', () => {
  it('replays the default transcript with the default prompt when given nothing', () => {
    const request = parseDemoArgs([], {});
    expect(request).toEqual({ kind: 'run', agent: 'pi', real: false, prompt: DEFAULT_PROMPT, model: DEFAULT_TRANSCRIPT, options: {} });
    if (request.kind !== 'run') return;
    expect(demoOptionsFor(request, '/x/pi-replay.mjs')).toEqual({
      prompt: DEFAULT_PROMPT,
      model: DEFAULT_TRANSCRIPT,
      executable: process.execPath,
      executableArgs: ['/x/pi-replay.mjs'],
    });
    expect(describeAgent(request)).toContain(`replay of a recorded pi run: ${DEFAULT_TRANSCRIPT}`);
  });

  it('runs the real pi with --real or AGENT_RX_DEMO_REAL=1, passing provider and model through', () => {
    const request = parseDemoArgs(['--real', '--provider', 'anthropic', '--model', 'claude-x', 'Fix', 'the', 'bug'], {});
    expect(request).toEqual({ kind: 'run', agent: 'pi', real: true, prompt: 'Fix the bug', model: 'claude-x', options: { provider: 'anthropic' } });
    if (request.kind !== 'run') return;
    expect(demoOptionsFor(request, '/x/pi-replay.mjs')).toEqual({ prompt: 'Fix the bug', provider: 'anthropic', model: 'claude-x' });
    expect(describeAgent(request)).toBe('pi (anthropic/claude-x)');
    expect(parseDemoArgs([], { AGENT_RX_DEMO_REAL: '1' })).toEqual({ kind: 'run', agent: 'pi', real: true, prompt: DEFAULT_PROMPT, options: {} });
  });

  it('picks a transcript with --transcript, and refuses it with --real', () => {
    expect(parseDemoArgs(['--transcript', 'text'], {})).toMatchObject({ kind: 'run', model: 'text' });
    expect(parseDemoArgs(['--real', '--transcript', 'text'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseDemoArgs(['--nope'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseDemoArgs(['-h'], {})).toEqual({ kind: 'help' });
  });
});

describe('examples/demo.ts', () => {
  it('replays a Claude Code run with --agent claude, and refuses an unknown agent', () => {
    const request = parseDemoArgs(['--agent', 'claude'], {});
    expect(request).toEqual({ kind: 'run', agent: 'claude', real: false, prompt: DEFAULT_PROMPT, model: DEFAULT_TRANSCRIPTS.claude, options: {} });
    if (request.kind !== 'run') throw new Error('expected a run');
    expect(demoOptionsFor(request, '/replay.mjs')).toMatchObject({ executable: process.execPath, executableArgs: ['/replay.mjs'], model: 'claude-tool-partial' });
    expect(parseDemoArgs(['--agent', 'gpt'], {})).toMatchObject({ kind: 'usage-error' });
  });

  it('replays a Codex run with --agent codex, through the replay script given as the executable', () => {
    const request = parseDemoArgs(['--agent', 'codex'], {});
    expect(request).toEqual({ kind: 'run', agent: 'codex', real: false, prompt: DEFAULT_PROMPT, model: DEFAULT_TRANSCRIPTS.codex, options: {} });
    if (request.kind !== 'run') throw new Error('expected a run');
    expect(demoOptionsFor(request, '/replay.mjs')).toEqual({ prompt: DEFAULT_PROMPT, model: 'codex-tool', executable: process.execPath, executableArgs: ['/replay.mjs'] });
    const real = parseDemoArgs(['--agent', 'codex', '--real', '--provider', 'proxy'], {});
    if (real.kind !== 'run') throw new Error('expected a run');
    // No executable: runCodex finds Codex's native binary.
    expect(demoOptionsFor(real, '/replay.mjs')).toEqual({ prompt: DEFAULT_PROMPT, provider: 'proxy' });
  });

  it('renders a replayed Codex run: whole messages, the command and its output', async () => {
    const run = await runNode([...demo, '--agent', 'codex'], '', quiet);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('replay of a recorded Codex run: codex-tool');
    // The command as it was meant (Codex's `/bin/bash -lc '…'` wrapper left out), its output once.
    expect(run.stdout).toContain('▸ command_execution  echo hello\n  ✓ command_execution  hello\n');
    expect(run.stdout).toMatch(/✓ completed · 167 tokens \(140 in, 27 out\)/);
  });

  it('replays a Gemini CLI run with --agent gemini (gemini-tool), through the replay script given as the executable; the real one runs commands with --approval-mode yolo', () => {
    const request = parseDemoArgs(['--agent', 'gemini'], {});
    expect(request).toEqual({ kind: 'run', agent: 'gemini', real: false, prompt: DEFAULT_PROMPT, model: 'gemini-tool', options: {} });
    expect(DEFAULT_TRANSCRIPTS.gemini).toBe('gemini-tool');
    if (request.kind !== 'run') throw new Error('expected a run');
    expect(demoOptionsFor(request, '/replay.mjs')).toEqual({
      prompt: DEFAULT_PROMPT,
      model: 'gemini-tool',
      executable: process.execPath,
      executableArgs: ['/replay.mjs'],
    });
    expect(describeAgent(request)).toBe('replay of a recorded Gemini CLI run: gemini-tool (offline; --real runs gemini)');
    const real = parseDemoArgs(['--agent', 'gemini', '--real', '--approval-mode', 'yolo', '--model', 'gemini-2.5-flash', 'Fix', 'it'], {});
    if (real.kind !== 'run') throw new Error('expected a run');
    // No executable: runGemini runs `gemini` from PATH; without yolo a headless run has no shell tool.
    expect(demoOptionsFor(real, '/replay.mjs')).toEqual({ prompt: 'Fix it', approvalMode: 'yolo', model: 'gemini-2.5-flash' });
    expect(parseDemoArgs(['--agent', 'pi', '--approval-mode', 'yolo'], {})).toEqual({ kind: 'usage-error', message: expect.stringMatching(/^--approval-mode is not an option of pi \((.+ and )?Gemini CLI( and .+)? ha(s|ve) it\)$/) as unknown });
    expect(describeAgent(real)).toBe('Gemini CLI (gemini-2.5-flash)');
    expect(parseDemoArgs(['--agent', 'gemini', '--transcript', 'gemini-http401'], {})).toMatchObject({ kind: 'run', agent: 'gemini', model: 'gemini-http401' });
    expect(USAGE).toContain(`--agent <${AGENT_NAMES.join('|')}>`);
  });

  it('renders a replayed Gemini CLI run: the deltas, the shell command and its output, the usage', async () => {
    const run = await runNode([...demo, '--agent', 'gemini'], '', quiet);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('replay of a recorded Gemini CLI run: gemini-tool');
    expect(run.stdout).toContain('session 18cbe23c-fde1-4e4b-a457-716548e5a06b\n\nI will run `echo hello`.\n');
    expect(run.stdout).toMatch(/▸ run_shell_command {2}.*echo hello.*\n {2}✓ run_shell_command {2}hello\n/);
    expect(run.stdout).toContain('The command ran. Tool output was: ');
    expect(run.stdout).toMatch(/✓ completed · 167 tokens \(140 in, 27 out\)/);
  });

  it('a replayed Gemini CLI API error exits 1 with its HTTP error', async () => {
    const run = await runNode([...demo, '--agent', 'gemini', '--transcript', 'gemini-http401'], '', quiet);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✗ failed · agent-error: Gemini CLI reported an error: [API Error: ');
    expect(run.stdout).toContain('API key not valid');
  });

  it('renders a replayed run with a tool call and exits 0', async () => {
    const run = await runNode(demo, '', quiet);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The time went into the run, its first text and its one tool call.
    expect(run.stdout.replace(/ · [\d.]+m?s · first token [\d.]+m?s · tools [\d.]+m?s \(1 call\)\n$/, ' · <time>\n')).toBe(
      [
        'agent-rx demo · replay of a recorded pi run: tool_call_then_text (offline; --real runs pi)',
        `> ${DEFAULT_PROMPT}`,
        '',
        'session 01a22ae0-45cb-738b-afe6-ee678dc0dc31',
        '',
        'Let me run a tool first.',
        '',
        '▸ bash  echo hello',
        '    hello',
        '  ✓ bash',
        '',
        'The tool returned: "hello\\n". Done.',
        '',
        '✓ completed · 267 tokens (246 in, 21 out) · <time>',
        '',
      ].join('\n'),
    );
  });

  it('exits 1 when the run fails', async () => {
    const run = await runNode([...demo, '--transcript', 'http500_noretry'], '', quiet);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✗ failed · agent-error: ');
    expect(run.stdout).toContain('500 fake internal server error');
  });

  it('exits 2 with the usage on a bad flag', async () => {
    const run = await runNode([...demo, '--bogus'], '', quiet);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: npm start');
  });

  it('stops the agent on Ctrl-C and exits 130', async () => {
    const child = startNode([...demo, '--transcript', 'text'], { NO_COLOR: '1', AGENT_RX_DEMO_REAL: '0', PI_REPLAY_STARTUP_MS: '0' });
    await child.waitForStdout('Hello from');
    child.process.kill('SIGINT');
    expect(await child.closed).toEqual({ code: 130, signal: null });
    expect(child.stdout()).toMatch(/\n\n⏹ interrupted after [\d.]+m?s, stopping the agent\n {2}agent stopped gracefully in \d+ms\n$/);
    expect(child.stdout()).not.toContain('completed');
  });
});

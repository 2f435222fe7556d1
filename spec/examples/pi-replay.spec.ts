import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPLAY_SCRIPT, TRANSCRIPTS, runNode, startNode } from './child.js';

const transcript = (name: string) => readFileSync(join(TRANSCRIPTS, `${name}.jsonl`), 'utf8');
const instant = { PI_REPLAY_SPEED: '0' };

describe('pi-replay.mjs', () => {
  it.each(['text', 'thinking_text', 'tool_call_then_text', 'http500_noretry', 'http500', 'http401'])(
    'replays %s byte for byte, picked by --model, and exits 0 as recorded',
    async (name) => {
      const run = await runNode([REPLAY_SCRIPT, '--mode', 'json', '--provider', 'fake', '--model', name, '--no-session'], 'hi', instant);
      expect(run).toEqual({ code: 0, signal: null, stdout: transcript(name), stderr: '' });
    },
  );

  it('replays tool_call_then_text when no model is given', async () => {
    const run = await runNode([REPLAY_SCRIPT, '--mode', 'json', '-c', '--thinking', 'low'], 'hi', instant);
    expect(run.stdout).toBe(transcript('tool_call_then_text'));
  });

  it('replays the file named by PI_REPLAY_TRANSCRIPT, whatever the model', async () => {
    const path = join(TRANSCRIPTS, 'text.jsonl');
    const run = await runNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'thinking_text'], 'hi', { ...instant, PI_REPLAY_TRANSCRIPT: path });
    expect(run.stdout).toBe(transcript('text'));
  });

  it('takes the prompt from an argument too, and prints only the session header without any prompt, like pi', async () => {
    const withArgument = await runNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text', 'Say hi'], '', instant);
    expect(withArgument.stdout).toBe(transcript('text'));
    const withoutPrompt = await runNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text'], '  \n', instant);
    const header = transcript('text').slice(0, transcript('text').indexOf('\n') + 1);
    expect(withoutPrompt).toMatchObject({ code: 0, stdout: header });
    expect(header).toMatch(/^\{"type":"session".*\n$/);
  });

  it('fails at startup with exit code 1 and a message on stderr when the model names no transcript', async () => {
    const run = await runNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'gpt-9'], 'hi', instant);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/no transcript named 'gpt-9' \(have: .*tool_call_then_text/);
  });

  it('reads stdin to EOF before it prints anything', async () => {
    const child = startNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text'], instant);
    child.process.stdin?.write('first part of the prompt');
    // Nothing to await here: the claim is that nothing happens while stdin stays open.
    await sleep(500);
    expect(child.stdout()).toBe('');
    child.process.stdin?.end(' and the rest');
    expect(await child.closed).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toBe(transcript('text'));
  });

  it('waits the startup delay before the first line and spreads the streamed lines out', async () => {
    const started = performance.now();
    const child = startNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text'], { PI_REPLAY_STARTUP_MS: '300' });
    child.process.stdin?.end('hi');
    await child.waitForStdout('"type":"session"');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    await child.closed;
    // 18 text deltas at 20 ms or more each, a model call of 250 ms, the startup delay.
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 + 250 + 18 * 20);
    expect(child.stdout()).toBe(transcript('text'));
  });

  it('exits 143 on SIGTERM in the middle of the replay, like pi', async () => {
    const child = startNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text'], { PI_REPLAY_STARTUP_MS: '0' });
    child.process.stdin?.end('hi');
    await child.waitForStdout('"text_delta"');
    child.process.kill('SIGTERM');
    expect(await child.closed).toEqual({ code: 143, signal: null });
    expect(child.stdout().length).toBeLessThan(transcript('text').length);
  });

  it('dies by the signal on SIGINT, like pi', async () => {
    const child = startNode([REPLAY_SCRIPT, '--mode', 'json', '--model', 'text'], { PI_REPLAY_STARTUP_MS: '0' });
    child.process.stdin?.end('hi');
    await child.waitForStdout('"text_delta"');
    child.process.kill('SIGINT');
    expect(await child.closed).toEqual({ code: null, signal: 'SIGINT' });
  });
});

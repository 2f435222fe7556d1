import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { CHAT_USAGE, parseChatArgs, readChatLine } from '../../lib/cli/chat-command.js';
import { piAgent } from '../../lib/index.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';
import { scenarioMarker } from '../conformance/fake-model-server.js';
import { imagesInRequest, testPng } from '../conformance/scenarios.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * `agent-rx chat` against the real pi (`pi --mode rpc`) and the fake model server on 127.0.0.1:
 * piped lines as prompts, and in a terminal (tmux) steering, aborting, ending.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];
const PI = join(ROOT, 'node_modules/.bin/pi');
const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-chat-'));
/** How long the screen or the processes may take to show what is awaited. */
const BOUND_MS = 20_000;

const world = piWorld();

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** `chat` on the real pi, with the fake provider and its `recall` model (each answer lists the user texts in context). */
const chatArgs = (...extra: string[]): string[] => ['chat', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall', '--cwd', world.env.cwd, ...extra];

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with `input` on its stdin (a pipe), and waits for its exit. */
function cli(args: readonly string[], input = '', extraEnv: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', ...world.env.env, ...extraEnv } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

async function waitUntil(check: () => boolean, what: string, describe: () => string): Promise<void> {
  const deadline = performance.now() + BOUND_MS;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('agent-rx chat: arguments', () => {
  const usageError = (argv: readonly string[]): string => {
    const request = parseChatArgs(argv);
    if (request.kind !== 'usage-error') throw new Error(`not a usage error: ${JSON.stringify(request)}`);
    return request.message;
  };

  it('offers every agent of the table (each has a session), pi by default', () => {
    expect(CHAT_USAGE).toContain(`--agent <${AGENT_NAMES.join('|')}>`);
    expect(parseChatArgs([])).toMatchObject({ kind: 'chat', agent: 'pi', queue: false });
    expect(parseChatArgs(['--agent', 'claude', '--allowed-tools', 'Bash, Read', '--queue'])).toMatchObject({
      kind: 'chat',
      agent: 'claude',
      queue: true,
      options: { allowedTools: ['Bash', 'Read'] },
    });
  });

  it("gives the session's refusal as its message, without the library's own 'agent-rx: ' (the command's line names it)", () => {
    expect(usageError(['--model', ''])).toBe('model must be a non-empty string; got ""');
  });

  it('checks --grace and --idle-timeout as `run` does, and refuses an option the agent does not take, or a prompt argument', () => {
    expect(parseChatArgs(['--grace', '500', '--idle-timeout', '90s', '--no-agent-retry'])).toMatchObject({
      options: { gracePeriodMs: 500, idleTimeoutMs: 90_000, agentRetry: false },
    });
    expect(usageError(['--idle-timeout', '0'])).toBe("--idle-timeout must be a duration > 0 such as 5000 (ms), 90s, 10m or 2h; got '0'");
    expect(usageError(['--grace=-5'])).toBe("--grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-5'");
    expect(usageError(['--agent', 'claude', '--provider', 'x'])).toBe('--provider is not an option of Claude Code (pi and Codex have it)');
    expect(usageError(['--allowed-tools', 'Bash'])).toBe('--allowed-tools is not an option of pi (Claude Code has it)');
    expect(usageError(['hello'])).toContain('chat takes no prompt argument');
    expect(usageError(['--timeout', '5s'])).toBe('unknown option --timeout');
  });

  it('exits 2 on a usage error: an unknown agent', async () => {
    const unknown = await cli(['chat', '--agent', 'gpt']);
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: `agent-rx chat: --agent must be one of ${AGENT_NAMES.join(', ')}; got gpt\nsee 'agent-rx chat --help'\n` });
    const help = await cli(['chat', '--help']);
    expect({ code: help.code, usage: help.stdout }).toEqual({ code: 0, usage: CHAT_USAGE });
  });
});

describe('agent-rx chat: /image and /file lines', () => {
  it.each<[string, string, ReturnType<typeof readChatLine>]>([
    ['a prompt', 'hello there', { kind: 'text', text: 'hello there' }],
    ['a slash that is no command of the chat', '/images are nice', { kind: 'text', text: '/images are nice' }],
    ['an image with a prompt', '/image shot.png what is this?', { kind: 'attach', part: { type: 'image', path: '/work/shot.png' }, given: 'shot.png', text: 'what is this?' }],
    ['a file for the next prompt', '/file ../notes.md', { kind: 'attach', part: { type: 'file', path: '/notes.md' }, given: '../notes.md', text: '' }],
    ['a quoted path with spaces', '/image "my shot.png" and this?', { kind: 'attach', part: { type: 'image', path: '/work/my shot.png' }, given: 'my shot.png', text: 'and this?' }],
    ['an absolute path', '/file /etc/hosts', { kind: 'attach', part: { type: 'file', path: '/etc/hosts' }, given: '/etc/hosts', text: '' }],
    ['no path', '/image', { kind: 'problem', message: '/image needs a path: /image <path> [text]' }],
    ['a quote left open', '/file "my notes.md', { kind: 'problem', message: "/file: the path's closing quote is missing" }],
  ])('reads %s', (_name, line, read) => {
    expect(readChatLine(line, '/work')).toEqual(read);
  });

  it('the help says how', () => {
    expect(CHAT_USAGE).toContain('A line /image <path> [text] or /file <path> [text] gives the agent an image');
  });
});

describe('agent-rx chat with piped input', () => {
  it('sends each line as a prompt: two lines, two turns in one pi, the session end printed, exit 0', async () => {
    const tag = createProcessTag('AGENT_RX_CHAT_TEST');
    const result = await cli(chatArgs(), 'first question\nsecond question\n', tag.env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toContain('› first question');
    expect(lines).toContain('User texts in context: 1 ("first question").');
    expect(lines).toContain('› second question');
    expect(lines).toContain('User texts in context: 2 ("first question" | "second question").');
    expect(result.stdout).toMatch(/── turn 1 · \d+ in \/ \d+ out · session \d+ in \/ \d+ out · /);
    expect(result.stdout).toMatch(/── turn 2 · \d+ in \/ \d+ out · session \d+ in \/ \d+ out · /);
    expect(lines.at(-2)).toMatch(/^✓ session completed · 2 turns · \d+ tokens \(\d+ in, \d+ out\) · /);
    expect(result.stdout).not.toContain('\u001b[');
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  });

  it('/image then a prompt: the image goes with it (its bytes reach the model, or pi says it cannot take it); a path that is not there is not attached', async () => {
    const tag = createProcessTag('AGENT_RX_CHAT_IMAGE');
    const png = testPng();
    const picture = join(scratch, 'pixel.png');
    writeFileSync(picture, png.bytes);
    const takesImages = sessionInvocation(piAgent, { executable: PI }).protocol.prompts?.image === true;
    const from = world.server.requests.length;
    const result = await cli(chatArgs(), `/file ${join(scratch, 'missing.txt')}\n/image ${picture}\ndescribe it\nand then?\n`, tag.env);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toContain(`⚠ not attached: ${join(scratch, 'missing.txt')} does not exist`);
    expect(lines).toContain(`+ image ${picture} · goes with the next prompt`);
    const images = world.server.requests.slice(from).flatMap((request) => imagesInRequest(request.body));
    if (takesImages) {
      expect(lines).toContain('› describe it');
      expect(images).toContainEqual({ mimeType: 'image/png', data: png.base64 });
    } else {
      expect(result.stdout).toMatch(/⚠ not sent: prompt "describe it" · unsupported: pi sessions cannot take an image/);
      expect(images).toEqual([]);
    }
    // The image went with one prompt only: the next is a prompt of its own.
    expect(lines).toContain('› and then?');
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  });
});

(process.platform === 'linux' ? describe : describe.skip)('agent-rx chat in a terminal (tmux)', () => {
  interface Pane {
    readonly name: string;
    readonly tag: ProcessTag;
    /** The whole pane, scrollback included, wrapped lines joined, without colours. */
    readonly screen: () => string;
    /** Types `text` (literally), then presses Enter. */
    readonly type: (text: string) => void;
    readonly keys: (...keys: string[]) => void;
    readonly waitFor: (text: string | RegExp, what?: string) => Promise<void>;
    /** The CLI's exit code, once it exited. */
    readonly exited: () => Promise<number>;
  }
  const panes: Pane[] = [];

  afterEach(async () => {
    for (const pane of panes.splice(0)) {
      try {
        execFileSync('tmux', ['kill-session', '-t', pane.name], { stdio: 'ignore' });
      } catch {
        // already gone
      }
      const left = await pane.tag.waitUntilNone(5_000);
      pane.tag.killAll();
      expect(describeProcesses(left)).toBe('none');
    }
  });

  // A detached tmux session running the chat, whose pane stays on screen after the command ends.
  function startChat(...extra: string[]): Pane {
    const name = `agent-rx-chat-${randomUUID().slice(0, 8)}`;
    const tag = createProcessTag('AGENT_RX_CHAT_TEST');
    const exitFile = join(scratch, `${name}.exit`);
    const quote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;
    const assignments = Object.entries({ ...world.env.env, ...tag.env }).map(([key, value]) => `${key}=${quote(value)}`);
    const command = [...assignments, quote(process.execPath), ...CLI.map(quote), ...chatArgs(...extra).map(quote)].join(' ');
    execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '120', '-y', '40', 'sleep 600']);
    execFileSync('tmux', ['set-option', '-t', name, 'remain-on-exit', 'on']);
    execFileSync('tmux', ['respawn-pane', '-k', '-t', name, `cd ${quote(ROOT)} && env -u NO_COLOR ${command}; echo $? > ${quote(exitFile)}`]);
    const screen = (): string => execFileSync('tmux', ['capture-pane', '-p', '-J', '-S', '-', '-t', name], { encoding: 'utf8' });
    const readExit = (): number | null => {
      try {
        return Number(readFileSync(exitFile, 'utf8').trim());
      } catch {
        return null;
      }
    };
    const pane: Pane = {
      name,
      tag,
      screen,
      type: (text) => {
        execFileSync('tmux', ['send-keys', '-t', name, '-l', text]);
        execFileSync('tmux', ['send-keys', '-t', name, 'Enter']);
      },
      keys: (...keys) => {
        execFileSync('tmux', ['send-keys', '-t', name, ...keys]);
      },
      waitFor: (text, what = String(text)) => waitUntil(() => (typeof text === 'string' ? screen().includes(text) : text.test(screen())), what, screen),
      exited: async () => {
        await waitUntil(() => readExit() !== null, 'the chat to exit', screen);
        return readExit() ?? -1;
      },
    };
    panes.push(pane);
    return pane;
  }

  /** The lines of the screen, trailing blanks cut. */
  const linesOf = (screen: string): string[] => screen.split('\n').map((line) => line.trimEnd());

  it('streams the answer; Enter during a slow answer steers it, answered within the same turn', async () => {
    const pane = startChat();
    await pane.waitFor('› ', 'the prompt');
    pane.type(`${scenarioMarker('slow_text')}write slowly`);
    await pane.waitFor('slow03', 'the answer to stream');
    expect(pane.screen()).not.toContain('slow39');
    pane.type(`${scenarioMarker('recall')}steer now`);
    await pane.waitFor('↳ steered into turn 1');
    await pane.waitFor('── turn 1 ·', 'the end of turn 1');
    const lines = linesOf(pane.screen());
    // The typed steer kept its own line, whole, however the answer streamed around it.
    expect(lines).toContain(`steer› ${scenarioMarker('recall')}steer now`);
    expect(pane.screen()).toMatch(/slow39 User texts in context: \d \(.*"steer now"\)\.\n── turn 1 · .*\n› *\n/);
    expect(pane.screen()).not.toMatch(/turn 2/);
    pane.keys('C-d');
    expect(await pane.exited()).toBe(0);
  });

  it('Ctrl-C during `sleep 30` aborts the turn: the sleep is gone by pid, pi stays, the next prompt works', async () => {
    const pane = startChat();
    await pane.waitFor('› ', 'the prompt');
    pane.type(`${scenarioMarker('sleep_tool')}sleep for a while`);
    await pane.waitFor('▸ bash  sleep 30');
    const sleep = await pane.tag.waitFor('sleep');
    const pi = pane.tag.waitFor('pi');
    pane.keys('C-c');
    await pane.waitFor(/✗ turn 1 aborted: .*\n── turn 1 · no usage · /, 'the aborted turn');
    await waitUntil(() => !isAlive(sleep), `sleep ${sleep} to end`, pane.screen);
    expect(isAlive(await pi)).toBe(true);
    pane.type('awake again');
    await pane.waitFor(/User texts in context: 2 \("sleep for a while" \| "awake again"\)\.\n── turn 2 · \d+ in/, 'the answer of turn 2');
    pane.keys('C-d');
    expect(await pane.exited()).toBe(0);
  });

  it('Ctrl-D ends the session: the end is shown, exit 0, no agent process left', async () => {
    const pane = startChat();
    await pane.waitFor('› ', 'the prompt');
    pane.type('hello');
    await pane.waitFor('── turn 1 ·', 'the end of turn 1');
    pane.keys('C-d');
    expect(await pane.exited()).toBe(0);
    expect(pane.screen()).toMatch(/✓ session completed · 1 turn · \d+ tokens/);
    expect(describeProcesses(await pane.tag.waitUntilNone(10_000))).toBe('none');
  });

  it('with --queue, Enter during a turn queues the text, which runs as the next turn', async () => {
    const pane = startChat('--queue');
    await pane.waitFor('› ', 'the prompt');
    pane.type(`${scenarioMarker('slow_text')}write slowly`);
    await pane.waitFor('slow03', 'the answer to stream');
    pane.type('and then this');
    await pane.waitFor('queued for after turn 1');
    await pane.waitFor(/── turn 1 · .*\n› and then this\nUser texts in context: 2 \("write slowly" \| "and then this"\)\.\n── turn 2 ·/, 'the queued turn');
    expect(linesOf(pane.screen())).toContain('queue› and then this');
    pane.keys('C-d');
    expect(await pane.exited()).toBe(0);
  });

  it('a Ctrl-C once the end was asked stops the agent at once, its tool too, and exits 130', async () => {
    const pane = startChat();
    await pane.waitFor('› ', 'the prompt');
    pane.type(`${scenarioMarker('sleep_tool')}sleep for a while`);
    await pane.waitFor('▸ bash  sleep 30');
    const sleep = await pane.tag.waitFor('sleep');
    pane.keys('C-d');
    await pane.waitFor('ending the session after turn 1');
    pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
    expect(isAlive(sleep)).toBe(false);
    expect(pane.screen()).toMatch(/✗ session failed · 1 turn · stopped: /);
    expect(describeProcesses(await pane.tag.waitUntilNone(10_000))).toBe('none');
  });
});

import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileBlock } from '../../lib/operators/prompt-parts.js';
import { parseRunArgs, RUN_USAGE, type RunRequest } from '../../lib/cli/run-command.js';
import { piAgent } from '../../lib/index.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { JSON_OK_VALUE, JSON_TEST_SCHEMA, scenarioMarker, testPng } from '../conformance/scenarios.js';
import { fixture } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';
import { builtCli } from '../helpers/built-cli.js';

/** `agent-rx run --image`, `--file` and `--output-schema`: the flags, and real runs of pi. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];
const PI = join(ROOT, 'node_modules/.bin/pi');
const scratch = mkdtempSync(join(tmpdir(), 'agent-rx-run-parts-'));
const png = testPng();
const PNG = join(scratch, 'pixel.png');
const BRIEF = join(scratch, 'brief.txt');
const SCHEMA = join(scratch, 'answer.schema.json');
writeFileSync(PNG, png.bytes);
writeFileSync(BRIEF, 'The launch code is ZEBRA-7731.\n');
writeFileSync(SCHEMA, JSON.stringify(JSON_TEST_SCHEMA));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end();
  });
}

const usageError = (argv: readonly string[]): string => {
  const request = parseRunArgs(argv);
  if (request.kind !== 'usage-error') throw new Error(`not a usage error: ${request.kind}`);
  return request.message;
};

const runOf = (argv: readonly string[]): Extract<RunRequest, { kind: 'run' }> => {
  const request = parseRunArgs(argv);
  if (request.kind !== 'run') throw new Error(`not a run: ${JSON.stringify(request)}`);
  return request;
};

/** Whether pi's runs take an image: its sessions' protocol says so (a run with an image is a one-prompt session). */
const piTakesImages = sessionInvocation(piAgent, {}).protocol.prompts?.image === true;

describe('agent-rx run: --image, --file and --output-schema', () => {
  it('the help names the three flags', () => {
    for (const flag of ['--image <path>', '--file <path>', '--output-schema <file.json>']) expect(RUN_USAGE).toContain(flag);
  });

  it('gives the images and files after the prompt, in the order given, their paths taken from here', () => {
    const here = relative(process.cwd(), BRIEF);
    const run = runOf(['--file', here, '--file', BRIEF, 'Summarize']);
    expect(run.attachments).toEqual([
      { part: { type: 'file', path: BRIEF }, flag: `--file ${here}` },
      { part: { type: 'file', path: BRIEF }, flag: `--file ${BRIEF}` },
    ]);
    expect(run.outputSchema).toBeUndefined();
    // Taken from here even with --cwd elsewhere.
    expect(runOf(['--cwd', tmpdir(), '--file', here, 'Summarize']).attachments[0]?.part.path).toBe(BRIEF);
  });

  it(`--image: ${piTakesImages ? 'pi takes it' : "refused for pi, whose runs take no image yet, in the flag's words"}`, () => {
    const argv = ['--image', PNG, '--file', BRIEF, 'Describe'];
    if (piTakesImages) {
      expect(runOf(argv).attachments.map(({ part }) => part)).toEqual([{ type: 'image', path: PNG }, { type: 'file', path: BRIEF }]);
    } else {
      expect(usageError(argv)).toBe(`pi runs cannot take an image (--image ${PNG})`);
    }
  });

  it.each<[string, readonly string[], string]>([
    ['a file that is not there', ['--file', join(scratch, 'nope.txt'), 'x'], `--file ${join(scratch, 'nope.txt')}: cannot read ${join(scratch, 'nope.txt')} (ENOENT)`],
    ['an image given as a file', ['--file', PNG, 'x'], `--file ${PNG}: ${PNG} is an image; give it with --image`],
    ['an image that is not one', ['--agent', 'codex', '--image', BRIEF, 'x'], 'is not a PNG, JPEG, GIF or WebP image'],
    ['an empty path', ['--file', '', 'x'], '--file needs a path'],
    ['an image with --replay', ['--replay', fixture('pi/text.jsonl'), '--image', PNG], '--image cannot be given with --replay: a recording was prompted already'],
    ['a schema file that is not there', ['--output-schema', join(scratch, 'none.json'), 'x'], `--output-schema ${join(scratch, 'none.json')} cannot be read (ENOENT)`],
    ['a schema file that is not JSON', ['--output-schema', BRIEF, 'x'], `--output-schema ${BRIEF} is not JSON: `],
  ])('refuses %s as a usage error', (_name, argv, message) => {
    expect(usageError(argv)).toContain(message);
  });

  it('refuses a schema that is not an object, or not a JSON Schema', () => {
    const array = join(scratch, 'array.json');
    writeFileSync(array, '[1, 2]');
    expect(usageError(['--output-schema', array, 'x'])).toBe(`--output-schema ${array} must hold a JSON Schema object`);
    const bad = join(scratch, 'bad.json');
    writeFileSync(bad, '{"type": 42}');
    expect(usageError(['--output-schema', bad, 'x'])).toMatch(new RegExp(`^--output-schema ${bad} is not a JSON Schema zod can read`));
  });

  it('--output-schema gives the run its schema (the file it came from, for the heading)', () => {
    expect(runOf(['--output-schema', SCHEMA, 'Answer']).outputSchema).toEqual({ path: SCHEMA, schema: JSON_TEST_SCHEMA });
  });

  it('with --fleet, images and files are read here and sent with the run (images as bytes, files as text), the schema as JSON', () => {
    const run = runOf(['--fleet', 'redis://127.0.0.1:1', '--file', BRIEF, '--image', PNG, '--output-schema', SCHEMA, 'Look']);
    expect(run.spec).toEqual({
      agent: 'pi',
      options: { prompt: ['Look', fileBlock(BRIEF, 'The launch code is ZEBRA-7731.\n'), { type: 'image', data: png.base64, mimeType: 'image/png' }], outputSchema: JSON_TEST_SCHEMA },
    });
  });

  it('--output-schema with --replay checks the recorded answer: prose fails output-schema, the issue shown, exit 1; with --json the last message says so', async () => {
    const shown = await cli(['run', '--replay', fixture('pi/text.jsonl'), '--output-schema', SCHEMA]);
    expect(shown.code).toBe(1);
    // stdout is for the answer alone: none came.
    expect(shown.stdout).toBe('');
    expect(shown.stderr.split('\n').slice(0, 2)).toEqual(['agent-rx · replay of text.jsonl (pi)', `+ output-schema ${SCHEMA}`]);
    expect(shown.stderr).toMatch(/✗ failed · output-schema: the answer does not satisfy --output-schema: the answer holds no JSON value/);
    // One issue is the message's: not repeated below it.
    expect(shown.stderr).not.toContain('issue │');
    const json = await cli(['run', '--json', '--replay', fixture('pi/text.jsonl'), '--output-schema', SCHEMA]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout.trimEnd().split('\n').at(-1) ?? '')).toMatchObject({ type: 'terminal.failed', reason: 'output-schema', outputIssues: [{ path: '' }] });
  });
});

describe('agent-rx run --output-schema on the real pi', () => {
  const world = piWorld();
  const tag = createProcessTag('AGENT_RX_RUN_PARTS');
  const piArgs = (): string[] => ['run', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall', '--cwd', world.env.cwd];

  it('a valid answer: stdout is the validated answer as JSON alone, the run shown on stderr, exit 0 (the --file reached the model); an invalid one: the issues, exit 1', async () => {
    const from = world.server.requests.length;
    const ok = await cli([...piArgs(), '--file', BRIEF, '--output-schema', SCHEMA, `${scenarioMarker('json_ok')}Answer as JSON.`], { ...world.env.env, ...tag.env });
    expect({ code: ok.code, stdout: ok.stdout }).toEqual({ code: 0, stdout: `${JSON.stringify(JSON_OK_VALUE, null, 2)}\n` });
    expect(ok.stderr).toContain(`+ file ${BRIEF}`);
    expect(ok.stderr).toMatch(/✓ completed/);
    const bodies = world.server.requests.slice(from).map((request) => JSON.stringify(request.body));
    expect(bodies.some((body) => body.includes('ZEBRA-7731'))).toBe(true);

    const bad = await cli([...piArgs(), '--output-schema', SCHEMA, `${scenarioMarker('json_bad')}Answer as JSON.`], { ...world.env.env, ...tag.env });
    expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/✗ failed · output-schema: the answer does not satisfy --output-schema: answer: /);
    // Each issue on a line of its own (the answer is not a string, n is missing).
    expect(bad.stderr).toMatch(/\n {2}issue │ answer: .*\n {2}issue │ n: /);
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  }, 120_000);
});

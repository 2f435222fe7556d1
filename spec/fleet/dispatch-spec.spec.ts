import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { checkRunSpec, RunSpecSchema, toRunSpec, type DispatchSpec, type RunSpec } from '../../lib/fleet.js';
import { JSON_TEST_SCHEMA, testPng } from '../conformance/scenarios.js';

// A spec given to the dispatcher is made plain JSON on the caller's machine: images and files read
// and checked there, a zod schema made JSON Schema; a spec that still holds what only the caller
// can give is refused by the check every worker makes.

const folder = mkdtempSync(join(tmpdir(), 'agent-rx-dispatch-spec-'));
const png = testPng();
const PIXEL = join(folder, 'pixel.png');
const NOTES = join(folder, 'notes.md');
writeFileSync(PIXEL, png.bytes);
writeFileSync(NOTES, 'The code is ZEBRA-7731.\n');
writeFileSync(join(folder, 'not-an-image.png'), 'plain text');

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

const Answer = z.object({ answer: z.string(), n: z.number() });

describe('toRunSpec', () => {
  it('leaves a plain spec as it is', () => {
    const spec: RunSpec = { agent: 'pi', options: { prompt: 'hi', model: 'm', outputSchema: JSON_TEST_SCHEMA }, permission: 'deny-all' };
    expect(toRunSpec(spec)).toEqual(spec);
  });

  it('reads an image by path and one given as bytes into base64 data; a file into a text part holding a <file> block; a zod schema into its JSON Schema', () => {
    const spec = toRunSpec({
      agent: 'pi',
      options: {
        prompt: ['Look', { type: 'image', path: PIXEL }, { type: 'image', data: png.bytes, mimeType: 'image/png' }, { type: 'file', path: NOTES }],
        outputSchema: Answer,
      },
    });
    expect(spec).toEqual({
      agent: 'pi',
      options: {
        prompt: [
          { type: 'text', text: 'Look' },
          { type: 'image', data: png.base64, mimeType: 'image/png' },
          { type: 'image', data: png.base64, mimeType: 'image/png' },
          { type: 'text', text: `<file path=${JSON.stringify(NOTES)}>\nThe code is ZEBRA-7731.\n</file>` },
        ],
        outputSchema: { type: 'object', properties: { answer: { type: 'string' }, n: { type: 'number' } }, required: ['answer', 'n'], additionalProperties: false },
      },
    });
    // Plain JSON: what goes through Redis comes back the same, and every worker's check takes it.
    const travelled = JSON.parse(JSON.stringify(spec)) as unknown;
    expect(travelled).toEqual(spec);
    expect(RunSpecSchema.safeParse(travelled).success).toBe(true);
  });

  it('reads relative paths against the given folder (the caller\u2019s, not the spec\u2019s cwd, which is the worker\u2019s)', () => {
    const spec = toRunSpec({ agent: 'pi', options: { prompt: [{ type: 'image', path: 'pixel.png' }], cwd: '/srv/elsewhere' } }, folder);
    expect(spec.options.prompt).toEqual([{ type: 'image', data: png.base64, mimeType: 'image/png' }]);
    expect(spec.options.cwd).toBe('/srv/elsewhere');
  });

  it.each<[string, DispatchSpec, RegExp]>([
    ['a path that cannot be read', { agent: 'pi', options: { prompt: ['x', { type: 'image', path: join(folder, 'missing.png') }] } }, /^agent-rx: options\.prompt\[1\]: cannot read .*missing\.png \(ENOENT\)$/],
    ['a file that is not an image', { agent: 'pi', options: { prompt: ['x', { type: 'image', path: join(folder, 'not-an-image.png') }] } }, /^agent-rx: options\.prompt\[1\]: .* is not a PNG, JPEG, GIF or WebP image$/],
    ['bytes that are not the type they say', { agent: 'pi', options: { prompt: [{ type: 'image', data: png.bytes, mimeType: 'image/jpeg' }] } }, /is image\/png, not "image\/jpeg"$/],
    ['a zod schema with no JSON Schema form', { agent: 'pi', options: { prompt: 'x', outputSchema: z.date() } }, /^agent-rx: options\.outputSchema has no JSON Schema form/],
    ['an option only the worker chooses', { agent: 'pi', options: { prompt: [{ type: 'image', path: PIXEL }], executable: '/bin/sh' } } as unknown as DispatchSpec, /^agent-rx: not a run spec: options has no option "executable"$/],
  ])('throws a TypeError naming what is wrong: %s', (_what, spec, message) => {
    expect(() => toRunSpec(spec)).toThrow(TypeError);
    expect(() => toRunSpec(spec)).toThrow(message);
  });

  it('types a spec by its zod schema, and takes every RunSpec', () => {
    const typed: DispatchSpec<{ answer: string; n: number }> = { agent: 'codex', options: { prompt: 'x', outputSchema: Answer } };
    const plain: RunSpec = { agent: 'qwen', options: { prompt: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] } };
    const asDispatched: DispatchSpec = plain;
    expect(toRunSpec(typed).agent).toBe('codex');
    expect(toRunSpec(asDispatched)).toEqual(plain);
  });
});

describe('checkRunSpec (every worker\u2019s check) on a spec that was not made plain', () => {
  it.each<[string, unknown, string]>([
    ['an image by path', { agent: 'pi', options: { prompt: ['x', { type: 'image', path: '/srv/caller/shot.png' }] } }, "options.prompt[1] is an image by path: a spec carries images as base64 data with a mimeType (createRunDispatcher().run (or toRunSpec) reads it on the caller's machine; a worker never reads a caller's paths)"],
    ['a file', { agent: 'claude', options: { prompt: [{ type: 'file', path: '/etc/passwd' }] } }, "options.prompt[0] is a file: a spec carries it as a text part holding the file (createRunDispatcher().run (or toRunSpec) reads it on the caller's machine; a worker never reads a caller's paths)"],
    ['bytes', { agent: 'pi', options: { prompt: [{ type: 'image', data: new Uint8Array([1]), mimeType: 'image/png' }] } }, "options.prompt[0] holds bytes: a spec carries images as base64 data with a mimeType (createRunDispatcher().run (or toRunSpec) reads it on the caller's machine)"],
    ['a zod schema', { agent: 'pi', options: { prompt: 'x', outputSchema: Answer } }, 'options.outputSchema is a zod schema: a spec carries its JSON Schema (createRunDispatcher().run, or toRunSpec, makes it)'],
  ])('refuses %s with a clear TypeError', (_what, spec, message) => {
    expect(() => checkRunSpec(spec)).toThrow(new TypeError(`agent-rx: not a run spec: ${message}`));
  });

  it('takes text and base64 image parts', () => {
    const spec = { agent: 'gemini', options: { prompt: ['x', { type: 'text', text: 'y' }, { type: 'image', data: png.base64, mimeType: 'image/png' }], outputSchema: JSON_TEST_SCHEMA } };
    expect(checkRunSpec(spec)).toEqual(spec);
  });
});

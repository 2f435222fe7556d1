import { describe, expect, it } from '@jest/globals';
import { contentSummary, contentText, MAX_IMAGE_BYTES, promptContent, refuseUnsupported, runPromptText, sniffImageType, type PromptReader } from '../../lib/operators/prompt-parts.js';
import { outputContract } from '../../lib/operators/output-schema.js';
import { testPng } from '../conformance/scenarios.js';

const png = testPng();
const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);

/** A reader over files held in memory, paths taken against `/work`. */
function memory(files: Readonly<Record<string, Uint8Array | string>>): PromptReader {
  return {
    resolve: (path) => (path.startsWith('/') ? path : `/work/${path}`),
    readFile: (path) => {
      const file = files[path];
      if (file === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return typeof file === 'string' ? new TextEncoder().encode(file) : file;
    },
  };
}

describe('prompt parts', () => {
  it('reads images (their type from their bytes) and files (as text with their absolute path), in order', () => {
    const content = promptContent(['Look:', { type: 'image', path: 'a.png' }, { type: 'file', path: 'notes.md' }, { type: 'image', data: png.base64, mimeType: 'image/png' }], memory({ '/work/a.png': png.bytes, '/work/notes.md': '# Notes\n' }));
    expect(content).toEqual([
      { type: 'text', text: 'Look:' },
      { type: 'image', data: png.base64, mimeType: 'image/png', bytes: png.bytes.length, path: '/work/a.png' },
      { type: 'file', path: '/work/notes.md', text: '# Notes\n' },
      { type: 'image', data: png.base64, mimeType: 'image/png', bytes: png.bytes.length },
    ]);
    expect(contentSummary(content)).toBe('Look:\n\n[image /work/a.png]\n\n[file /work/notes.md]\n\n[image image/png]');
  });

  it('takes bytes as well as base64, and a string prompt as one text part', () => {
    expect(promptContent([{ type: 'image', data: jpeg, mimeType: 'image/jpeg' }], memory({}))).toMatchObject([{ type: 'image', mimeType: 'image/jpeg', bytes: 6 }]);
    expect(promptContent('hello', memory({}))).toEqual([{ type: 'text', text: 'hello' }]);
  });

  it('refuses, naming the part, what cannot be given: a missing file, a non-image, a wrong type, too many bytes, bad base64, a binary file', () => {
    const reader = memory({ '/work/big.png': new Uint8Array(MAX_IMAGE_BYTES + 1).fill(1), '/work/text.png': 'not an image', '/work/bin.dat': Uint8Array.from([104, 0, 105]), '/work/pic.png': png.bytes });
    expect(() => promptContent(['x', { type: 'image', path: 'gone.png' }], reader)).toThrow('agent-rx: prompt[1]: cannot read /work/gone.png (ENOENT)');
    expect(() => promptContent([{ type: 'image', path: 'text.png' }], reader)).toThrow('agent-rx: prompt[0]: /work/text.png is not a PNG, JPEG, GIF or WebP image');
    expect(() => promptContent([{ type: 'image', path: 'pic.png', mimeType: 'image/jpeg' }], reader)).toThrow('agent-rx: prompt[0]: /work/pic.png is image/png, not "image/jpeg"');
    expect(() => promptContent([{ type: 'image', path: 'big.png' }], reader)).toThrow(`has ${MAX_IMAGE_BYTES + 1} bytes; an image takes at most ${MAX_IMAGE_BYTES}`);
    expect(() => promptContent([{ type: 'image', data: 'not base64!', mimeType: 'image/png' }], reader)).toThrow('agent-rx: prompt[0].data is not base64');
    expect(() => promptContent([{ type: 'image', data: png.base64 } as never], reader)).toThrow('agent-rx: prompt[0].mimeType is needed with data');
    expect(() => promptContent([{ type: 'image', data: png.base64, mimeType: 'image/bmp' } as never], reader)).toThrow('prompt[0].mimeType must be one of image/png, image/jpeg, image/gif, image/webp; got "image/bmp"');
    expect(() => promptContent([{ type: 'file', path: 'bin.dat' }], reader)).toThrow('agent-rx: prompt[0]: /work/bin.dat is not a text file (it has NUL bytes)');
    expect(() => promptContent([{ type: 'file', path: 'pic.png' }], reader)).toThrow("is an image; give it as { type: 'image', path }");
    expect(() => promptContent([{ type: 'audio' } as never], reader)).toThrow('agent-rx: prompt[0].type must be \'text\', \'image\' or \'file\'; got "audio"');
    expect(() => promptContent(['  '], reader)).toThrow('agent-rx: prompt must not be empty');
    expect(() => promptContent([], reader)).toThrow('agent-rx: prompt must not be empty');
  });

  it('knows the four image formats by their first bytes', () => {
    expect(sniffImageType(png.bytes)).toBe('image/png');
    expect(sniffImageType(jpeg)).toBe('image/jpeg');
    expect(sniffImageType(new TextEncoder().encode('GIF89a'))).toBe('image/gif');
    expect(sniffImageType(Uint8Array.from([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]))).toBe('image/webp');
    expect(sniffImageType(new TextEncoder().encode('%PDF-1.7'))).toBeUndefined();
  });

  it('gives a text-only transport the text, files as blocks, and the schema\'s instruction unless the agent takes the schema natively', () => {
    const content = promptContent(['Summarize', { type: 'file', path: 'a.txt' }], memory({ '/work/a.txt': 'alpha' }));
    expect(contentText(content)).toBe('Summarize\n\n<file path="/work/a.txt">\nalpha\n</file>');
    const output = outputContract({ type: 'object' });
    expect(runPromptText({ content, output })).toMatch(/<\/file>\n\nAnswer with a single JSON value that satisfies the JSON Schema below/);
    expect(runPromptText({ content, output }, true)).toBe(contentText(content));
  });

  it('refuses an image for an agent or transport that cannot take one, naming both', () => {
    const content = promptContent(['x', { type: 'image', data: png.bytes, mimeType: 'image/png' }], memory({}));
    expect(() => { refuseUnsupported(content, { image: false, file: true }, 'Example CLI runs'); }).toThrow('agent-rx: Example CLI runs cannot take an image (prompt[1])');
    expect(() => { refuseUnsupported(content, { image: true, file: true }, 'Example CLI runs'); }).not.toThrow();
    expect(() => contentText(content)).toThrow(TypeError);
  });
});

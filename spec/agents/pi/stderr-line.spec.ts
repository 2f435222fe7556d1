import { describe, expect, it } from '@jest/globals';
import { piStderrLine } from '../../../lib/agents/pi/dialect.js';

// What pi 0.73.1 writes to stderr when it exits 1 at startup, as the real CLI printed it (its
// docs paths are where it is installed).
const DOCS = '/usr/lib/node_modules/@mariozechner/pi-coding-agent/docs';
const NO_KEY_HINT = ['', 'Use /login to log into a provider via OAuth or API key. See:', `  ${DOCS}/providers.md`, `  ${DOCS}/models.md`, ''];

describe('piStderrLine', () => {
  it('no API key: the line that says so, not the /login hint or the docs after it', () => {
    expect(piStderrLine(['No API key found for the selected model.', ...NO_KEY_HINT].join('\n'))).toBe('No API key found for the selected model.');
  });

  it('an unknown model and no API key: the missing key, not the warning before it', () => {
    const stderr = ['Warning: Model "nosuch" not found for provider "anthropic". Using custom model id.', 'No API key found for anthropic.', ...NO_KEY_HINT].join('\n');
    expect(piStderrLine(stderr)).toBe('No API key found for anthropic.');
  });

  it('other startup errors: their one line', () => {
    expect(piStderrLine("No session found matching 'deadbeef'\n")).toBe("No session found matching 'deadbeef'");
    expect(piStderrLine('Error: Unknown option: --bogusflag\n')).toBe('Error: Unknown option: --bogusflag');
    expect(piStderrLine('Error: Unknown provider "nosuchprov". Use --list-models to see available providers/models.\n')).toBe(
      'Error: Unknown provider "nosuchprov". Use --list-models to see available providers/models.',
    );
  });

  it('warnings only: the first warning, better than nothing', () => {
    const stderr = "Warning: (startup session lookup, global settings) Expected property name or '}' in JSON at position 1\nWarning: (runtime creation, global settings) Expected property name or '}' in JSON at position 1\n";
    expect(piStderrLine(stderr)).toBe("Warning: (startup session lookup, global settings) Expected property name or '}' in JSON at position 1");
    expect(piStderrLine('')).toBeUndefined();
  });
});

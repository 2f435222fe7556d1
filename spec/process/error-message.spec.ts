import { describe, expect, it } from '@jest/globals';
import { errorMessage } from '../../lib/process/error-message.js';

describe('errorMessage', () => {
  it('puts the error code before a message that does not start with it', () => {
    const error = Object.assign(new Error('spawn failed'), { code: 'EACCES' });
    expect(errorMessage(error)).toBe('EACCES: spawn failed');
  });

  it("says the code once when the message starts with it (Node's fs errors)", () => {
    const error = Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), { code: 'ENOENT' });
    expect(errorMessage(error)).toBe("ENOENT: no such file or directory, open '/nope'");
  });

  it('gives the message alone for an error without a code, and anything else as text', () => {
    expect(errorMessage(new Error('plain'))).toBe('plain');
    expect(errorMessage('a string')).toBe('a string');
    expect(errorMessage(42)).toBe('42');
  });
});

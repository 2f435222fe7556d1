import { describe, expect, it } from '@jest/globals';
import { rpcErrorText } from '../../../lib/agents/shared/json-rpc.js';

describe('rpcErrorText', () => {
  it("adds what the error's data says to its message (Qwen Code's cause of an Internal error)", () => {
    expect(rpcErrorText({ code: -32603, message: 'Internal error', data: { details: '[API Error: 401 fake invalid api key]' } })).toBe('Internal error: [API Error: 401 fake invalid api key]');
    expect(rpcErrorText({ code: -32603, message: 'Internal error', data: 'no session' })).toBe('Internal error: no session');
  });

  it('is the message alone when the data says nothing more, and undefined without a message', () => {
    expect(rpcErrorText({ code: -32601, message: 'Method not found' })).toBe('Method not found');
    expect(rpcErrorText({ message: 'Same', data: { details: 'Same' } })).toBe('Same');
    expect(rpcErrorText({ message: 'x', data: { details: 3 } })).toBe('x');
    expect(rpcErrorText({ code: 1 })).toBeUndefined();
    expect(rpcErrorText(undefined)).toBeUndefined();
    expect(rpcErrorText('text')).toBeUndefined();
  });
});

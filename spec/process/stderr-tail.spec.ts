import { describe, expect, it } from '@jest/globals';
import { StderrTail } from '../../lib/process/stderr-tail.js';

describe('StderrTail', () => {
  it('keeps everything while under the limit', () => {
    const tail = new StderrTail(16);
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('def'));
    expect(tail.text()).toBe('abcdef');
    expect(tail.droppedBytes).toBe(0);
  });

  it('keeps the last bytes and counts what it dropped', () => {
    const tail = new StderrTail(5);
    for (const piece of ['abc', 'defg', 'hi']) tail.push(Buffer.from(piece));
    expect(tail.text()).toBe('efghi');
    expect(tail.droppedBytes).toBe(4);
  });

  it('keeps the end of a single chunk larger than the limit', () => {
    const tail = new StderrTail(4);
    tail.push(Buffer.from('ab'));
    tail.push(Buffer.from('0123456789'));
    expect(tail.text()).toBe('6789');
    expect(tail.droppedBytes).toBe(8);
  });

  it('skips a character cut in half at the start of the tail', () => {
    const tail = new StderrTail(4);
    tail.push(Buffer.from('xx€ab'));
    expect(tail.text()).toBe('ab');
  });

  it('keeps nothing with a limit of zero', () => {
    const tail = new StderrTail(0);
    tail.push(Buffer.from('abc'));
    expect(tail.text()).toBe('');
    expect(tail.droppedBytes).toBe(3);
  });
});

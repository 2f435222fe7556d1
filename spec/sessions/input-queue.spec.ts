import { describe, expect, it } from '@jest/globals';
import { InputQueue } from '../../lib/sessions/input-queue.js';

describe('InputQueue', () => {
  it('handles each input as it comes when nothing is being handled', () => {
    const handled: number[] = [];
    const queue = new InputQueue<number>((input) => handled.push(input));
    queue.push(1);
    expect(handled).toEqual([1]);
    queue.push(2);
    expect(handled).toEqual([1, 2]);
  });

  it('handles an input pushed while one is handled after that one and all its effects, in order', () => {
    const log: string[] = [];
    const queue: InputQueue<string> = new InputQueue((input) => {
      log.push(`begin ${input}`);
      if (input === 'a') {
        queue.push('b');
        queue.push('c');
      }
      if (input === 'b') queue.push('d');
      log.push(`end ${input}`);
    });
    queue.push('a');
    expect(log).toEqual(['begin a', 'end a', 'begin b', 'end b', 'begin c', 'end c', 'begin d', 'end d']);
  });

  it('throws what the handler throws to the outermost push, drops what waits, and handles later pushes again', () => {
    const handled: string[] = [];
    const queue: InputQueue<string> = new InputQueue((input) => {
      handled.push(input);
      if (input === 'boom') {
        queue.push('never');
        throw new Error('handler bug');
      }
    });
    expect(() => {
      queue.push('boom');
    }).toThrow('handler bug');
    queue.push('after');
    expect(handled).toEqual(['boom', 'after']);
  });

  it('keeps what waits apart for each queue', () => {
    const seen: string[] = [];
    const first: InputQueue<string> = new InputQueue((input) => {
      seen.push(`1:${input}`);
      if (input === 'x') second.push('y');
    });
    const second: InputQueue<string> = new InputQueue((input) => {
      seen.push(`2:${input}`);
    });
    first.push('x');
    expect(seen).toEqual(['1:x', '2:y']);
  });
});

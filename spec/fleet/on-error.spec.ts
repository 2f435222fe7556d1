import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createRunDispatcher, serveRuns } from '../../lib/fleet.js';
import { guardOnError, ON_ERROR_THREW } from '../../lib/fleet/on-error.js';

afterEach(() => {
  jest.restoreAllMocks();
});

describe('guardOnError', () => {
  it('gives onError every error, a thrown value that is not an Error made one', () => {
    const told: Error[] = [];
    const report = guardOnError((error) => told.push(error), 'serveRuns');
    const error = new Error('ECONNREFUSED');
    report(error);
    report('a string');
    expect(told[0]).toBe(error);
    expect(told[1]).toBeInstanceOf(Error);
    expect(told[1]?.message).toBe('a string');
  });

  it('swallows a throwing onError, tells the first throw once on process.emitWarning, and still calls it with later errors', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    let calls = 0;
    const report = guardOnError(() => {
      calls += 1;
      throw new Error(`no logger (${String(calls)})`);
    }, 'createRunDispatcher');
    for (let i = 0; i < 3; i += 1) expect(() => {
      report(new Error('ECONNREFUSED'));
    }).not.toThrow();
    expect(calls).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith("agent-rx: createRunDispatcher's onError threw (no logger (1)); the fleet goes on, and later throws from it are ignored", { code: ON_ERROR_THREW });
  });

  it('never throws, even when the warning cannot be told', () => {
    jest.spyOn(process, 'emitWarning').mockImplementation(() => {
      throw new Error('no warnings here');
    });
    const report = guardOnError(() => {
      throw new Error('no logger');
    }, 'serveRuns');
    expect(() => {
      report(new Error('ECONNREFUSED'));
    }).not.toThrow();
  });

  it('tells nobody when there is no onError', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(() => {
      guardOnError(undefined, 'serveRuns')(new Error('ECONNREFUSED'));
    }).not.toThrow();
    expect(warn).not.toHaveBeenCalled();
  });

  it('throws a TypeError at once for an onError that is not a function', () => {
    expect(() => guardOnError('log' as unknown as (error: Error) => void, 'serveRuns')).toThrow(new TypeError("agent-rx: serveRuns's onError must be a function; got string"));
  });

  it('is checked by createRunDispatcher and serveRuns before they connect to anything', () => {
    const onError = 'log' as unknown as (error: Error) => void;
    expect(() => createRunDispatcher({ connection: 'redis://127.0.0.1:1', onError })).toThrow(new TypeError("agent-rx: createRunDispatcher's onError must be a function; got string"));
    expect(() => serveRuns({ connection: 'redis://127.0.0.1:1', concurrency: 1, agents: {}, onError })).toThrow(new TypeError("agent-rx: serveRuns's onError must be a function; got string"));
  });
});

import { describe, expect, it } from '@jest/globals';
import { runCodex, type RunCodexOptions } from '../../../lib/index.js';
import { codexAgent } from '../../../lib/agents/codex/definition.js';
import { processInvocation } from '../../helpers/invocation.js';

const buildCodexInvocation = (options: RunCodexOptions) => processInvocation(codexAgent, options);
import { configEntries, configFlag, tomlValue } from '../../../lib/agents/codex/toml.js';

/**
 * A strict reader of the TOML values `tomlValue` writes (TOML 1.0): basic strings, integers (64-bit),
 * floats, booleans, arrays and inline tables. What TOML forbids throws: a raw control character
 * in a string, an escape that is not a Unicode scalar value, an integer out of range, leading zeros.
 */
function parseToml(text: string): unknown {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`TOML: ${what} at ${String(at)} in ${text}`);
  };
  const space = (): void => {
    while (text[at] === ' ' || text[at] === '\t') at += 1;
  };
  const expectChar = (char: string): void => {
    space();
    if (text[at] !== char) fail(`expected ${char}`);
    at += 1;
  };
  const ESCAPES: Readonly<Record<string, string>> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };
  const string = (): string => {
    at += 1;
    let out = '';
    for (;;) {
      const char = text[at] ?? fail('unterminated string');
      at += 1;
      if (char === '"') return out;
      const code = char.charCodeAt(0);
      if ((code < 0x20 && char !== '\t') || code === 0x7f) fail(`raw control character U+${code.toString(16)}`);
      if (char !== '\\') {
        out += char;
        continue;
      }
      const escape = text[at] ?? fail('unterminated escape');
      at += 1;
      const simple = ESCAPES[escape];
      if (simple !== undefined) {
        out += simple;
        continue;
      }
      const length = escape === 'u' ? 4 : escape === 'U' ? 8 : fail(`invalid escape \\${escape}`);
      const hex = text.slice(at, at + length);
      if (!new RegExp(`^[0-9A-Fa-f]{${String(length)}}$`).test(hex)) fail('invalid unicode escape');
      const point = parseInt(hex, 16);
      if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) fail(`\\${escape}${hex} is not a Unicode scalar value`);
      out += String.fromCodePoint(point);
      at += length;
    }
  };
  const number = (): number => {
    const match = /^[+-]?(?:0|[1-9](?:_?\d)*)(?:\.\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?/.exec(text.slice(at));
    if (match === null) return fail('expected a value');
    at += match[0].length;
    const digits = match[0].replace(/_/g, '');
    if (/[.eE]/.test(digits)) return Number(digits);
    const integer = BigInt(digits);
    if (integer < -(2n ** 63n) || integer > 2n ** 63n - 1n) fail(`integer ${digits} out of the 64-bit range`);
    return Number(integer);
  };
  const key = (): string => {
    space();
    if (text[at] === '"') return string();
    const match = /^[A-Za-z0-9_-]+/.exec(text.slice(at)) ?? fail('expected a key');
    at += match[0].length;
    return match[0];
  };
  const value = (): unknown => {
    space();
    const char = text[at];
    if (char === '"') return string();
    if (char === '[') {
      at += 1;
      const items: unknown[] = [];
      for (;;) {
        space();
        if (text[at] === ']') break;
        items.push(value());
        space();
        if (text[at] !== ',') break;
        at += 1;
      }
      expectChar(']');
      return items;
    }
    if (char === '{') {
      at += 1;
      const table: Record<string, unknown> = {};
      space();
      if (text[at] !== '}') {
        for (;;) {
          const name = key();
          if (Object.hasOwn(table, name)) fail(`duplicate key ${name}`);
          expectChar('=');
          table[name] = value();
          space();
          if (text[at] !== ',') break;
          at += 1;
        }
      }
      expectChar('}');
      return table;
    }
    for (const [word, meaning] of [
      ['true', true],
      ['false', false],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return meaning;
      }
    }
    return number();
  };
  const result = value();
  space();
  if (at !== text.length) fail('text after the value');
  return result;
}

/** `-c` entries read back the way Codex reads them (the key path up to the first `=`), as one object. */
function readEntries(entries: readonly string[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const path = entry.slice(0, eq).split('.');
    const last = path.pop() as string;
    let table = root;
    for (const part of path) table = (table[part] ??= {}) as Record<string, unknown>;
    table[last] = parseToml(entry.slice(eq + 1));
  }
  return root;
}

const BASE = ['exec', '--experimental-json'];
const argsOf = (options: Omit<RunCodexOptions, 'prompt'>) => buildCodexInvocation({ prompt: 'p', ...options }).args;

describe('Codex arguments', () => {
  it('defaults: exec --experimental-json --skip-git-repo-check, the prompt on stdin, SIGTERM to interrupt, a new thread', () => {
    expect(buildCodexInvocation({ prompt: '-p --help' })).toEqual({
      executable: undefined,
      args: [...BASE, '--skip-git-repo-check'],
      processOptions: { interrupt: { signal: 'SIGTERM', stdin: null }, stdin: '-p --help' },
      resuming: false,
    });
  });

  it('builds argv from every option, in order, and passes the process options through', () => {
    const invocation = buildCodexInvocation({
      prompt: '--not-a-flag',
      executable: '/opt/codex',
      executableArgs: ['--launcher-flag'],
      model: 'gpt-5.5',
      provider: 'proxy',
      sandbox: 'read-only',
      approvalPolicy: 'on-request',
      reasoningEffort: 'low',
      config: { model_providers: { proxy: { name: 'Proxy', base_url: 'http://127.0.0.1:9/v1' } }, 'features.plugins': false },
      session: { resume: 'thread-name' },
      ephemeral: true,
      additionalDirectories: ['/a', '/b c'],
      agentRetry: false,
      extraArgs: ['--color', 'never'],
      cwd: '/work',
      env: { A: '1', B: undefined },
      gracePeriodMs: 500,
      timeoutMs: 60_000,
    });
    expect(invocation.executable).toBe('/opt/codex');
    expect(invocation.args).toEqual([
      '--launcher-flag',
      ...BASE,
      '-c',
      'model_providers.proxy.name="Proxy"',
      '-c',
      'model_providers.proxy.base_url="http://127.0.0.1:9/v1"',
      '-c',
      'features.plugins=false',
      '--model',
      'gpt-5.5',
      '-c',
      'model_provider="proxy"',
      '--sandbox',
      'read-only',
      '-c',
      'approval_policy="on-request"',
      '-c',
      'model_reasoning_effort="low"',
      '-c',
      'model_providers.proxy.request_max_retries=0',
      '-c',
      'model_providers.proxy.stream_max_retries=0',
      '--add-dir',
      '/a',
      '--add-dir',
      '/b c',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      'never',
      'resume',
      'thread-name',
    ]);
    expect(invocation.args).not.toContain('--not-a-flag');
    expect(invocation.processOptions).toEqual({
      interrupt: { signal: 'SIGTERM', stdin: null },
      cwd: '/work',
      env: { A: '1', B: undefined },
      gracePeriodMs: 500,
      timeoutMs: 60_000,
      stdin: '--not-a-flag',
    });
    expect(invocation.resuming).toBe(true);
  });

  it('maps each option on its own', () => {
    const cases: [Omit<RunCodexOptions, 'prompt'>, string[]][] = [
      [{ model: 'o4' }, ['--model', 'o4', '--skip-git-repo-check']],
      [{ provider: 'ollama-local' }, ['-c', 'model_provider="ollama-local"', '--skip-git-repo-check']],
      [{ sandbox: 'read-only' }, ['--sandbox', 'read-only', '--skip-git-repo-check']],
      [{ sandbox: 'workspace-write' }, ['--sandbox', 'workspace-write', '--skip-git-repo-check']],
      [{ sandbox: 'danger-full-access' }, ['--sandbox', 'danger-full-access', '--skip-git-repo-check']],
      [{ approvalPolicy: 'never' }, ['-c', 'approval_policy="never"', '--skip-git-repo-check']],
      [{ approvalPolicy: 'on-failure' }, ['-c', 'approval_policy="on-failure"', '--skip-git-repo-check']],
      [{ approvalPolicy: 'untrusted' }, ['-c', 'approval_policy="untrusted"', '--skip-git-repo-check']],
      [{ reasoningEffort: 'xhigh' }, ['-c', 'model_reasoning_effort="xhigh"', '--skip-git-repo-check']],
      [{ additionalDirectories: ['/x'] }, ['--add-dir', '/x', '--skip-git-repo-check']],
      [{ additionalDirectories: [] }, ['--skip-git-repo-check']],
      [{ skipGitRepoCheck: false }, []],
      [{ skipGitRepoCheck: true }, ['--skip-git-repo-check']],
      [{ ephemeral: true }, ['--skip-git-repo-check', '--ephemeral']],
      [{ ephemeral: false }, ['--skip-git-repo-check']],
      [{ extraArgs: ['--oss'] }, ['--skip-git-repo-check', '--oss']],
      [{ session: 'new' }, ['--skip-git-repo-check']],
      [{ session: 'last' }, ['--skip-git-repo-check', 'resume', '--last']],
      [{ session: { resume: '01a22ade-d612-7b03-8bda-b6d8516396ba' } }, ['--skip-git-repo-check', 'resume', '01a22ade-d612-7b03-8bda-b6d8516396ba']],
      [{ agentRetry: true }, ['--skip-git-repo-check']],
      [{ provider: 'proxy', agentRetry: true }, ['-c', 'model_provider="proxy"', '--skip-git-repo-check']],
      [{ config: {} }, ['--skip-git-repo-check']],
    ];
    for (const [options, args] of cases) expect([options, argsOf(options)]).toEqual([options, [...BASE, ...args]]);
    expect(argsOf({ executableArgs: ['a.js', '--x'] })).toEqual(['a.js', '--x', ...BASE, '--skip-git-repo-check']);
  });

  it('says which runs resume a thread', () => {
    expect(buildCodexInvocation({ prompt: 'p', session: 'new' }).resuming).toBe(false);
    expect(buildCodexInvocation({ prompt: 'p', session: 'last' }).resuming).toBe(true);
    expect(buildCodexInvocation({ prompt: 'p', session: { resume: 'x' } }).resuming).toBe(true);
  });

  it('agentRetry: false sets both retry counts of the custom provider to 0', () => {
    expect(argsOf({ provider: 'proxy', agentRetry: false })).toEqual([
      ...BASE,
      '-c',
      'model_provider="proxy"',
      '-c',
      'model_providers.proxy.request_max_retries=0',
      '-c',
      'model_providers.proxy.stream_max_retries=0',
      '--skip-git-repo-check',
    ]);
  });

  it('agentRetry: false without a provider, with a built-in one, or with an id that cannot name its settings, is a TypeError', () => {
    expect(() => argsOf({ agentRetry: false })).toThrow(TypeError);
    expect(() => argsOf({ agentRetry: false })).toThrow(/agentRetry: false needs `provider`/);
    // Codex 0.171 refuses all three: "model_providers contains reserved built-in provider IDs".
    for (const provider of ['openai', 'ollama', 'lmstudio']) expect(() => argsOf({ agentRetry: false, provider })).toThrow(/built-in providers/);
    expect(() => argsOf({ agentRetry: false, provider: 'my.proxy' })).toThrow(/letters, digits/);
    expect(() => runCodex({ prompt: 'p', agentRetry: false, provider: 'openai' })).toThrow(TypeError);
  });

  it('interrupts with SIGTERM and no stdin byte by default; a caller\'s interrupt replaces it', () => {
    expect(buildCodexInvocation({ prompt: 'p' }).processOptions.interrupt).toEqual({ signal: 'SIGTERM', stdin: null });
    expect(buildCodexInvocation({ prompt: 'p', interrupt: { signal: 'SIGINT' } }).processOptions.interrupt).toEqual({ signal: 'SIGINT' });
    expect(buildCodexInvocation({ prompt: 'p', interrupt: { signal: null, stdin: '\u0003' } }).processOptions.interrupt).toEqual({ signal: null, stdin: '\u0003' });
  });

  it('stdin is always the prompt, byte for byte: a stdin of the caller\'s is refused, not dropped', () => {
    const prompt = '-rf\n«ü» 🚀\r\n';
    expect(buildCodexInvocation({ prompt }).processOptions.stdin).toBe(prompt);
    expect(() => buildCodexInvocation({ prompt, stdin: 'other' } as unknown as RunCodexOptions)).toThrow('agent-rx: a codex run has no option "stdin"');
  });

  it('rejects each invalid option with a TypeError, in buildCodexInvocation and in runCodex at call time', () => {
    const bad: unknown[] = [
      undefined,
      null,
      'prompt',
      {},
      { prompt: '' },
      { prompt: ' \t\n' },
      { prompt: 5 },
      { prompt: 'p', executable: '' },
      { prompt: 'p', executable: 7 },
      { prompt: 'p', executableArgs: 'node' },
      { prompt: 'p', executableArgs: [1] },
      { prompt: 'p', model: '' },
      { prompt: 'p', provider: '' },
      { prompt: 'p', provider: 3 },
      { prompt: 'p', reasoningEffort: '' },
      { prompt: 'p', sandbox: 'full' },
      { prompt: 'p', sandbox: '' },
      { prompt: 'p', approvalPolicy: 'always' },
      { prompt: 'p', approvalPolicy: 1 },
      { prompt: 'p', session: 'continue' },
      { prompt: 'p', session: {} },
      { prompt: 'p', session: { resume: '' } },
      { prompt: 'p', session: { resume: 5 } },
      { prompt: 'p', ephemeral: 'yes' },
      { prompt: 'p', skipGitRepoCheck: 0 },
      { prompt: 'p', agentRetry: 'no' },
      { prompt: 'p', agentRetry: false },
      { prompt: 'p', agentRetry: false, provider: 'openai' },
      { prompt: 'p', additionalDirectories: '/tmp' },
      { prompt: 'p', additionalDirectories: [null] },
      { prompt: 'p', extraArgs: [1] },
      { prompt: 'p', config: [] },
      { prompt: 'p', config: null },
      { prompt: 'p', config: 'model="x"' },
      { prompt: 'p', config: { model: undefined } },
      { prompt: 'p', config: { '': 1 } },
    ];
    for (const options of bad) {
      expect(() => buildCodexInvocation(options as RunCodexOptions)).toThrow(TypeError);
      expect(() => runCodex(options as RunCodexOptions)).toThrow(TypeError);
    }
    // Process options are checked by runCodex at call time too, whichever executable is found later.
    for (const options of [{ gracePeriodMs: -1 }, { timeoutMs: 0 }, { idleTimeoutMs: Number.NaN }, { interrupt: { signal: 'TERM' } }, { maxLineBytes: 0 }]) {
      expect(() => runCodex({ prompt: 'p', ...options } as RunCodexOptions)).toThrow(TypeError);
    }
  });
});

/** Plain objects that refer to themselves: flattened into dotted keys, they would never end. */
function cyclicTable(): Record<string, unknown> {
  const a: Record<string, unknown> = {};
  a['self'] = a;
  return { a };
}

describe('Codex configuration as TOML', () => {
  it('flattens nested objects into dotted keys, one entry per value; arrays, inline tables and empty tables stay values', () => {
    const config = {
      model: 'gpt-5.5',
      'sandbox_workspace_write.network_access': true,
      model_providers: { proxy: { name: 'Proxy', request_max_retries: 3, stream_idle_timeout_ms: 1.5, headers: {} } },
      notify: ['notify-send', 'Codex'],
      mcp_servers: { docs: { command: 'npx', args: ['-y', 'docs-server'], env: { TOKEN: 't' } } },
      matrix: [[1, 2], [], [true, 'x']],
      profiles: [{ name: 'a b', 'needs quoting': 1, 'also.dotted': 'y', nested: { deep: [0.25] } }],
    };
    const entries = configEntries(config);
    expect(entries).toEqual([
      'model="gpt-5.5"',
      'sandbox_workspace_write.network_access=true',
      'model_providers.proxy.name="Proxy"',
      'model_providers.proxy.request_max_retries=3',
      'model_providers.proxy.stream_idle_timeout_ms=1.5',
      'model_providers.proxy.headers={}',
      'notify=["notify-send", "Codex"]',
      'mcp_servers.docs.command="npx"',
      'mcp_servers.docs.args=["-y", "docs-server"]',
      'mcp_servers.docs.env.TOKEN="t"',
      'matrix=[[1, 2], [], [true, "x"]]',
      'profiles=[{name = "a b", "needs quoting" = 1, "also.dotted" = "y", nested = {deep = [0.25]}}]',
    ]);
    // Read back as Codex reads them, the entries give the configuration again.
    const { 'sandbox_workspace_write.network_access': networkAccess, ...rest } = config;
    expect(readEntries(entries)).toStrictEqual({ ...rest, sandbox_workspace_write: { network_access: networkAccess } });
    expect(buildCodexInvocation({ prompt: 'p', config }).args).toEqual([...BASE, ...entries.flatMap((entry) => ['-c', entry]), '--skip-git-repo-check']);
  });

  it('writes strings as TOML basic strings: quotes, backslashes, newlines, control characters and DEL escaped', () => {
    const cases: [string, string][] = [
      ['plain', '"plain"'],
      ['', '""'],
      ['say "hi"', '"say \\"hi\\""'],
      ['C:\\path\\', '"C:\\\\path\\\\"'],
      ['line 1\nline 2\r\n', '"line 1\\nline 2\\r\\n"'],
      ['tab\there', '"tab\\there"'],
      ['\u0000\u0001\u001f', '"\\u0000\\u0001\\u001f"'],
      ['\b\f', '"\\b\\f"'],
      ['del\u007fend', '"del\\u007Fend"'],
      ['«ü» 🚀 \u2028', '"«ü» 🚀 \u2028"'],
    ];
    for (const [text, toml] of cases) {
      expect(tomlValue(text, 'x', new Set())).toBe(toml);
      expect(parseToml(toml)).toBe(text);
    }
    // Every ASCII character, read back by a strict TOML reader.
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).join('');
    expect(parseToml(tomlValue(ascii, 'x', new Set()))).toBe(ascii);
    // A lone surrogate cannot be written (nor passed as an argument): it becomes U+FFFD.
    expect(tomlValue('a\ud800b\udc00', 'x', new Set())).toBe('"a\ufffdb\ufffd"');
    expect(parseToml(tomlValue('pair 🚀 \ud83d', 'x', new Set()))).toBe('pair 🚀 \ufffd');
  });

  it('writes integers without a fraction and floats so that TOML reads them back', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [42, '42'],
      [-7, '-7'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
      [1.5, '1.5'],
      [-0.25, '-0.25'],
      [0.1, '0.1'],
      [1e-7, '1e-7'],
      [1e21, '1e+21'],
      // Whole numbers past 2^53 are floats: TOML integers stop at 2^63 - 1 and Codex reads a longer one as a string.
      [1e19, '1e+19'],
      [-(2 ** 60), '-1.152921504606847e+18'],
      [-1.5e300, '-1.5e+300'],
    ];
    for (const [value, toml] of cases) {
      expect(tomlValue(value, 'x', new Set())).toBe(toml);
      expect(parseToml(toml)).toBe(value);
    }
    expect(tomlValue(true, 'x', new Set())).toBe('true');
    expect(tomlValue(false, 'x', new Set())).toBe('false');
  });

  it('configFlag is one -c with a TOML value', () => {
    expect(configFlag('model_provider', 'proxy')).toEqual(['-c', 'model_provider="proxy"']);
    expect(configFlag('model_providers.proxy.request_max_retries', 0)).toEqual(['-c', 'model_providers.proxy.request_max_retries=0']);
    expect(configFlag('notify', ['a', 'b "c"'])).toEqual(['-c', 'notify=["a", "b \\"c\\""]']);
  });

  it('rejects what TOML cannot hold with a TypeError that names the path', () => {
    const loop: unknown[] = [];
    loop.push(loop);
    const selfish: Record<string, unknown> = {};
    selfish['me'] = [selfish];
    class Settings {
      readonly on = true;
    }
    const bad: [unknown, RegExp][] = [
      [{ n: Number.NaN }, /config\.n must be a finite number/],
      [{ n: Number.POSITIVE_INFINITY }, /config\.n must be a finite number/],
      [{ a: { b: [1, Number.NEGATIVE_INFINITY] } }, /config\.a\.b\[1\] must be a finite number/],
      [{ u: undefined }, /config\.u must be a string, a number/],
      [{ z: null }, /got null/],
      [{ f: () => 1 }, /got function/],
      [{ s: Symbol('s') }, /got symbol/],
      [{ b: 10n }, /got bigint/],
      [{ d: new Date(0) }, /config\.d must be/],
      [{ m: new Map() }, /config\.m must be/],
      [{ c: new Settings() }, /config\.c must be/],
      [{ l: loop }, /config\.l\[0\] refers to itself/],
      [{ list: [selfish] }, /refers to itself/],
      [cyclicTable(), /config\.a\.self refers to itself/],
      [{ 'a=b': 1 }, /invalid key "a=b"/],
      [{ '': 1 }, /invalid key ""/],
      [{ '.a': 1 }, /invalid key/],
      [{ 'a.': 1 }, /invalid key/],
      [{ 'a..b': 1 }, /invalid key/],
      [{ outer: { '': 1 } }, /config\.outer has an invalid key/],
      [[], /config must be an object/],
      [null, /config must be an object/],
      [new Settings(), /config must be an object/],
    ];
    for (const [config, message] of bad) {
      expect(() => configEntries(config as never)).toThrow(TypeError);
      expect(() => configEntries(config as never)).toThrow(message);
    }
  });

  it('the strict reader used here rejects what TOML rejects', () => {
    for (const text of ['"raw\nnewline"', '"del\u007f"', '"\\ud800"', '9223372036854775808', '01', '[1, 2', '{a = 1, a = 2}', '"a" x']) {
      expect(() => parseToml(text)).toThrow(SyntaxError);
    }
    expect(parseToml('9223372036854775807')).toBe(2 ** 63);
    expect(parseToml('{a = [1, {b = "c"}], "d e" = -0.5}')).toEqual({ a: [1, { b: 'c' }], 'd e': -0.5 });
  });
});

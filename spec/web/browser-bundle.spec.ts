import { describe, expect, it } from '@jest/globals';
import { build, type Metafile } from 'esbuild';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext, type Context } from 'node:vm';
import ts from 'typescript';
import type * as Browser from '../../lib/browser.js';
import { FakeEventSource } from './fake-event-source.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = 'lib/browser.ts';
const NODE_BUILTINS = new Set(builtinModules);

// Everything in `lib/browser.ts`, as a browser or a bundler for one sees it.
async function bundle(format: 'esm' | 'iife') {
  return build({
    absWorkingDir: ROOT,
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'browser',
    format,
    ...(format === 'iife' ? { globalName: 'agentRx' } : {}),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

// A page's own code: it imports retryAgentRun from the browser entry and rxjs, and exposes
// demo(), the messages of a cold run that fails once with a retryable 429 and then completes.
const DEMO = `
import { defer, lastValueFrom, of, toArray } from 'rxjs';
import { retryAgentRun } from './lib/browser.js';

const failed = {
  type: 'terminal.failed',
  reason: 'agent-error',
  message: 'pi reported an error: 429 rate limit exceeded',
  agentError: '429 rate limit exceeded',
  exitCode: 0,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
};

export function demo() {
  let attempts = 0;
  const run = defer(() => {
    attempts += 1;
    return attempts === 1
      ? of({ type: 'assistant', text: 'Hel' }, failed)
      : of({ type: 'assistant', text: 'Hello' }, { type: 'terminal.completed', stopReason: 'end_turn' });
  });
  return lastValueFrom(run.pipe(retryAgentRun({ delay: 0 }), toArray())).then((messages) => ({ attempts, messages }));
}
`;

async function bundleDemo() {
  return build({
    absWorkingDir: ROOT,
    stdin: { contents: DEMO, resolveDir: ROOT, sourcefile: 'demo.ts', loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'page',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

// A bare JavaScript context with the timers a browser has, and no Node global (no process, no Buffer).
function browserLikeContext(): Context {
  return createContext({ setTimeout, clearTimeout, setInterval, clearInterval });
}

// Imports of Node's own modules, by any spelling, anywhere in the bundle's graph.
function nodeImports(metafile: Metafile): string[] {
  const found: string[] = [];
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (input.startsWith('node:')) found.push(input);
    for (const { path, original } of imports) {
      for (const name of [path, original ?? '']) {
        if (name.startsWith('node:') || NODE_BUILTINS.has(name) || NODE_BUILTINS.has(name.split('/')[0] ?? '')) found.push(`${input} imports ${name}`);
      }
    }
  }
  return found;
}

describe('agent-rx/browser', () => {
  it('bundles for the browser without any Node module', async () => {
    const result = await bundle('esm');
    expect(result.errors).toEqual([]);
    expect(nodeImports(result.metafile)).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('lib/browser/from-agent-event-source.ts');
    // Outside lib/browser: the messages and their failure builder, the retry and collecting operators with what they need, nothing else.
    expect(inputs.filter((input) => input.startsWith('lib/') && !input.startsWith('lib/browser')).sort()).toEqual([
      'lib/messages.ts',
      'lib/operators/answer-text.ts',
      'lib/operators/collect-run.ts',
      'lib/operators/is-retryable-failure.ts',
      'lib/operators/retry-agent-run.ts',
      'lib/operators/session-to-run.ts',
      'lib/operators/validate.ts',
      'lib/terminal-failed.ts',
    ]);
    // Nothing of the process layer, the agents or the sources comes along.
    expect(inputs.filter((input) => /^lib\/(process|agents|sources)\//.test(input))).toEqual([]);
  });

  it('runs in a bare JavaScript context, without Node globals', async () => {
    const result = await bundle('iife');
    const code = result.outputFiles[0]?.text ?? '';
    const context = browserLikeContext();
    runInContext(`${code}\nglobalThis.agentRx = agentRx;`, context);
    const browser = (context as { agentRx: typeof Browser }).agentRx;
    expect(Object.keys(browser).sort()).toEqual(
      [
        'fromAgentEventSource',
        'fromSessionEventSource',
        'CliMessageSchema',
        'UsageSchema',
        'InvalidOutputLineSchema',
        'FailureReasonSchema',
        'StopReasonSchema',
        'TOOL_KINDS',
        'PERMISSION_DECISIONS',
        'PermissionRequestedSchema',
        'PermissionResolvedSchema',
        'PermissionDecisionSchema',
        'PermissionResolverSchema',
        'isPermissionRequested',
        'isPermissionResolved',
        'SessionStartedSchema',
        'SessionPassivatedSchema',
        'SessionResumedSchema',
        'AssistantSchema',
        'AssistantThoughtSchema',
        'AssistantWithdrawnSchema',
        'ToolCallSchema',
        'ToolUpdateSchema',
        'ToolCompletedSchema',
        'ToolFailedSchema',
        'AgentRetrySchema',
        'AgentWarningSchema',
        'RunRetryingSchema',
        'TerminalCompletedSchema',
        'TerminalFailedSchema',
        'TimeoutSchema',
        'BUDGET_LIMITS',
        'BudgetSpentSchema',
        'BudgetExceededSchema',
        'SessionCommandSchema',
        'SessionMessageSchema',
        'TurnStartedSchema',
        'TurnCompletedSchema',
        'TurnFailedSchema',
        'InputKindSchema',
        'InputAcceptedSchema',
        'InputDroppedSchema',
        'IMAGE_MIME_TYPES',
        'ImageMimeTypeSchema',
        'TextPartSchema',
        'ImagePartSchema',
        'FilePartSchema',
        'PromptPartSchema',
        'OutputSchemaSchema',
        'OutputIssueSchema',
        'ToolContentSchema',
        'isTurnStarted',
        'isTurnCompleted',
        'isTurnFailed',
        'isTurnEnd',
        'isInputAccepted',
        'isInputDropped',
        'sessionToRun',
        'isSessionStarted',
        'isSessionPassivated',
        'isSessionResumed',
        'isAssistant',
        'isAssistantThought',
        'isAssistantWithdrawn',
        'isToolCall',
        'isToolUpdate',
        'isToolCompleted',
        'isToolFailed',
        'isAgentRetry',
        'isAgentWarning',
        'isRunRetrying',
        'isTerminalCompleted',
        'isTerminalFailed',
        'isTerminal',
        'retryAgentRun',
        'RETRY_BASE_DELAY_MS',
        'RETRY_MAX_DELAY_MS',
        'isRetryableFailure',
        'collectRun',
        'collectRunResult',
        'RunFailedError',
      ].sort(),
    );
    const source = new FakeEventSource('/run');
    const seen: unknown[] = [];
    browser.fromAgentEventSource(source).subscribe((message) => seen.push(message));
    source.open();
    source.send({ type: 'assistant', text: 'hi' });
    source.send('not json');
    source.send({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(JSON.parse(JSON.stringify(seen))).toEqual([
      { type: 'assistant', text: 'hi' },
      { type: 'terminal.completed', stopReason: 'end_turn' },
    ]);
    expect(source.readyState).toBe(2);
    expect([browser.RETRY_BASE_DELAY_MS, browser.RETRY_MAX_DELAY_MS]).toEqual([1000, 30_000]);
  });

  it('retries a run with retryAgentRun in a context without process or Buffer', async () => {
    const result = await bundleDemo();
    expect(result.errors).toEqual([]);
    expect(nodeImports(result.metafile)).toEqual([]);
    const context = browserLikeContext();
    expect(runInContext('[typeof process, typeof Buffer, typeof require]', context)).toEqual(['undefined', 'undefined', 'undefined']);
    runInContext(`${result.outputFiles[0]?.text ?? ''}\nglobalThis.page = page;`, context);
    const page = (context as { page: { demo: () => Promise<{ attempts: number; messages: unknown[] }> } }).page;
    const { attempts, messages } = await page.demo();
    expect(attempts).toBe(2);
    expect(JSON.parse(JSON.stringify(messages))).toEqual([
      { type: 'assistant', text: 'Hel' },
      { type: 'run.retrying', attempt: 2, delayMs: 0, failure: expect.objectContaining({ type: 'terminal.failed', agentError: '429 rate limit exceeded' }) },
      { type: 'assistant', text: 'Hello' },
      { type: 'terminal.completed', stopReason: 'end_turn' },
    ]);
  });

  it('type-checks with the DOM typings and no Node typings, taking a real EventSource and retrying', () => {
    const check = `${ROOT}spec/web/dom-check.virtual.ts`;
    const text = [
      "import { fromAgentEventSource, isAssistant, isRetryableFailure, retryAgentRun } from '../../lib/browser.js';",
      "fromAgentEventSource(new EventSource('/run?prompt=hi')).subscribe((m) => { if (isAssistant(m)) document.title = m.text; });",
      "fromAgentEventSource(new URL('/run', location.href), { EventSource, withCredentials: true });",
      "fromAgentEventSource('/run').pipe(retryAgentRun({ maxAttempts: 4, isRetryable: isRetryableFailure })).subscribe();",
    ].join('\n');
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      types: [],
      noEmit: true,
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const readFile = host.readFile.bind(host);
    host.getSourceFile = (name, language, ...rest) => (name === check ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest));
    host.fileExists = (name) => name === check || fileExists(name);
    host.readFile = (name) => (name === check ? text : readFile(name));
    const program = ts.createProgram([check], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file === undefined ? '' : `${diagnostic.file.fileName.replace(ROOT, '')}: `;
      return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    });
    expect(problems).toEqual([]);
  }, 60_000);
});

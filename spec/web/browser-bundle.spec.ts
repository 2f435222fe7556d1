import { describe, expect, it } from '@jest/globals';
import { build, type Metafile } from 'esbuild';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';
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
    expect(inputs).toContain('lib/messages.ts');
    // Nothing of the process layer or the agents comes along.
    expect(inputs.filter((input) => input.startsWith('lib/') && !input.startsWith('lib/browser') && input !== 'lib/messages.ts')).toEqual([]);
  });

  it('runs in a bare JavaScript context, without Node globals', async () => {
    const result = await bundle('iife');
    const code = result.outputFiles[0]?.text ?? '';
    const context = createContext({});
    runInContext(`${code}\nglobalThis.agentRx = agentRx;`, context);
    const browser = (context as { agentRx: typeof Browser }).agentRx;
    expect(Object.keys(browser).sort()).toEqual(
      [
        'fromAgentEventSource',
        'CliMessageSchema',
        'UsageSchema',
        'InvalidOutputLineSchema',
        'FailureReasonSchema',
        'SessionStartedSchema',
        'SessionResumedSchema',
        'AssistantSchema',
        'AssistantThoughtSchema',
        'ToolCallSchema',
        'ToolUpdateSchema',
        'ToolCompletedSchema',
        'ToolFailedSchema',
        'AgentRetrySchema',
        'RunRetryingSchema',
        'TerminalCompletedSchema',
        'TerminalFailedSchema',
        'isSessionStarted',
        'isSessionResumed',
        'isAssistant',
        'isAssistantThought',
        'isToolCall',
        'isToolUpdate',
        'isToolCompleted',
        'isToolFailed',
        'isAgentRetry',
        'isRunRetrying',
        'isTerminalCompleted',
        'isTerminalFailed',
        'isTerminal',
      ].sort(),
    );
    const source = new FakeEventSource('/run');
    const seen: unknown[] = [];
    browser.fromAgentEventSource(source).subscribe((message) => seen.push(message));
    source.open();
    source.send({ type: 'assistant', text: 'hi' });
    source.send('not json');
    source.send({ type: 'terminal.completed', stopReason: 'stop' });
    expect(JSON.parse(JSON.stringify(seen))).toEqual([
      { type: 'assistant', text: 'hi' },
      { type: 'terminal.completed', stopReason: 'stop' },
    ]);
    expect(source.readyState).toBe(2);
  });

  it('type-checks with the DOM typings and no Node typings, taking a real EventSource', () => {
    const check = `${ROOT}spec/web/dom-check.virtual.ts`;
    const text = [
      "import { fromAgentEventSource, isAssistant } from '../../lib/browser.js';",
      "fromAgentEventSource(new EventSource('/run?prompt=hi')).subscribe((m) => { if (isAssistant(m)) document.title = m.text; });",
      "fromAgentEventSource(new URL('/run', location.href), { EventSource, withCredentials: true });",
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

import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The API reference's TypeScript compiles against the library as a user imports it: every
// `@example` and every ```ts block in the documentation of what the entry points export (and of
// their members), and the reference's start page. An example without imports is a fragment: it
// sees every export of `agent-rx` and `agent-rx/fleet`, the usual rxjs names, and PRELUDE.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY_POINTS = { 'agent-rx': 'lib/index.ts', 'agent-rx/browser': 'lib/browser.ts', 'agent-rx/fleet': 'lib/fleet.ts', 'agent-rx/dialects': 'lib/dialects.ts', 'agent-rx/otel': 'lib/otel.ts', 'agent-rx/ai-sdk': 'lib/ai-sdk.ts' };
const START_PAGE = 'docs/start-here.md';
// Inside the checkout (git-ignored), so that rxjs and the Node typings resolve from node_modules.
const WORK = join(ROOT, '.artifacts', 'api-examples');

const RXJS = ['EMPTY', 'Observable', 'Subject', 'defer', 'filter', 'from', 'fromEvent', 'lastValueFrom', 'map', 'of', 'takeUntil', 'tap', 'timeout'];

// What the fragments leave to the reader.
const PRELUDE = `import type { PipelineItem, ProcessItem, SessionCommand, SessionMessage } from 'agent-rx';
import type { Observable } from 'rxjs';
declare global {
  /** A prompt from the user. */
  const prompt: string;
  /** A UI's own rendering of a message. */
  function render(message: SessionMessage): void;
  /** A session's commands, e.g. a Subject fed by the UI. */
  const commands: Observable<SessionCommand>;
  /** An agent's arguments. */
  const args: readonly string[];
  /** A process's output, e.g. processLines(...). */
  const lines: Observable<ProcessItem>;
  /** A recorded run: its process items (lines, then the exit). */
  const recordedItems: readonly ProcessItem[];
  /** Parsed items on their way to messages (after parseJsonLine and snapshotToDelta). */
  const items: Observable<PipelineItem>;
  /** The request a server answers. */
  const request: { readonly signal: AbortSignal };
  /** A run's id, and the id of the last entry a reader saw. */
  const runId: string;
  const lastEventId: string;
  /** A page's elements and functions. */
  const answer: { append(text: string): void };
  const status: { textContent: string | null };
  function startTurn(turn: number, prompt: string): void;
  function showTurnFailure(turn: number, message: string): void;
}
export {};
`;

interface Example {
  /** Where it is written: \`file:line\`. */
  readonly origin: string;
  readonly code: string;
}

/** The code of a doc comment's `@example` tags and ```ts blocks (its ` * ` margins removed). */
function examplesOf(comment: string, file: string, line: number): Example[] {
  const lines = comment.split('\n').map((text) => text.replace(/^\s*\/?\*+\/?\s?/, '').replace(/\s*\*\/$/, ''));
  const found: Example[] = [];
  for (let at = 0; at < lines.length; at += 1) {
    const text = lines[at] ?? '';
    const origin = `${file}:${String(line + at)}`;
    if (text.startsWith('@example')) {
      const block: string[] = [];
      for (at += 1; at < lines.length && !(lines[at] ?? '').startsWith('@'); at += 1) block.push(lines[at] ?? '');
      at -= 1;
      // An example with a fenced block is Markdown (its blocks are found below); without one, it is all code.
      if (!block.some((row) => row.startsWith('```'))) found.push({ origin, code: block.join('\n') });
    } else if (/^```(ts|typescript)$/.test(text.trim())) {
      const block: string[] = [];
      for (at += 1; at < lines.length && lines[at]?.trim() !== '```'; at += 1) block.push(lines[at] ?? '');
      found.push({ origin, code: block.join('\n') });
    }
  }
  return found;
}

interface Api {
  readonly examples: Example[];
  /** Exported functions and classes whose documentation has no example. */
  readonly withoutExample: string[];
  /** The names a fragment may use, by entry point: values and types apart. */
  readonly names: Map<string, { values: Set<string>; types: Set<string> }>;
}

/** The documented examples of everything the entry points export, and the exported names. */
function readApi(): Api {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error('tsconfig.build.json could not be read');
  const program = ts.createProgram(
    Object.values(ENTRY_POINTS).map((entry) => join(ROOT, entry)),
    config.options,
  );
  const checker = program.getTypeChecker();
  const comments = new Map<string, Example[]>();
  /** The examples of a declaration's doc comments, kept once for all the exports that reach it. */
  const collect = (node: ts.Node): Example[] => {
    const file = node.getSourceFile();
    return ts.getJSDocCommentsAndTags(node).flatMap((doc) => {
      if (!ts.isJSDoc(doc)) return [];
      const key = `${file.fileName}:${String(doc.pos)}`;
      const line = file.getLineAndCharacterOfPosition(doc.getStart()).line + 1;
      const found = examplesOf(doc.getText(), relative(ROOT, file.fileName), line);
      comments.set(key, found);
      return found;
    });
  };
  const withoutExample = new Set<string>();
  const names = new Map<string, { values: Set<string>; types: Set<string> }>();
  for (const [specifier, entry] of Object.entries(ENTRY_POINTS)) {
    const file = program.getSourceFile(join(ROOT, entry));
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (file === undefined || module === undefined) throw new Error(`${entry}: no module`);
    // The entry point's own comment (`@module`).
    const head = /^\/\*\*[\s\S]*?\*\//.exec(file.text);
    if (head !== null) comments.set(`${file.fileName}:head`, examplesOf(head[0], entry, 1));
    const exported = { values: new Set<string>(), types: new Set<string>() };
    names.set(specifier, exported);
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? exported.values : exported.types).add(symbol.name);
      let examples = 0;
      for (const declaration of target.declarations ?? []) {
        examples += collect(declaration).length;
        if (ts.isClassDeclaration(declaration) || ts.isInterfaceDeclaration(declaration)) declaration.members.forEach(collect);
      }
      if (target.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class) && examples === 0) withoutExample.add(symbol.name);
    }
  }
  return { examples: [...comments.values()].flat(), withoutExample: [...withoutExample], names };
}

/** The start page's ```ts blocks. */
function startPageExamples(): Example[] {
  const text = readFileSync(join(ROOT, START_PAGE), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => ({
    origin: `${START_PAGE}:${String(text.slice(0, match.index).split('\n').length)}`,
    code: match[1] ?? '',
  }));
}

/** A fragment made a module: the library's names, rxjs's, and the prelude's are in scope. */
function asModule(code: string, names: Api['names']): string {
  if (/^import /m.test(code)) return code;
  const seen = new Set<string>(RXJS);
  const imports = [`import { ${RXJS.join(', ')} } from 'rxjs';`, `import * as z from 'zod';`];
  for (const [specifier, { values, types }] of names) {
    if (specifier === 'agent-rx/browser') continue; // all of it is in agent-rx
    const fresh = (set: Set<string>): string[] => [...set].filter((name) => !seen.has(name));
    const [value, type] = [fresh(values), fresh(types)];
    [...value, ...type].forEach((name) => seen.add(name));
    imports.push(`import { ${value.join(', ')} } from '${specifier}';`, `import type { ${type.join(', ')} } from '${specifier}';`);
  }
  return `${imports.join('\n')}\n\n${code}\nexport {};\n`;
}

/** The examples compiled with the project's strict settings; the problems, by the example's origin. */
function typeCheck(examples: readonly Example[], names: Api['names']): string[] {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  writeFileSync(join(WORK, 'prelude.ts'), PRELUDE);
  const origins = new Map<string, string>();
  const files = examples.map((example, index) => {
    const file = join(WORK, `${String(index + 1).padStart(3, '0')}-${basename(example.origin).replace(/[^\w.-]/g, '_')}.ts`);
    writeFileSync(file, asModule(example.code, names));
    origins.set(file, example.origin);
    return file;
  });
  const base = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (base === undefined) throw new Error('tsconfig.json could not be read');
  const paths = Object.fromEntries(Object.entries(ENTRY_POINTS).map(([specifier, entry]) => [specifier, [join(ROOT, entry)]]));
  const program = ts.createProgram([join(WORK, 'prelude.ts'), ...files], { ...base.options, noUnusedLocals: false, paths });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file !== undefined && origins.has(diagnostic.file.fileName))
    .map((diagnostic) => {
      const file = diagnostic.file as ts.SourceFile;
      const line = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1;
      return `${origins.get(file.fileName) ?? ''} (${basename(file.fileName)}:${String(line)}): ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
}

describe('the API reference', () => {
  let api: Api;
  beforeAll(() => {
    api = readApi();
  }, 120_000);

  it('has an example for every exported function and class', () => {
    expect(api.withoutExample).toEqual([]);
  });

  it('has examples, and every one type-checks against the library', () => {
    const examples = [...startPageExamples(), ...api.examples];
    expect(examples.length).toBeGreaterThanOrEqual(30);
    expect(typeCheck(examples, api.names)).toEqual([]);
  }, 120_000);
});

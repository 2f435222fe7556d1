import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// No module of lib/ imports itself through a cycle: not through imports that run, and not through
// type imports either (`import()` loads lazily and is left out).
const lib = fileURLToPath(new URL('../../lib', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The lib modules `file` imports at run time (with `types`: its type-only imports too). */
function imports(file: string, text: string, types = false): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.phaseModifier === ts.SyntaxKind.TypeKeyword ||
          (clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (types || !typeOnly) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      const typeOnly = statement.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly));
      if (types || !typeOnly) specifier = statement.moduleSpecifier;
    }
    if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      found.push(resolve(dirname(file), specifier.text).replace(/\.js$/, '.ts'));
    }
  }
  return found;
}

/** The cycles of a graph, each as the modules of one strongly connected component (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('import cycles', () => {
  it('finds a cycle, and a type-only import is not one', () => {
    const text = "import { b } from './b.js';\nimport type { C } from './c.js';\nimport { type D } from './d.js';\nexport { e } from './e.js';\nexport type { F } from './f.js';";
    expect(imports('/x/a.ts', text)).toEqual(['/x/b.ts', '/x/e.ts']);
    expect(imports('/x/a.ts', text, true)).toEqual(['/x/b.ts', '/x/c.ts', '/x/d.ts', '/x/e.ts', '/x/f.ts']);
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c'], ['e']]);
  });

  it.each([
    ['imports that run', false],
    ['type imports', true],
  ])('lib/ has none through %s', (_what, types) => {
    const graph = new Map(sources(lib).map((file) => [file, imports(file, readFileSync(file, 'utf8'), types)]));
    expect(cycles(graph).map((component) => component.map((file) => relative(lib, file)))).toEqual([]);
  });
});

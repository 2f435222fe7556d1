import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { SessionCommandSchema, SessionMessageSchema } from '../../lib/messages.js';

// The public API as the compiler prints it, which is what editor hovers, compiler errors and the
// API reference show: the message types by name (`CliMessage`, `SessionMessage`, `RunSpec`, …),
// never a union of their members spelled out in place.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY_POINTS = ['lib/index.ts', 'lib/browser.ts', 'lib/fleet.ts', 'lib/dialects.ts', 'lib/otel.ts', 'lib/ai-sdk.ts'];

/** `type: "assistant"`, `agent: "pi"`, …: one member of a message union (or a run spec) written out. */
function memberPattern(): RegExp {
  const types = [...SessionMessageSchema.options, ...SessionCommandSchema.options].map((schema) => schema.shape.type.value);
  const quoted = (values: readonly string[]): string => values.map((value) => JSON.stringify(value).replaceAll('.', '\\.')).join('|');
  return new RegExp(`\\b(type: (${quoted(types)})|agent: (${quoted(AGENT_NAMES)}))`);
}

/** Every exported function, variable, class and interface member of the entry points, with its type as printed. */
function printedTypes(): Map<string, string> {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error('tsconfig.build.json could not be read');
  const program = ts.createProgram(
    ENTRY_POINTS.map((entry) => join(ROOT, entry)),
    config.options,
  );
  const checker = program.getTypeChecker();
  const printed = new Map<string, string>();
  const print = (name: string, symbol: ts.Symbol, at: ts.Node): void => {
    printed.set(name, checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, at), at, ts.TypeFormatFlags.NoTruncation));
  };
  for (const entry of ENTRY_POINTS) {
    const file = program.getSourceFile(join(ROOT, entry));
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`${entry}: no module`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.[0];
      if (declaration === undefined) continue;
      const name = `${entry}: ${exported.name}`;
      if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable | ts.SymbolFlags.Class)) print(name, symbol, declaration);
      if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
        for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) print(`${name}.${member.name}`, member, declaration);
      }
    }
  }
  return printed;
}

describe('the public API as hovers, compiler errors and the API reference show it', () => {
  it('names the message types in every signature instead of spelling their members out', () => {
    const printed = printedTypes();
    // The entry points were read: the sources, the operators, the fleet's dispatcher.
    expect(printed.get('lib/index.ts: runPi')).toBe('<Output = unknown>(options: RunPiOptions<Output>) => Observable<CliMessage<Output>>');
    expect(printed.get('lib/fleet.ts: RunDispatcher.run')).toBe('<Output = unknown>(spec: DispatchSpec<Output>, options?: DispatchOptions) => Observable<CliMessage<Output>>');
    const member = memberPattern();
    const expanded = [...printed].filter(([, type]) => member.test(type)).map(([name, type]) => `${name}: ${type.slice(0, 160)}`);
    expect(expanded).toEqual([]);
  }, 120_000);
});

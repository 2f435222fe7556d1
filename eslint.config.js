import js from '@eslint/js';
import tseslint from 'typescript-eslint';


// The floors (ARCHITECTURE.md): a folder imports at run time only from the floors below it; type
// imports of contract types are allowed. Each rule is proven to fail on a violation
// (spec/architecture/floors.spec.ts).
const above = (...folders) => folders.map((folder) => ({ group: [`**/${folder}/**`, `./${folder}/**`], allowTypeImports: true, message: `a floor below ${folder}/ imports nothing of it at run time` }));
const entries = { regex: String.raw`^(\.\./)*(\./)?(index|fleet|browser|agent-table)\.js$`, allowTypeImports: true, message: 'the entry points and the agent table sit above every floor but the entry points' };
const sideEffects = {
  paths: ['node:fs', 'node:fs/promises', 'node:os', 'node:child_process', 'node:net', 'node:http', 'execa'].map((name) => ({ name, allowTypeImports: true, message: 'a pure floor touches no file system, process or network: that code sits in a setup/ folder or in the process layer' })),
};
const wall = (...patterns) => ['error', { patterns }];
const wallAndPure = (...patterns) => ['error', { ...sideEffects, patterns }];
const floorRules = [
  {
    // The contract and the process layer.
    files: ['lib/messages.ts', 'lib/terminal-failed.ts', 'lib/same-type.ts', 'lib/process/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wall(...above('operators', 'agents', 'sources', 'sessions', 'fleet', 'serve', 'cli', 'browser'), entries) },
  },
  {
    // Pure operators, the Dialect and session-protocol contracts.
    files: ['lib/operators/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wallAndPure(...above('agents', 'sources', 'sessions', 'fleet', 'serve', 'cli', 'browser'), entries) },
  },
  {
    // The agents: pure mapping; their setup code (file system, PATH) apart in setup/ folders, which
    // only an agent's definition and the sources reach.
    files: ['lib/agents/**/*.ts'],
    ignores: ['lib/agents/**/setup/**', 'lib/agents/*/definition.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': wallAndPure(
        ...above('sources', 'sessions', 'fleet', 'serve', 'cli', 'browser'),
        entries,
        { group: ['**/setup/**', './setup/**'], message: "an agent's setup code (file system, PATH) is reached only through its definition" },
      ),
    },
  },
  {
    files: ['lib/agents/**/setup/**/*.ts', 'lib/agents/*/definition.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wall(...above('sources', 'sessions', 'fleet', 'serve', 'cli', 'browser'), entries) },
  },
  {
    // The session machine: pure.
    files: ['lib/sessions/session-machine.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wallAndPure(...above('agents', 'sources', 'fleet', 'serve', 'cli', 'browser'), entries) },
  },
  {
    // Composition: a generic run and a generic session over a definition.
    files: ['lib/sources/**/*.ts', 'lib/sessions/**/*.ts'],
    ignores: ['lib/sessions/session-machine.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wall(...above('fleet', 'serve', 'cli', 'browser'), entries) },
  },
  {
    // The agent table, above the sources; the entry points below the command line.
    files: ['lib/agent-table.ts', 'lib/fleet/**/*.ts', 'lib/serve/**/*.ts', 'lib/ai-sdk/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': wall(...above('cli', 'browser'), { ...entries, regex: String.raw`^(\.\./)*(\./)?(index|fleet|browser)\.js$` }) },
  },
  {
    // The browser entry: nothing of Node, nothing that spawns.
    files: ['lib/browser/**/*.ts', 'lib/browser.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...above('process', 'agents', 'sources', 'sessions', 'fleet', 'serve', 'cli'),
            { regex: String.raw`^(node:.*|execa|(\.\./)*(\./)?(index|fleet|agent-table)\.js)$`, allowTypeImports: true, message: 'the browser entry runs in a browser: nothing of Node' },
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', '.artifacts/**', 'bench/results/**', 'node_modules/**', 'coverage/**', 'spec/fixtures/**/*.mjs', 'spec/fleet/fixtures/*.mjs', 'examples/**/*.mjs', 'bench/*.mjs', '*.config.js', 'spec/summary-reporter.js', 'spec/sequencer.js'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // One module sends signals (it also holds the keeper's script, the only other place that kills).
    files: ['lib/**/*.ts'],
    ignores: ['lib/process/signals.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'CallExpression[callee.property.name="kill"]', message: 'Signals are sent only by lib/process/signals.ts (sendSignal, signalGroup).' },
      ],
    },
  },
  ...floorRules,
  {
    // The scripts npm runs around the tests: plain Node ESM, outside the TypeScript project.
    files: ['scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { projectService: false }, globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', '.artifacts/**', 'bench/results/**', 'node_modules/**', 'coverage/**', 'spec/fixtures/**/*.mjs', 'spec/fleet/fixtures/*.mjs', 'examples/**/*.mjs', 'bench/*.mjs', '*.config.js', 'spec/summary-reporter.js'] },
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
);

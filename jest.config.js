import { availableParallelism } from 'node:os';

/** @type {import('jest').Config} */
export default {
  // Two suites at a time even on two cores: most of a real agent's spec is waiting on the agent
  // and the model server, not on a core.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  testEnvironment: 'node',
  // jest 30 + execa's signal-exit: without this, a passing run exits 1 with a stack overflow.
  testEnvironmentOptions: { globalsCleanup: 'off' },
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/spec/**/*.spec.ts'],
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/spec/summary-reporter.js'],
  // The longest suites first, on a fresh machine too (spec/durations.json).
  testSequencer: '<rootDir>/spec/sequencer.js',
};

// Longest suites first, so that the last minutes of a run do not leave a worker idle beside one long
// suite. Jest knows how long each suite took from its cache of earlier runs; a fresh machine (CI)
// has none and would order by file size, which says little here (a conformance spec of a few lines
// runs a shared suite for minutes). spec/durations.json gives the seconds of a whole run on two
// cores (suites under five seconds left out: one second each); refresh it from a run's output with
// `node scripts/spec-durations.mjs < jest-output.txt`.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

const measured = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));
const Base = Sequencer.default ?? Sequencer;

export default class LongestFirst extends Base {
  time(test) {
    return super.time(test) ?? (measured[relative(test.context.config.rootDir, test.path)] ?? 1) * 1000;
  }
}

// Reads a jest run's output on stdin and writes spec/durations.json: the seconds of each suite that
// jest printed a time for (`PASS spec/… (12.3 s)`), longest first. spec/sequencer.js reads it.
import { readFileSync, writeFileSync } from 'node:fs';

const durations = {};
for (const [, path, seconds] of readFileSync(0, 'utf8').matchAll(/^(?:PASS|FAIL) (spec\/\S+\.spec\.ts) \(([\d.]+) s\)/gm)) {
  durations[path] = Math.max(durations[path] ?? 0, Math.round(Number(seconds)));
}
const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => b[1] - a[1]));
writeFileSync(new URL('../spec/durations.json', import.meta.url), `${JSON.stringify(sorted, null, 2)}\n`);
process.stdout.write(`spec/durations.json: ${String(Object.keys(sorted).length)} suites\n`);

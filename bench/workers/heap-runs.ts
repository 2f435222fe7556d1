// Sequential short runs in a fresh process started with --expose-gc: the heap after a full GC,
// sampled every `every` runs. Usage: heap-runs.ts <runPi|baseline> <runs> <every> <file> <sha256>
// Prints {"samples":[{"runs":…,"heapMB":…}],"msPerRun":…,"msToComplete":…,"maxRssMB":…} on its last
// line. Each runPi run is awaited until its clean-up after exit has finished (onStopped), so runs
// never overlap; msToComplete is spawn → the stream's completion, msPerRun includes the clean-up.
import { sha256 } from '../stream.js';
import { baselineRead, PI_ARGS, runPiRead, serveCommand } from '../readers.js';

const [mode = 'runPi', runsText = '1000', everyText = '100', file = '', expectedSha256 = ''] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const runs = Number(runsText);
const every = Number(everyText);
const { command, args } = serveCommand(file);
const heapMB = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const samples: { runs: number; heapMB: number }[] = [{ runs: 0, heapMB: heapMB() }];
const started = performance.now();
let completeMs = 0;
for (let run = 1; run <= runs; run += 1) {
  const result = mode === 'runPi' ? await runPiRead(command, args) : await baselineRead(command, [...args, ...PI_ARGS]);
  completeMs += result.ms;
  if (sha256(result.text) !== expectedSha256) throw new Error(`run ${run}: wrong answer`);
  if (run % every === 0) samples.push({ runs: run, heapMB: heapMB() });
}
const msPerRun = (performance.now() - started) / runs;
console.log(JSON.stringify({ samples, msPerRun, msToComplete: completeMs / runs, maxRssMB: process.resourceUsage().maxRSS / 1024 }));

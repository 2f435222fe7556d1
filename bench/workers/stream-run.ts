// One read of a recorded pi stream in a fresh process, for clean peak-RSS figures.
// Usage: stream-run.ts <runPi|runPiTextLines|baseline|pipe|idle> <file> <sha256 of the answer>
// Prints {"ms":…,"cpuMs":…,"maxRssMB":…,"ok":…} on its last line.
import { sha256 } from '../stream.js';
import { baselineRead, PI_ARGS, pipeRead, runPiRead, runPiTextLines, serveCommand } from '../readers.js';

const [mode = 'idle', file = '', expectedSha256 = ''] = process.argv.slice(2);
const { command, args } = serveCommand(file);
let ms = 0;
let cpuMs = 0;
let ok = true;
switch (mode) {
  case 'runPi':
  case 'runPiTextLines': {
    const result = await runPiRead(command, args, {}, mode === 'runPi' ? undefined : runPiTextLines);
    ({ ms, cpuMs } = result);
    ok = sha256(result.text) === expectedSha256 && result.terminal?.type === 'terminal.completed';
    break;
  }
  case 'baseline': {
    const result = await baselineRead(command, [...args, ...PI_ARGS]);
    ({ ms, cpuMs } = result);
    ok = sha256(result.text) === expectedSha256;
    break;
  }
  case 'pipe':
    ({ ms, cpuMs } = await pipeRead(command, [...args, ...PI_ARGS]));
    break;
  case 'idle':
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
console.log(JSON.stringify({ ms, cpuMs, maxRssMB: process.resourceUsage().maxRSS / 1024, ok }));

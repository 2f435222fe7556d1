import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { cancelLatency } from './cancel-latency.js';

const runs = Number(process.env['BENCH_RUNS'] ?? 20);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
console.log(`agent-rx benchmarks — ${new Date().toISOString()} — ${machine}\n`);

const cancel = await cancelLatency(runs);
console.log('Cancel latency: unsubscribe → every process of the tree gone (ms)');
console.log('| case | runs | min | median | max | survivors |');
console.log('|---|---|---|---|---|---|');
for (const row of cancel) {
  const { runs: n, min, median, max } = row.summary;
  console.log(`| ${row.label} | ${n} | ${min.toFixed(1)} | ${median.toFixed(1)} | ${max.toFixed(1)} | ${row.survivors} |`);
}

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/latest.json', import.meta.url), JSON.stringify({ date: new Date().toISOString(), machine, cancel }, null, 2));

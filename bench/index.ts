// agent-rx benchmarks: `npm run bench`. Every figure is measured against a baseline in the same
// run, with min / median / max over repetitions. Prints Markdown tables and writes a JSON result
// to bench/results/ (not committed).
//
// Environment:
//   BENCH_QUICK=1            small sizes and few repetitions, for development
//   BENCH_ONLY=a,b           only these sections: throughput, mid, large, first, cancel, host, memory, concurrency, stages, sessions, permissions, tools, token, fleet, conversation, fleet-sessions, tracing
//   BENCH_FLEET_SESSIONS=n   fleet sessions of the real pi in fleet-sessions (default 48; quick 12)
//   BENCH_FLEET_SESSIONS_SPREAD_MS=n  the window of their first prompts (default 10000)
//   BENCH_MID_DELTAS=n       deltas of the middle stream (default 6000, ~200 MB)
//   BENCH_LARGE_DELTAS=n     deltas of the large stream (default 20000, ~2 GB)
//   BENCH_KEEP_STREAMS=1     keep the generated streams in the temp dir for the next run
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { cancelLatency, CANCEL_CASES } from './cancel-latency.js';
import { concurrency } from './concurrency.js';
import { firstMessage } from './first-message.js';
import { keeperCost, stopAllTime } from './host.js';
import { heapAfterRuns } from './memory.js';
import { fleetLatencies } from './fleet.js';
import { sessionLatencies } from './sessions.js';
import { permissionLatencies } from './permissions.js';
import { hostToolLatencies } from './host-tools.js';
import { firstTokenLatencies } from './first-token.js';
import { conversationLatencies } from './conversation.js';
import { fleetSessionLatencies, type Found } from './fleet-sessions.js';
import { tracingOverhead } from './tracing.js';
import { readProcessTable } from '../lib/process/process-table.js';
import { readInput, stages, type StagesResult } from './stages.js';
import { piStream, removeStream, type PiStream } from './stream.js';
import { throughputInProcess, throughputInWorkers, type Reader, type ThroughputResult } from './throughput.js';
import { spread, summarize, table, type Summary } from './util.js';

const quick = process.env['BENCH_QUICK'] === '1';
const only = new Set((process.env['BENCH_ONLY'] ?? '').split(',').filter((name) => name !== ''));
const runs = (name: string): boolean => only.size === 0 || only.has(name);
const largeDeltas = Number(process.env['BENCH_LARGE_DELTAS'] ?? (quick ? 4000 : 20000));
const midDeltas = Number(process.env['BENCH_MID_DELTAS'] ?? (quick ? 1500 : 6000));
const keepStreams = process.env['BENCH_KEEP_STREAMS'] === '1';

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const machine = {
  cores: availableParallelism(),
  cpu,
  memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(),
};
// The library as it ships (dist/, see shipped.mjs), or its sources when run without the hook.
const library = import.meta.resolve('../lib/index.js').includes('/dist/') ? 'dist/ (compiled, as shipped)' : 'lib/ through tsx';
const startedAt = new Date();
const loadAtStart = loadavg();
const header = `agent-rx benchmarks — ${startedAt.toISOString()} — ${machine.cores} × ${cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`;
console.log(`${header}\ncommand: npm run bench${quick ? ' (BENCH_QUICK=1)' : ''}; library: ${library}; load average at start ${loadAtStart.map((n) => n.toFixed(2)).join(' ')}\n`);

const report: string[] = [header, ''];
const result: Record<string, unknown> = { date: startedAt.toISOString(), machine, library, quick, loadAtStart };
const streams = new Map<string, PiStream>();
const stream = (deltas: number, ascii = false): PiStream => {
  const key = `${deltas}${ascii ? '-ascii' : ''}`;
  const made = streams.get(key) ?? piStream(deltas, ascii);
  streams.set(key, made);
  return made;
};

const mb = (bytes: number): string => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);
const x = (summary: Summary): string => `${spread(summary, 2)}×`;

const READER_LABELS: Record<Reader, string> = {
  pipe: 'pipe alone (read and drop)',
  baseline: 'baseline (child_process + split2 + JSON.parse)',
  runPi: 'runPi',
  runPiTextLines: 'runPi, lines decoded (before)',
};

/** A summary per 1,000 deltas. */
const perThousand = (summary: Summary, deltas: number): Summary => {
  const scale = 1000 / deltas;
  return { ...summary, min: summary.min * scale, median: summary.median * scale, max: summary.max * scale };
};

function throughputTable(title: string, data: ThroughputResult): void {
  const rss = data.inWorkers;
  const rows = data.rows.map((row) => [
    READER_LABELS[row.reader],
    spread(row.mbps, 0),
    row.reader === 'pipe' ? '1' : x(row.vsPipe),
    row.reader === 'baseline' ? '1' : x(row.vsBaseline),
    spread(row.cpuMs, 0),
    spread(perThousand(row.cpuMs, data.deltas), 1),
    row.reader === 'baseline' ? '1' : x(row.cpuVsBaseline),
    ...(rss ? [row.maxRssMB === undefined ? '' : spread(row.maxRssMB, 0)] : []),
  ]);
  const rssHeader = rss ? [`peak RSS MB (idle worker ${spread(data.idleRssMB ?? summarize([]), 0)})`] : [];
  report.push(
    ...table(
      `${title}: ${data.deltas.toLocaleString('en')} deltas, ${mb(data.bytes)}, ${data.lines.toLocaleString('en')} lines, ${data.repetitions} repetitions${rss ? ', each read in a fresh process' : ''}`,
      ['reader', 'MB/s min / median / max', 'MB/s vs pipe alone', 'MB/s vs baseline', 'CPU ms of the reader', 'CPU ms per 1,000 deltas', 'CPU vs baseline', ...rssHeader],
      rows,
    ),
  );
}

function stagesTable(data: StagesResult): void {
  report.push(
    ...table(
      `Where the time goes, in process (no child, no pipe): ${data.input}, ${mb(data.bytes)}, ${data.lines.toLocaleString('en')} lines, ${data.repetitions} repetitions`,
      ['stage', 'ms min / median / max', 'MB/s (median)'],
      data.rows.map((row) => [row.stage, spread(row.ms, 1), row.mbps.toFixed(0)]),
    ),
  );
}

try {
  if (runs('throughput')) {
    // Short runs (about 0.1 s each) vary with the scheduler: enough repetitions for a stable median.
    const reps = quick ? 3 : 15;
    const mixed = await throughputInProcess(stream(quick ? 500 : 2000), reps);
    throughputTable('Throughput, runPi vs baseline, text with some multi-byte UTF-8', mixed);
    const ascii = await throughputInProcess(stream(quick ? 500 : 2000, true), reps);
    throughputTable('Throughput, the same with ASCII-only text', ascii);
    result['throughput'] = { mixed, ascii };
  }

  if (runs('mid')) {
    const mid = await throughputInWorkers(stream(midDeltas), quick ? 1 : 5);
    throughputTable('Throughput and peak RSS, the middle stream', mid);
    result['mid'] = mid;
  }

  if (runs('large')) {
    const large = await throughputInWorkers(stream(largeDeltas), quick ? 1 : 3);
    throughputTable('Throughput and peak RSS, the large stream', large);
    result['large'] = large;
  }

  if (runs('first')) {
    const first = await firstMessage(stream(20), quick ? 6 : 30);
    result['firstMessage'] = first;
    report.push(
      ...table(
        `Time to first message (${first.repetitions} repetitions each; a 20-delta stream written at once by a node child)`,
        ['measure', 'runPi ms', 'baseline ms', 'runPi / baseline'],
        [
          ['first stdout byte written → first CliMessage / first parsed event', spread(first.byteToFirst.runPi, 2), spread(first.byteToFirst.baseline, 2), x(first.byteToFirst.ratio)],
          ['subscribe / spawn → the same (includes starting node)', spread(first.spawnToFirst.runPi, 1), spread(first.spawnToFirst.baseline, 1), x(first.spawnToFirst.ratio)],
        ],
      ),
    );
  }

  if (runs('cancel')) {
    const cancel = await cancelLatency(CANCEL_CASES, quick ? 0.3 : 1);
    const scans: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const started = performance.now();
      await readProcessTable('AGENT_RX_BENCH=scan');
      scans.push(performance.now() - started);
    }
    const processes = (await readProcessTable()).entries.length;
    result['cancel'] = { rows: cancel, procScanMs: summarize(scans), processes };
    report.push(
      ...table(
        'Cancel latency: unsubscribe → every process of the tree gone (runPi), against kill(SIGTERM) then SIGKILL after the grace period → the root gone (baseline)',
        ['agent', 'grace ms', 'runs', 'runPi ms', 'baseline ms', 'runPi / baseline', 'survivors runPi', 'survivors baseline', 'runPi stop sequence settled ms'],
        [
          ...cancel.map((row) => [
            row.label,
            String(row.gracePeriodMs),
            String(row.runPi.runs),
            spread(row.runPi, 1),
            spread(row.baseline, 1),
            x(row.ratio),
            String(row.runPiSurvivors),
            String(row.baselineSurvivors),
            spread(row.runPiSettled, 1),
          ]),
          ['(attribution) one /proc scan with the run marker, as the stop sequence makes before signalling', '', '10', spread(summarize(scans), 1), '', '', `${processes} processes`, '', ''],
        ],
      ),
    );
  }

  if (runs('host')) {
    const keeper = await keeperCost(quick ? 3 : 10);
    const stopAll = [
      await stopAllTime(1, 'forever.mjs', 2000, quick ? 3 : 10),
      await stopAllTime(20, 'forever.mjs', 2000, quick ? 2 : 5),
      await stopAllTime(20, 'ignore-signals.mjs', 500, quick ? 2 : 3),
    ];
    result['host'] = { keeper, stopAll };
    report.push(
      ...table(
        `The keeper (started once per host, with its first run), each sample in a fresh host, ${keeper.repetitions} repetitions, against the smallest second Node process`,
        ['measure', 'keeper (/bin/sh)', 'node -e', 'keeper / node'],
        [
          ['host time in ensureKeeper() (the synchronous spawn) ms', spread(keeper.ensureMs, 2), spread(keeper.nodeSpawnMs, 2), ''],
          ['start → script running ms', spread(keeper.keeperReadyMs, 1), spread(keeper.nodeReadyMs, 1), x(keeper.readyRatio)],
          ['resident memory kB', spread(keeper.keeperRssKB, 0), spread(keeper.nodeRssKB, 0), x(keeper.rssRatio)],
        ],
      ),
      ...table(
        'stopAllRuns() → every listening subscriber has its terminal and completed, against unsubscribe → every root gone (the same stop sequence)',
        ['runs', 'fixture', 'grace ms', 'stopAllRuns ms', 'unsubscribe ms', 'ratio'],
        stopAll.map((row) => [String(row.runs), row.fixture, String(row.gracePeriodMs), spread(row.stopAllMs, 1), spread(row.unsubscribeMs, 1), x(row.ratio)]),
      ),
    );
  }

  if (runs('memory')) {
    const heapRuns = quick ? 200 : 1000;
    const heap = await heapAfterRuns(stream(20), heapRuns);
    result['heap'] = heap;
    report.push(
      ...table(
        `Heap after ${heapRuns} sequential short runs (${mb(heap.streamBytes)} each), node --expose-gc, after a full GC`,
        ['reader', 'heap after 100 runs MB', `heap after ${heapRuns} runs MB`, 'growth (after all / after 100)', 'ms spawn → complete', 'ms per run incl. clean-up', 'samples (runs: MB)'],
        heap.rows.map((row) => [
          row.reader,
          row.heapAfter100MB.toFixed(2),
          row.heapAfterAllMB.toFixed(2),
          `${row.growth.toFixed(3)}×`,
          row.msToComplete.toFixed(1),
          row.msPerRun.toFixed(1),
          row.samples.map((sample) => `${sample.runs}: ${sample.heapMB.toFixed(1)}`).join(', '),
        ]),
      ),
    );
  }

  if (runs('concurrency')) {
    const data = await concurrency(stream(200), 50, quick ? 2 : 5);
    result['concurrency'] = data;
    report.push(
      ...table(
        `Concurrency: ${data.concurrent} runs at once of a ${mb(data.streamBytes)} replay, event-loop delay (monitorEventLoopDelay, 1 ms resolution), ${data.repetitions} repetitions`,
        ['reader', 'p50 ms', 'p99 ms', 'max ms', 'wall ms (all 50)'],
        [
          ['runPi (until every clean-up after exit is done)', spread(data.runPi.p50), spread(data.runPi.p99), spread(data.runPi.max), spread(data.runPi.wallMs, 0)],
          ['baseline (child_process + split2 + JSON.parse)', spread(data.baseline.p50), spread(data.baseline.p99), spread(data.baseline.max), spread(data.baseline.wallMs, 0)],
          ['runPi / baseline', '', x(data.p99Ratio), '', x(data.wallRatio)],
        ],
      ),
    );
  }

  if (runs('stages')) {
    const small = await stages(readInput(stream(quick ? 500 : 2000).path), `the ${quick ? 500 : 2000}-delta stream`, 5);
    stagesTable(small);
    const tailBytes = (quick ? 20 : 100) * 1e6;
    const large = stream(largeDeltas);
    const tail = await stages(readInput(large.path, tailBytes), `the last ${mb(tailBytes)} of the ${largeDeltas}-delta stream (long lines)`, 3);
    stagesTable(tail);
    result['stages'] = { small, tail };
  }
  if (runs('sessions')) {
    const sessions = await sessionLatencies(quick ? 3 : 10);
    result['sessions'] = sessions;
    report.push(
      ...table(
        `Sessions on the real CLIs (fake model server on 127.0.0.1), ${sessions[0]?.abortStream.runs ?? 0} repetitions: an abort keeps the process, against stopping a one-shot run and starting a new one`,
        [
          'agent',
          'abort mid-stream → turn.failed ms',
          'abort during sleep 30 → turn.failed ms',
          'sleep alive at turn.failed',
          'next prompt → first text ms',
          'baseline: unsubscribe a run → tree gone ms',
          'baseline: new run → first text ms',
          '(abort + next) / (stop + new run)',
        ],
        sessions.map((row) => [
          row.agent,
          spread(row.abortStream, 1),
          spread(row.abortTool, 1),
          String(row.toolSurvivors),
          spread(row.nextAnswer, 0),
          spread(row.stopRun, 1),
          spread(row.newRun, 0),
          x(row.ratio),
        ]),
      ),
    );
    const bridged = sessions.find((row) => row.acpCancel !== undefined);
    if (bridged?.acpCancel !== undefined && bridged.acpRatio !== undefined) {
      report.push(
        ...table(
          `The ACP bridge (\`agent-rx acp --agent pi\`, dist/), driven by the ACP SDK client: session/cancel during sleep 30 → the prompt's answer (cancelled), against the abort without the bridge`,
          ['agent', 'cancel through the bridge ms', 'abort without it ms', 'bridge / without'],
          [[bridged.agent, spread(bridged.acpCancel, 1), spread(bridged.abortTool, 1), x(bridged.acpRatio)]],
        ),
      );
    }
  }
  if (runs('permissions')) {
    const permissions = await permissionLatencies(quick ? 3 : 10);
    result['permissions'] = permissions;
    report.push(
      ...table(
        `Permission requests on the real CLIs (fake model server on 127.0.0.1; the model runs \`touch\`), ${permissions[0]?.deny.runs ?? 0} repetitions: a permission command → the agent resumes, against a preset's deny → the agent resumes`,
        ['agent', 'deny command → next message ms', 'allow command → next message ms', "baseline: preset's deny → next message ms", 'deny by command / by preset'],
        permissions.map((row) => [row.agent, spread(row.deny, 1), spread(row.allow, 1), spread(row.preset, 1), x(row.ratio)]),
      ),
    );
  }
  if (runs('tracing')) {
    const tracing = await tracingOverhead(quick ? { messages: 20_000, repetitions: 3, runs: 5 } : { messages: 200_000, repetitions: 10, runs: 30 });
    result['tracing'] = tracing;
    const message = tracing.perMessage;
    report.push(
      ...table(
        `Tracing (\`traceRun\`, an OpenTelemetry SDK recording every span, exported in batches to an exporter that drops them) against the same stream untraced, in turns: a run of ${message.messages.toLocaleString('en')} messages in memory (text deltas, ${message.toolCalls.toLocaleString('en')} tool calls), ${String(message.repetitions)} repetitions`,
        ['stream', 'read in ms', 'added per message µs', 'vs untraced'],
        [
          ['untraced (baseline)', spread(message.plain, 1), '', '1'],
          ['traceRun', spread(message.traced, 1), spread(message.addedUs, 2), x(message.ratio)],
          ['traceRun, recordContent', spread(message.content, 1), spread(message.contentAddedUs, 2), ''],
        ],
      ),
      ...table(
        `Tracing per run: a replayed pi run (\`tool_call_then_text\`, PI_REPLAY_SPEED=0), subscribe → terminal, traced and untraced in turns, ${String(tracing.perRun.repetitions)} repetitions`,
        ['run', 'ms', 'added ms', 'vs untraced'],
        [
          ['untraced (baseline)', spread(tracing.perRun.plain, 1), '', '1'],
          ['traceRun', spread(tracing.perRun.traced, 1), spread(tracing.perRun.addedMs, 2), x(tracing.perRun.ratio)],
        ],
      ),
    );
  }
  if (runs('token')) {
    const token = await firstTokenLatencies(quick ? 3 : 10);
    result['token'] = token;
    report.push(
      ...table(
        `The first word on the real CLIs (fake model server on 127.0.0.1, the \`text\` scenario), ${token.model.runs} repetitions; baseline: the model server's own time to first byte, a streaming request straight to it: ${spread(token.model, 1)} ms`,
        ['agent', 'run: subscribe → first text ms', 'of which: subscribe → model request ms', 'session: subscribe + prompt → first text ms', 'later turn: prompt → first text ms', 'pooled session: subscribe + prompt → first text ms', 'pooled run: subscribe → first text ms', 'idle pooled process RSS MB'],
        token.rows.map((row) => [row.agent, spread(row.run, 1), spread(row.runStart, 1), spread(row.firstTurn, 1), spread(row.laterTurn, 1), spread(row.pooledTurn, 1), spread(row.pooledRun, 1), spread(row.idleRss, 1)]),
      ),
    );
    report.push(
      ...table(
        `A run's fixed cost: the same runs read to their end, against the same command (program, arguments, environment, stdin) spawned bare with \`child_process.spawn\`, its stdout read and dropped, in turns, ${token.model.runs} repetitions`,
        ['agent', 'run: subscribe → terminal ms', 'baseline: bare spawn → exit ms', 'run / bare', 'bare: spawn → model request ms'],
        token.rows.map((row) => [row.agent, spread(row.runEnd, 1), spread(row.bareEnd, 1), x(row.runOverBare), spread(row.bareStart, 1)]),
      ),
    );
  }
  if (runs('conversation')) {
    // N pi sessions in one host: each alive agent holds ~140 MB and a second of start-up CPU.
    const sessions = Number(process.env['BENCH_CONVERSATION_SESSIONS'] ?? (quick ? 5 : 20));
    const conversation = await conversationLatencies(quick ? 3 : 10, { sessions, repetitions: quick ? 1 : 3 });
    result['conversation'] = conversation;
    const kB = (summary: Summary): string => `${(summary.min / 1e3).toFixed(1)} / ${(summary.median / 1e3).toFixed(1)} / ${(summary.max / 1e3).toFixed(1)}`;
    report.push(
      ...table(
        `Conversations that sleep, on the real CLIs (fake model server on 127.0.0.1, the \`recall\` scenario), idleMs ${String(conversation.idleMs)}, ${String(conversation.rows[0]?.wake.runs ?? 0)} repetitions: the turn after a sleep, against a later turn of a session that stayed awake and a new session's first turn (same options and store)${conversation.skipped.length > 0 ? `; not measured, their sessions cannot sleep yet: ${conversation.skipped.join(', ')}` : ''}`,
        [
          'agent',
          'snapshot after 1 turn kB',
          'snapshot after 3 turns kB',
          'sleep: idle timer → session.passivated ms',
          'resumeMs',
          'wake: prompt → first text ms',
          'baseline: awake later turn, prompt → first text ms',
          'baseline: new session, subscribe + prompt → first text ms',
          'wake / awake',
          'wake / new session',
        ],
        conversation.rows.map((row) => [row.agent, kB(row.snapshotBytes1), kB(row.snapshotBytes3), spread(row.sleep, 1), spread(row.resume, 1), spread(row.wake, 1), spread(row.awake, 1), spread(row.cold, 1), x(row.wakeOverAwake), x(row.wakeOverCold)]),
      ),
    );
    const memory = conversation.memory;
    if ('error' in memory) {
      const failed = `The memory of ${String(sessions)} pi sessions in one host could not be measured: ${memory.error}\n`;
      console.log(failed);
      report.push(failed);
    } else {
      const perSession = (summary: Summary | undefined): string => (summary === undefined ? '' : spread(summary, 1));
      report.push(
        ...table(
          `One host, ${String(memory.sessions)} ${memory.agent} sessions after one turn each: kept alive (idle) against asleep (idleMs ${String(conversation.idleMs)}, passivated), the resident memory of the host's whole process tree (the process table, /proc/<pid>/status and smaps_rollup), each host a fresh Node process, ${String(memory.repetitions)} repetitions; per session: (the tree − the same host's tree before its sessions) / ${String(memory.sessions)}`,
          ['host', 'processes', 'host RSS MB', 'agents RSS MB', 'tree RSS MB', 'tree PSS MB', 'per session RSS MB', 'per session PSS MB', 'go → all at rest ms'],
          memory.rows.map((row) => [
            row.state === 'empty' ? 'no session yet' : `${String(memory.sessions)} sessions ${row.state}`,
            spread(row.processes, 0),
            spread(row.hostRssMB, 1),
            spread(row.agentsRssMB, 1),
            spread(row.treeRssMB, 1),
            spread(row.treePssMB, 1),
            perSession(row.perSessionRssMB),
            perSession(row.perSessionPssMB),
            row.settleMs === undefined ? '' : spread(row.settleMs, 0),
          ]),
        ),
      );
      const aliveOverAsleep = `the whole tree, ${String(memory.sessions)} sessions alive / asleep: RSS ${x(memory.aliveOverAsleepRss)}, PSS ${x(memory.aliveOverAsleepPss)}\n`;
      console.log(aliveOverAsleep);
      report.push(aliveOverAsleep);
    }
  }
  if (runs('tools')) {
    const tools = await hostToolLatencies(quick ? 3 : 10);
    result['tools'] = tools;
    report.push(
      ...table(
        `Host tools on the real CLIs (fake model server on 127.0.0.1), ${tools[0]?.hostCall.runs ?? 0} fresh sessions each, after a warm-up turn: a turn whose tool is a host tool (\`tool(...)\`, answering \`hello\`) against one whose tool is the agent's own shell running \`echo hello\`, prompt → turn end; and the call alone, \`tool.call\` → \`tool.completed\` (ACP agents say both at once)`,
        ['agent', 'turn with the host tool ms', "baseline: turn with the shell tool ms", 'host / shell turn', 'host tool call ms', 'shell tool call ms'],
        tools.map((row) => [row.agent, spread(row.hostTurn, 1), spread(row.shellTurn, 1), x(row.turnRatio), spread(row.hostCall, 1), spread(row.shellCall, 1)]),
      ),
    );
  }
  if (runs('fleet-sessions')) {
    // Each session's turns start the real pi (a second of CPU each) on the 2 to 12 slots of its workers.
    const sessions = Number(process.env['BENCH_FLEET_SESSIONS'] ?? (quick ? 12 : 48));
    const spreadText = process.env['BENCH_FLEET_SESSIONS_SPREAD_MS'];
    const fleet = await fleetSessionLatencies({ sessions, ...(spreadText === undefined ? {} : { spreadMs: Number(spreadText) }) });
    result['fleetSessions'] = fleet;
    const kinds: readonly Found[] = ['new', 'awake', 'woken here', 'woken elsewhere'];
    const ratio = (a: Found, b: Found): string => (fleet.firstText[b].p50 > 0 ? `${(fleet.firstText[a].p50 / fleet.firstText[b].p50).toFixed(2)}×` : '');
    report.push(
      ...table(
        `Conversations on the fleet: ${String(fleet.sessions)} fleet sessions of the real pi (fake model server on 127.0.0.1, the \`recall\` scenario) over ${String(fleet.workers)} worker processes of concurrency ${String(fleet.concurrency)}, idleMs ${String(fleet.idleMs)}, ${String(fleet.prompts)} prompts each at random moments, ${(fleet.wallMs / 1000).toFixed(1)} s; prompt → first text by what the prompt found (baseline: a session awake), ms`,
        ['prompt found', 'prompts', 'p50', 'p99', 'min / median / max', 'p50 / awake p50'],
        kinds.map((kind) => [kind, String(fleet.firstText[kind].runs), fleet.firstText[kind].p50.toFixed(0), fleet.firstText[kind].p99.toFixed(0), spread(fleet.firstText[kind], 0), ratio(kind, 'awake')]),
      ),
    );
    const facts = `Live agent processes at most ${String(fleet.liveMax)} (${String(fleet.samples)} samples, 100 ms apart; the workers' slots: ${String(fleet.workers * fleet.concurrency)}); turns not completed: ${String(fleet.failedTurns)}${fleet.failures.length === 0 ? '' : ` (${[...new Set(fleet.failures)].join('; ')})`}; completed answers that missed an earlier completed prompt: ${String(fleet.forgetful)}; worker trouble: ${fleet.workerTrouble.length === 0 ? 'none' : fleet.workerTrouble.join('; ')}. A sleeping session in Redis: ${spread(fleet.redisBytes, 0)} bytes (MEMORY USAGE of its keys, min / median / max), ${(fleet.redisUsedPerSession / 1024).toFixed(1)} kB of used_memory per session (over the empty server's). This process's event-loop delay over the load: p50 ${fleet.loop.p50.toFixed(1)} ms, p99 ${fleet.loop.p99.toFixed(1)} ms, max ${fleet.loop.max.toFixed(1)} ms (CPU ${(fleet.loop.cpuMs / 1000).toFixed(1)} s in ${(fleet.loop.wallMs / 1000).toFixed(1)} s).\n`;
    console.log(facts);
    report.push(facts);
  }
  if (runs('fleet')) {
    const fleet = await fleetLatencies(stream(quick ? 500 : 2000), {
      replays: quick ? 3 : 10,
      pacedReplays: quick ? 2 : 10,
      cancels: quick ? 5 : 20,
      losts: quick ? 2 : 10,
      testLosts: quick ? 1 : 10,
      manyRuns: quick ? 30 : 200,
      manyRepetitions: quick ? 1 : 3,
    });
    result['fleet'] = fleet;
    report.push(
      ...table(
        'Fleet: a replay through the fleet (a dispatcher here, BullMQ on a private redis-server on a unix socket, one worker process) against runPi in this process, PI_REPLAY_SPEED=0 unless said, alternating',
        [
          'workload',
          'runs',
          'messages',
          'runPi: subscribe → first message ms',
          'fleet: subscribe → first message ms',
          'runPi: subscribe → terminal ms',
          'fleet: subscribe → terminal ms',
          'fleet / runPi (terminal)',
          'runPi messages/s',
          'fleet messages/s',
          'fleet: Redis append → subscriber ms, mean / p50 / p99 / max (messages)',
        ],
        fleet.replay.map((row) => [
          row.label,
          String(row.repetitions),
          String(row.messages),
          spread(row.localFirst, 1),
          spread(row.fleetFirst, 1),
          spread(row.localDone, 1),
          spread(row.fleetDone, 1),
          x(row.doneRatio),
          spread(row.localRate, 0),
          spread(row.fleetRate, 0),
          `${row.hop.mean.toFixed(2)} / ${row.hop.p50.toFixed(0)} / ${row.hop.p99.toFixed(0)} / ${row.hop.max.toFixed(0)} (${String(row.hop.samples)})`,
        ]),
      ),
      ...table(
        `Fleet: unsubscribe → the agent and its own-session tool both gone (\`fake_tool\`, /proc polled every 1 ms), ${String(fleet.cancel.local.runs)} repetitions, alternating`,
        ['path', 'ms min / median / max', 'vs runPi'],
        [
          ['runPi in this process', spread(fleet.cancel.local, 1), '1'],
          ['fleet: the dispatcher cancels (Redis key + pub/sub), the worker stops the run', spread(fleet.cancel.fleet, 1), x(fleet.cancel.ratio)],
        ],
      ),
      ...table(
        'Fleet: SIGKILL of the worker during a `fake_tool` run → the caller\'s terminal.failed `lost` (one worker, a new one per repetition)',
        ['worker heartbeat / TTL ms', 'dispatcher blockMs', 'runs', 'kill → lost ms', 'heartbeat left at the kill (PTTL) ms', 'lost − heartbeat left ms', 'kill → agent and tool gone (the worker\'s keeper) ms'],
        [
          ...fleet.lost.map((row) => [
            `${String(row.heartbeatMs)} / ${String(row.heartbeatTtlMs)}`,
            String(row.blockMs),
            String(row.lost.runs),
            spread(row.lost, 0),
            spread(row.heartbeatLeft, 0),
            spread(row.detection, 0),
            spread(row.agentGone, 1),
          ]),
          ['(baseline) runPi in this process: SIGKILL of the agent → terminal.failed', '', String(fleet.lostBaseline.runs), spread(fleet.lostBaseline, 1), '', '', ''],
        ],
      ),
    );
    const many = fleet.many;
    report.push(
      ...table(
        `Fleet: ${String(many.runs)} runs at once of \`tool_call_then_text\` at PI_REPLAY_SPEED=${many.replaySpeed}, over ${String(many.workers)} workers (concurrency ${String(many.concurrency)} each), against the same ${String(many.runs)} runs through runPi in this process; the caller's event-loop delay (monitorEventLoopDelay, 1 ms resolution), ${String(many.repetitions)} repetitions`,
        ['caller', 'p50 ms', 'p99 ms', 'max ms', `wall ms (all ${String(many.runs)})`, "caller's CPU ms (user + system)"],
        [
          ['idle (the dispatcher connected, nothing running; sampled 2 s)', spread(many.idle.p50), spread(many.idle.p99), spread(many.idle.max), '', spread(many.idle.cpuMs, 0)],
          ['fleet: the dispatcher reads the runs', spread(many.fleet.p50), spread(many.fleet.p99), spread(many.fleet.max), spread(many.fleet.wallMs, 0), spread(many.fleet.cpuMs, 0)],
          ['runPi: the runs in this process', spread(many.local.p50), spread(many.local.p99), spread(many.local.max), spread(many.local.wallMs, 0), spread(many.local.cpuMs, 0)],
          ['fleet / runPi', '', x(many.p99Ratio), '', x(many.wallRatio), x(many.cpuRatio)],
        ],
      ),
      ...table(
        `Fleet: Redis memory per run (${String(many.streamEntries)} stream entries a run, kept an hour after its end)`,
        ['measure', 'bytes min / median / max'],
        [
          [`INFO used_memory after the ${String(many.runs)} runs − before, / ${String(many.runs)}`, spread(many.usedMemoryPerRun, 0)],
          ["MEMORY USAGE of a run's keys (stream, end, owner), 20 runs a repetition", spread(many.keysPerRun, 0)],
        ],
      ),
    );
  }
  const targets = targetRows();
  if (targets.length > 0) {
    result['targets'] = targets;
    report.push(...table('Targets: each figure is a ratio within the same run (median decides)', ['target', 'goal', 'min / median / max', 'met'], targets));
  }
} finally {
  if (!keepStreams) for (const made of streams.values()) removeStream(made);
}

/** The performance targets, from the sections that ran. */
function targetRows(): string[][] {
  const rows: string[][] = [];
  const target = (name: string, goal: string, summary: Summary | undefined, met: (median: number) => boolean): void => {
    if (summary !== undefined) rows.push([name, goal, `${spread(summary, 2)}×`, met(summary.median) ? 'yes' : '**no**']);
  };
  /** A figure that explains a target's, not a target itself. */
  const context = (name: string, value: number): void => {
    rows.push([name, '(context)', `${value.toFixed(2)}×`, '—']);
  };
  const row = (data: unknown, reader: Reader) => (data as ThroughputResult | undefined)?.rows.find((candidate) => candidate.reader === reader);
  const mixed = (result['throughput'] as { mixed?: ThroughputResult } | undefined)?.mixed;
  target('2,000 deltas, mixed text: runPi time / baseline time', '≤ 0.5', row(mixed, 'runPi')?.timeVsBaseline, (m) => m <= 0.5);
  for (const key of ['mid', 'large']) {
    const data = result[key] as ThroughputResult | undefined;
    if (data === undefined) continue;
    const label = `${data.deltas.toLocaleString('en')} deltas (${mb(data.bytes)})`;
    target(`${label}: runPi MB/s / pipe alone MB/s`, '≥ 0.5', row(data, 'runPi')?.vsPipe, (m) => m >= 0.5);
    const now = row(data, 'runPi')?.maxRssMB;
    const before = row(data, 'runPiTextLines')?.maxRssMB;
    if (now !== undefined && before !== undefined) {
      const ratio = { runs: 1, min: now.min / before.min, median: now.median / before.median, max: now.max / before.max };
      target(`${label}: runPi peak RSS / the same with lines decoded (before)`, '≤ 1', ratio, (m) => m <= 1);
      const pipe = row(data, 'pipe')?.maxRssMB;
      if (pipe !== undefined) context(`${label}: runPi peak RSS / pipe alone peak RSS (medians)`, now.median / pipe.median);
    }
  }
  const large = result['large'] as ThroughputResult | undefined;
  const small = row(mixed, 'runPi')?.cpuMs;
  const big = row(large, 'runPi')?.cpuMs;
  if (mixed !== undefined && large !== undefined && small !== undefined && big !== undefined) {
    const flat = (big.median / large.deltas) / (small.median / mixed.deltas);
    target(`runPi CPU ms per 1,000 deltas: ${large.deltas.toLocaleString('en')} deltas / ${mixed.deltas.toLocaleString('en')} deltas`, '≤ 1.5', { runs: 1, min: flat, median: flat, max: flat }, (m) => m <= 1.5);
    const pipeSmall = row(mixed, 'pipe')?.cpuMs;
    const pipeBig = row(large, 'pipe')?.cpuMs;
    if (pipeSmall !== undefined && pipeBig !== undefined) {
      // Reading the pipe costs per byte, and a delta's line grows with the answer: the pipe alone's own growth.
      context('pipe alone CPU ms per 1,000 deltas: the same ratio', pipeBig.median / large.deltas / (pipeSmall.median / mixed.deltas));
      const beyond = (cpu: Summary, pipe: Summary, deltas: number): number => (1000 * Math.max(0, cpu.median - pipe.median)) / deltas;
      rows.push([
        "runPi CPU ms per 1,000 deltas beyond the pipe alone's (medians)",
        '(context)',
        `${beyond(small, pipeSmall, mixed.deltas).toFixed(1)} at ${mixed.deltas.toLocaleString('en')}, ${beyond(big, pipeBig, large.deltas).toFixed(1)} at ${large.deltas.toLocaleString('en')}`,
        '—',
      ]);
    }
  }
  const concurrent = result['concurrency'] as { wallRatio: Summary; p99Ratio: Summary } | undefined;
  target('50 runs at once: runPi wall time / baseline wall time', '≤ 1.2', concurrent?.wallRatio, (m) => m <= 1.2);
  target('50 runs at once: runPi event-loop p99 / baseline p99', '≤ 1', concurrent?.p99Ratio, (m) => m <= 1);
  const cancel = (result['cancel'] as { rows: { label: string; ratio: Summary }[] } | undefined)?.rows.find((candidate) => candidate.label.startsWith('cooperative:'));
  target('cancel, cooperative agent: runPi / bare kill', '≤ 2', cancel?.ratio, (m) => m <= 2);
  return rows;
}

const loadAtEnd = loadavg();
const minutes = (Date.now() - startedAt.getTime()) / 60000;
result['loadAtEnd'] = loadAtEnd;
result['minutes'] = minutes;
result['report'] = report.join('\n');
console.log(`load average at end ${loadAtEnd.map((n) => n.toFixed(2)).join(' ')}; ${minutes.toFixed(1)} min`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL(`./results/bench-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(result, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value), 2));
writeFileSync(new URL('./results/latest.json', import.meta.url), JSON.stringify(result, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value), 2));
console.log(`results: ${file.pathname}`);

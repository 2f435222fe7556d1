import { lastValueFrom, toArray, type Observable } from 'rxjs';
import type { CliMessage } from '../../lib/index.js';

/** Wall times of a conformance suite's scenarios, printed when the suite ends. */
export class ScenarioTimings {
  readonly #started = performance.now();
  readonly #rows: [string, number][] = [];

  add(name: string, ms: number): void {
    this.#rows.push([name, ms]);
  }

  /** Collects a whole run, recording how long it took. */
  async run(name: string, run$: Observable<CliMessage>): Promise<CliMessage[]> {
    const started = performance.now();
    const messages = await lastValueFrom(run$.pipe(toArray()));
    this.add(name, performance.now() - started);
    return messages;
  }

  print(title: string): void {
    const width = Math.max(20, ...this.#rows.map(([name]) => name.length)) + 2;
    const line = (name: string, ms: number): string => `  ${name.padEnd(width)} ${(ms / 1000).toFixed(2)} s`;
    const rows = this.#rows.map(([name, ms]) => line(name, ms));
    process.stdout.write(`\n${title} wall times:\n${[...rows, line('whole suite', performance.now() - this.#started)].join('\n')}\n`);
  }
}

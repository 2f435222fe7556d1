// Module resolution hook: a module of lib/ resolves to its compiled counterpart in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lib = new URL('../lib/', import.meta.url).href;
const dist = new URL('../dist/', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(lib)) return resolved;
  const url = dist + resolved.url.slice(lib.length).replace(/\.ts$/, '.js');
  if (!existsSync(fileURLToPath(url))) throw new Error(`${url} is missing: run \`npm run build\` before the benchmarks`);
  return { url, format: 'module', shortCircuit: true };
}

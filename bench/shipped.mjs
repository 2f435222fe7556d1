// Loaded with `--import` after tsx: the benchmarks run the library as it ships, the JavaScript
// that `npm run build` writes to dist/, instead of its TypeScript sources as tsx transforms them
// (tsx keeps function names by wrapping every function it creates in a call, which costs time in
// the per-line paths). The benchmarks themselves stay TypeScript.
import { register } from 'node:module';

register('./shipped-resolve.mjs', import.meta.url);

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { PromptReader } from '../operators/prompt-parts.js';

/** Reads a prompt's images and files from disk, paths taken against `cwd` (default: this process's). */
export function fileReader(cwd: string | undefined): PromptReader {
  return {
    readFile: (path) => readFileSync(path),
    resolve: (path) => resolve(cwd ?? process.cwd(), path),
  };
}

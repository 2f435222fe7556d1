import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The files an entry point loads, and the packages it imports, as a bundler for Node sees them. */
async function graph(entry: string): Promise<{ files: string[]; packages: string[] }> {
  const result = await build({ absWorkingDir: ROOT, entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, metafile: true, logLevel: 'silent' });
  const files = Object.keys(result.metafile.inputs);
  const packages = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((imported) => imported.external).map((imported) => imported.path));
  return { files, packages };
}

describe('agent-rx/fleet', () => {
  it.each(['lib/index.ts', 'lib/browser.ts'])('is not loaded by %s: no fleet file, no bullmq, no ioredis', async (entry) => {
    const { files, packages } = await graph(entry);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.startsWith('lib/fleet'))).toEqual([]);
    expect(packages.filter((name) => /^(bullmq|ioredis)(\/|$)/.test(name))).toEqual([]);
  });

  it('is its own entry point, with bullmq and ioredis as optional peers', async () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      dependencies: Record<string, string>;
    };
    expect(manifest.exports['./fleet']).toEqual({ types: './dist/fleet.d.ts', default: './dist/fleet.js' });
    for (const name of ['bullmq', 'ioredis']) {
      expect(manifest.peerDependencies[name]).toBeDefined();
      expect(manifest.peerDependenciesMeta[name]?.optional).toBe(true);
      expect(manifest.dependencies[name]).toBeUndefined();
    }
    const { packages } = await graph('lib/fleet.ts');
    expect(packages).toEqual(expect.arrayContaining(['bullmq', 'ioredis']));
  });
});

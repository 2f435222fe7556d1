import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The README's TypeScript examples compile against the library as a user imports it
// (`agent-rx`, `agent-rx/browser`, `agent-rx/fleet`), with the project's strict settings.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Inside the checkout (git-ignored), so that rxjs and the Node typings resolve from node_modules.
const WORK = join(ROOT, '.artifacts', 'readme-examples');

// What the examples leave to the reader: a UI callback.
const PRELUDE = 'declare global {\n  function resetProgress(text: string): void;\n}\nexport {};\n';

/** The README's ```ts blocks, in order. */
function examples(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

function tsc(project: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: `${stdout}${stderr}` });
    });
  });
}

describe('README.md', () => {
  it('has TypeScript examples, and every one type-checks against the library', async () => {
    const blocks = examples();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(WORK, { recursive: true });
    writeFileSync(join(WORK, 'prelude.ts'), PRELUDE);
    // Each example is a module of its own (top-level await included).
    for (const [index, code] of blocks.entries()) {
      writeFileSync(join(WORK, `example-${String(index + 1)}.ts`), code.includes('import ') ? code : `${code}\nexport {};\n`);
    }
    const lib = (entry: string): string[] => [join(ROOT, 'lib', entry)];
    const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    writeFileSync(
      join(WORK, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...base.compilerOptions, noUnusedLocals: false, paths: { 'agent-rx': lib('index.ts'), 'agent-rx/browser': lib('browser.ts'), 'agent-rx/fleet': lib('fleet.ts'), 'agent-rx/dialects': lib('dialects.ts'), 'agent-rx/otel': lib('otel.ts'), 'agent-rx/ai-sdk': lib('ai-sdk.ts') } },
        include: ['*.ts'],
      }),
    );
    const result = await tsc(join(WORK, 'tsconfig.json'));
    expect(result).toEqual({ code: 0, output: '' });
  }, 120_000);
});

import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

// Each wall of the floors (eslint.config.js) fails on a deliberate violation: the project's own
// configuration lints a real file of each floor with one import added at its top.
const root = fileURLToPath(new URL('../..', import.meta.url));
// The walls need no types: without the type-aware rules (and the TypeScript program they build for
// every text) the project's floors are linted in a fraction of the time.
const eslint = new ESLint({ cwd: root, overrideConfig: [tseslint.configs.disableTypeChecked, { languageOptions: { parserOptions: { projectService: false } } }] });
const WALL = '@typescript-eslint/no-restricted-imports';

async function problems(file: string, added: string): Promise<string[]> {
  const text = `${added}\n${readFileSync(`${root}/${file}`, 'utf8')}`;
  const [result] = await eslint.lintText(text, { filePath: `${root}/${file}` });
  // The walls' rule only: the added import is also unused, which another rule says.
  return (result?.messages ?? []).filter((message) => message.line === 1 && message.ruleId === WALL).map((message) => message.message);
}

describe('the floors', () => {
  it.each([
    ['lib/process/options.ts', "import { runAgent } from '../sources/run-agent.js';", 'a floor below sources/'],
    ['lib/process/options.ts', "import { mapToCliMessage } from '../operators/map-to-cli-message.js';", 'a floor below operators/'],
    ['lib/messages.ts', "import { AGENTS } from './agent-table.js';", 'the entry points and the agent table'],
    ['lib/operators/parse-json-line.ts', "import { agentSession } from '../sessions/agent-session.js';", 'a floor below sessions/'],
    ['lib/operators/parse-json-line.ts', "import { piAgent } from '../agents/pi/definition.js';", 'a floor below agents/'],
    ['lib/operators/parse-json-line.ts', "import { readFileSync } from 'node:fs';", 'a pure floor touches no file system'],
    ['lib/operators/parse-json-line.ts', "import { execa } from 'execa';", 'a pure floor touches no file system'],
    ['lib/agents/pi/dialect.ts', "import { piNoRetryOverlay } from './setup/settings-overlay.js';", "an agent's setup code"],
    ['lib/agents/pi/dialect.ts', "import { runAgent } from '../../sources/run-agent.js';", 'a floor below sources/'],
    ['lib/agents/pi/dialect.ts', "import { existsSync } from 'node:fs';", 'a pure floor touches no file system'],
    ['lib/agents/pi/dialect.ts', "import { homedir } from 'node:os';", 'a pure floor touches no file system'],
    ['lib/agents/shared/flags.ts', "import { findExecutable } from './setup/find-executable.js';", "an agent's setup code"],
    ['lib/agents/pi/setup/settings-overlay.ts', "import { agentSession } from '../../../sessions/agent-session.js';", 'a floor below sessions/'],
    ['lib/agents/pi/definition.ts', "import { AGENTS } from '../../agent-table.js';", 'the entry points and the agent table'],
    ['lib/sessions/session-machine.ts', "import { piAgent } from '../agents/pi/definition.js';", 'a floor below agents/'],
    ['lib/sessions/session-machine.ts', "import { readFileSync } from 'node:fs';", 'a pure floor touches no file system'],
    ['lib/sources/run-agent.ts', "import { AGENTS } from '../agent-table.js';", 'the entry points and the agent table'],
    ['lib/sessions/process-session.ts', "import { serveAcp } from '../serve/serve-acp.js';", 'a floor below serve/'],
    ['lib/agent-table.ts', "import { serveRuns } from './fleet.js';", 'the entry points and the agent table'],
    ['lib/fleet/worker.ts', "import { main } from '../cli/main.js';", 'a floor below cli/'],
    ['lib/serve/serve-acp.ts', "import { renderIntro } from '../cli/render.js';", 'a floor below cli/'],
    ['lib/browser/read-message.ts', "import { hostname } from 'node:os';", 'the browser entry runs in a browser'],
    ['lib/browser/read-message.ts', "import { processLines } from '../sources/process-lines.js';", 'a floor below sources/'],
    ['lib/browser/read-message.ts', "import { stopAllRuns } from '../process/run-registry.js';", 'a floor below process/'],
  ])('%s may not: %s', async (file, added, says) => {
    const found = await problems(file, added);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(says);
  });

  it.each([
    ['lib/process/options.ts', "import type { Dialect } from '../operators/dialect.js';"],
    ['lib/operators/parse-json-line.ts', "import type { SessionInput } from '../sessions/session-machine.js';"],
    ['lib/agents/pi/dialect.ts', "import { contentText } from '../shared/content.js';"],
    ['lib/agents/pi/definition.ts', "import { piNoRetryOverlay } from './setup/settings-overlay.js';"],
    ['lib/sources/run-agent.ts', "import { findExecutable } from '../agents/shared/setup/find-executable.js';"],
    ['lib/fleet/worker.ts', "import { AGENTS } from '../agent-table.js';"],
  ])('%s may: %s', async (file, added) => {
    expect(await problems(file, added)).toEqual([]);
  });
});

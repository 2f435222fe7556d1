import { join } from 'node:path';
import type { RunOverlay } from '../../definition.js';
import { fileFolder } from '../../shared/setup/file-folder.js';
import type { JsonSchemaObject } from '../../../messages.js';

/** The file's name inside the overlay folder. */
export const OUTPUT_SCHEMA_FILE = 'schema.json';

/**
 * The overlay a `codex exec` run with an `outputSchema` gets (`schema`, its JSON Schema): a folder of its own in the host's
 * temporary folder holding `schema.json`, named by `--output-schema` (appended after the run's
 * other arguments, where `exec` and `exec resume` both take it), and removed once the run's
 * processes are gone. Codex reads the file when it starts and gives the schema to the model as
 * the request's `text.format` (`json_schema`, strict).
 */
export function codexOutputSchemaOverlay(schema: JsonSchemaObject): RunOverlay {
  return {
    create: (_env, parent) => fileFolder(parent, 'agent-rx-codex-schema-', OUTPUT_SCHEMA_FILE, `${JSON.stringify(schema)}\n`),
    args: (dir) => ['--output-schema', join(dir, OUTPUT_SCHEMA_FILE)],
    what: "Codex's output schema file",
  };
}

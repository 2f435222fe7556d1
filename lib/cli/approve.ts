import { createInterface } from 'node:readline/promises';
import type { PermissionDecision, PermissionRequested } from '../messages.js';
import type { PermissionCallback, PermissionPolicy } from '../operators/permission-policy.js';

/** The values of `--approve`. */
export const APPROVE_CHOICES = ['all', 'reads', 'none', 'ask'] as const;

/** `--approve`'s help, for `run` and `chat`. */
export const APPROVE_HELP = `  --approve <all|reads|none|ask>
                          who decides when the agent asks to use a tool: allow all, allow only
                          tools that read, deny all, or ask here (a terminal); default: the
                          agent's own rules
`;

/**
 * The permission policy `--approve` gives: a preset, or `ask` (`asker` decides; a session's chat
 * answers with commands). `undefined` when the flag is absent; a string says what is wrong.
 */
export function approvePolicy(value: string | undefined, asker: PermissionPolicy | undefined): PermissionPolicy | undefined | { readonly problem: string } {
  switch (value) {
    case undefined:
      return undefined;
    case 'all':
      return 'allow-all';
    case 'reads':
      return 'allow-reads';
    case 'none':
      return 'deny-all';
    case 'ask':
      return asker ?? { problem: '--approve ask needs a terminal to ask on (stdin and stdout)' };
    default:
      return { problem: `--approve must be one of ${APPROVE_CHOICES.join(', ')}; got ${value}` };
  }
}

/** The question for a request: `allow Bash (execute): touch x? [y]es, [a]lways, [n]o`. */
export function approveQuestion(request: PermissionRequested): string {
  const always = request.options.includes('allow-always') ? ', [a]lways' : '';
  return `allow ${request.tool} (${request.kind}): ${request.title}? [y]es${always}, [n]o `;
}

/** A typed answer as a decision: y/yes allows, a/always allows always (where offered), anything else denies. */
export function approveAnswer(line: string, request: Pick<PermissionRequested, 'options'>): PermissionDecision {
  const answer = line.trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return 'allow';
  if ((answer === 'a' || answer === 'always') && request.options.includes('allow-always')) return 'allow-always';
  return 'deny';
}

/**
 * Asks on the terminal, one request at a time (`before` runs first: the spinner stops). A request
 * settled otherwise (the deadline, the end of the run) takes its question back.
 */
export function terminalAsker(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, before: () => void = () => undefined): PermissionCallback {
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const asked = queue.then(async () => {
      if (signal.aborted) return 'deny';
      before();
      const rl = createInterface({ input, output, terminal: true });
      try {
        return approveAnswer(await rl.question(approveQuestion(request), { signal }), request);
      } finally {
        rl.close();
      }
    });
    queue = asked.catch(() => undefined);
    return asked.catch((error: unknown) => {
      if (signal.aborted) return 'deny';
      throw error;
    });
  };
}

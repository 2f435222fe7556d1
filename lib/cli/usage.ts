/** What a command's argument parser gives besides the request itself. */
export type UsageAnswer = { readonly kind: 'help' } | { readonly kind: 'usage-error'; readonly message: string };

/**
 * Answers `--help` (the usage on stdout) and a usage error (on stderr the message, then where the
 * usage is, exit code 2) of `agent-rx <command>`; `true` when it did, and the command has nothing
 * more to do. The usage is not repeated under the error: it would scroll the error away.
 */
export function answeredUsage(command: string, usage: string, request: { readonly kind: string } | UsageAnswer): request is UsageAnswer {
  if (request.kind === 'help') {
    process.stdout.write(usage);
    return true;
  }
  if (request.kind === 'usage-error') {
    process.stderr.write(usageErrorText(`agent-rx ${command}`, (request as Extract<UsageAnswer, { kind: 'usage-error' }>).message));
    process.exitCode = 2;
    return true;
  }
  return false;
}

/** A usage error of `command` (`agent-rx run`, or `agent-rx` itself) on stderr: its line, then where the help is. */
export function usageErrorText(command: string, message: string): string {
  return `${command}: ${message}\nsee '${command} --help'\n`;
}

/**
 * What node:util's `parseArgs` refused, in the commands' words: `unknown option --bogus`,
 * `--timeout needs a value`, `--json takes no value`. Read from the error's code; an error
 * without a known code keeps its own message.
 */
export function parseArgsProblem(error: unknown): string {
  // Read by shape, not `instanceof`: an error of another realm (a vm context) is one too.
  const fields = typeof error === 'object' && error !== null ? (error as { readonly message?: unknown; readonly code?: unknown }) : {};
  const message = typeof fields.message === 'string' ? fields.message : String(error);
  const code = fields.code;
  // The option as parseArgs quotes it: `'--bogus'`, `'-x'`, `'-t, --timeout <value>'` (the long name wins).
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  const option = /--[^\s<>]+/.exec(quoted)?.[0] ?? quoted.split(/[\s,]/)[0] ?? quoted;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      // A single dash may be a value that only looks like an option (`-5`, `-p`): say where one goes.
      return !option.startsWith('--') && message.includes("after '--'") ? `unknown option ${option} (an argument that starts with a dash goes after --)` : `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message.includes('does not take an argument')) return `${option} takes no value`;
      if (message.includes('is ambiguous')) return `${option} needs a value (one that starts with a dash is written ${option}=<value>)`;
      return `${option} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted}: this command takes options only`;
    default:
      return message;
  }
}

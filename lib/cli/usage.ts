/** What a command's argument parser gives besides the request itself. */
export type UsageAnswer = { readonly kind: 'help' } | { readonly kind: 'usage-error'; readonly message: string };

/**
 * Answers `--help` (the usage on stdout) and a usage error (the message and the usage on stderr,
 * exit code 2) of `agent-rx <command>`; `true` when it did, and the command has nothing more to do.
 */
export function answeredUsage(command: string, usage: string, request: { readonly kind: string } | UsageAnswer): request is UsageAnswer {
  if (request.kind === 'help') {
    process.stdout.write(usage);
    return true;
  }
  if (request.kind === 'usage-error') {
    process.stderr.write(`agent-rx ${command}: ${(request as Extract<UsageAnswer, { kind: 'usage-error' }>).message}\n\n${usage}`);
    process.exitCode = 2;
    return true;
  }
  return false;
}

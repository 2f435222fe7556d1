import { errorMessage } from './error-message.js';

/**
 * Every signal this library sends goes through this module: in the host with `sendSignal` and
 * `signalGroup`, and after the host's death through the keeper's script below, which is the only
 * other place that kills (a lint rule keeps `process.kill` out of every other module). Every call
 * is safe: a vanished process (ESRCH) or any other failure is returned as text, never thrown.
 */
export function sendSignal(pid: number, signal: NodeJS.Signals | 0): string | null {
  try {
    process.kill(pid, signal);
    return null;
  } catch (error) {
    return `kill ${signal} ${pid}: ${errorMessage(error)}`;
  }
}

/** Signals a whole process group (`pgid` is its leader's pid). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): string | null {
  return sendSignal(-pgid, signal);
}

/**
 * The keeper: a POSIX shell script that outlives a host killed without warning (SIGKILL, the OOM
 * killer), where nothing inside the host can run. It reads its stdin, a pipe from the host, until
 * the pipe closes, which happens when the host dies, however it dies. Lines `+<pgid>` and
 * `-<pgid>` tell it which process groups the host's runs lead. When the pipe closes it SIGKILLs
 * those groups (once: the kernel lets no child of a group escape a kill of the group by forking),
 * then every process whose environment holds the host's token (`$1`, found with one `grep` over
 * /proc/<pid>/environ), until two scans in a row find none (at most 100 rounds), removes the
 * host's temporary folder (`$2`), and exits. After a normal
 * exit the host has already killed everything, so the keeper finds nothing and exits at once.
 */
export const KEEPER_SCRIPT = `trap '' INT HUP
token=$1 dir=$2 groups=' '
while read -r line; do
  pg=\${line#?}
  case $line in
    +*) groups="$groups$pg " ;;
    -*) case $groups in *" $pg "*) groups="\${groups%% $pg *} \${groups#* $pg }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
empty=0 round=0
while [ "$empty" -lt 2 ] && [ "$round" -lt 100 ]; do
  round=$((round + 1)) found=
  for f in $(grep -l -a -F -e "$token" /proc/[0-9]*/environ 2>/dev/null); do
    p=\${f#/proc/}
    kill -9 "\${p%/environ}" 2>/dev/null && found=1
  done
  if [ -n "$found" ]; then empty=0; sleep 0.05; else empty=$((empty + 1)); fi
done
if [ -n "$dir" ]; then rm -rf -- "$dir"; fi
`;

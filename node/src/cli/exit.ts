/**
 * Leaving the process once everything written to stdout and stderr is out.
 * Writes to a pipe that is full (64 KiB on Linux, a slow reader such as
 * `svc admin info --json | less`) stay queued in the process, and
 * `process.exit()` drops them: the reader got a truncated document and the
 * exit code said success. The queues are drained first.
 */
import type { Writable } from 'node:stream';

/** Resolves once `s` has nothing left to hand to the operating system (or it closed). */
/** The exit code of a command-line usage error (an unknown command or option, a missing argument). */
export const EXIT_USAGE = 2;

export function drained(s: Writable): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (s.writableLength === 0 || s.destroyed || s.writableFinished) {
        resolve();
        return;
      }
      s.once('drain', check);
      s.once('close', resolve);
      // A stream that never asked for a drain (its last write returned true) gets polled.
      setTimeout(check, 10).unref();
    };
    check();
  });
}

/** Exits with `code` after stdout and stderr drained (a broken pipe does not hold the exit). */
export async function exitAfterFlush(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

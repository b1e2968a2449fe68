/**
 * V8 heap settings for a server process.
 *
 * **Young generation kept at its starting size.** A streamed PUT turns
 * every socket read into a fresh 64 KiB buffer that dies at once; V8 frees
 * such buffers when it collects the young generation, and it grows that
 * generation (up to 16–32 MiB per semi-space here) while survivors are
 * common, so dead buffers pile up between collections. Measured with the S3
 * bench's streamed 1 GiB PUT (4 drives EC:2, aws-chunked): peak RSS 218–226
 * MiB with V8's default growth, 148–155 MiB with none, at the same or lower
 * server CPU per byte on every S3 bench row (more, cheaper young
 * collections). `--max-semi-space-size` would do the same but is read only
 * at start-up; the growth factor is read whenever the space would grow, so
 * it can be set from here. An operator who sizes the young generation on
 * the command line or in NODE_OPTIONS keeps that choice.
 *
 * A larger fixed young generation was measured and not kept: at 4 MiB per
 * semi-space, 4 KiB GETs gained about 5 % per server CPU-second (1 220–1 310
 * ops against 1 205–1 266, alternating runs), but 4 concurrent 64 MiB PUTs
 * lost 7 % (213–218 against 231–235 MB): with a scavenge only every ~50 MB
 * of body, the dead socket buffers' external memory kept V8 starting full
 * mark-compacts (29–31 against 3 for 2 GB), and the streamed PUT's peak RSS
 * rose from 151 to 176–179 MiB. 2 MiB fell in between on every count.
 *
 * **Old generation started at 64 MiB.** A server's old generation holds
 * about 20 MiB (modules, caches) and grows slowly, so V8 sets its limit only
 * a few MiB above that and then keeps running full mark-compacts, one every
 * 10–20 MB of uploaded data under the S3 bench's 64 MiB PUTs (63 for 1 GB),
 * each marking the whole heap on V8's worker threads: 1.3–1.9 ms of CPU per
 * uploaded MB, a quarter of the PUT's cost. `--initial-old-space-size=64`
 * gives the heap room from the start: 1–6 mark-compacts for 1–3 GB, large
 * PUT 135–146 → 173–182 MB per server CPU-second in alternating runs, no
 * change in the streamed PUT's peak RSS (148 MiB). V8 reads that size only
 * when it creates the heap, so `svc server` restarts itself with it once, at
 * start-up, in the same process (`process.execve`: same PID, so tini, a
 * container runtime or systemd see no difference). An operator's own
 * `--initial-old-space-size` or `--initial-heap-size` wins.
 */
import { setFlagsFromString } from 'node:v8';

export function capYoungGeneration(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  if (ownFlags(execArgv, env).some((a) => /semi[-_]space/.test(a))) return false;
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}

/** Starting size of a server's old generation, MiB (see above). */
export const SERVER_OLD_SPACE_MB = 64;

function ownFlags(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
}

/** The Node options a server process lacks (empty when it runs with them, or with the operator's own sizing). */
export function serverHeapArgs(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): string[] {
  if (ownFlags(execArgv, env).some((a) => /initial[-_](old[-_]space|heap)[-_]size/.test(a))) return [];
  return [`--initial-old-space-size=${SERVER_OLD_SPACE_MB}`];
}

/**
 * The arguments `process.execve` restarts this process with, or null when
 * it already has the server's heap options (`argv` is `process.argv`: the
 * node binary, the script, the command line).
 */
export function serverRestartArgs(argv: readonly string[], execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] | null {
  const add = serverHeapArgs(execArgv, env);
  if (add.length === 0) return null;
  return [process.execPath, ...add, ...execArgv, ...argv.slice(1)];
}

/**
 * Restarts this process in place with the server's heap options (see
 * above); returns only when no restart is needed or possible (a platform
 * without `execve`, or an exec the system refused: the server then runs
 * with V8's defaults, and says so on stderr).
 */
export function restartWithServerHeap(
  argv: readonly string[] = process.argv,
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
  execve: ((file: string, args: string[], env: NodeJS.ProcessEnv) => void) | undefined = process.execve?.bind(process),
): boolean {
  const args = serverRestartArgs(argv, execArgv, env);
  if (args === null) return false;
  if (execve === undefined) {
    process.stderr.write('svc: this platform cannot restart a process in place; running with V8\'s default heap sizing\n');
    return false;
  }
  try {
    execve(process.execPath, args, env);
  } catch (err) {
    process.stderr.write(`svc: restart with the server's heap options failed (${(err as Error).message}); running with V8's default heap sizing\n`);
  }
  return false;
}

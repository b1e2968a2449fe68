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
 * **Young generation fixed at 4 MiB per semi-space** for `svc server`
 * (set at the restart below; the growth factor above covers processes that
 * do not restart). Small requests allocate ~190 KB of short-lived objects
 * each, and a 1 MiB young generation meant a scavenge every ~5 ms under 16
 * concurrent 4 KiB requests. Alternating runs of 3 000 4 KiB GETs (16
 * concurrent), per server CPU-second: 1 205–1 266 ops at 1 MiB, 1 235–1 240
 * at 2, 1 220–1 310 at 4; the S3 bench's streamed 1 GiB PUT peaked at 151,
 * 158 and 176–179 MiB RSS (limit 200). 4 MiB buys the small-request rate
 * for RSS still under the limit, far below V8's own growth to 16–32 MiB.
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
 * container runtime or systemd see no difference), together with the
 * young-generation size. An operator's own `--initial-old-space-size` /
 * `--initial-heap-size`, or semi-space size, wins (each on its own).
 */
import { setFlagsFromString } from 'node:v8';

export function capYoungGeneration(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  if (ownFlags(execArgv, env).some((a) => /semi[-_]space/.test(a))) return false;
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}

/** Starting size of a server's old generation, MiB (see above). */
export const SERVER_OLD_SPACE_MB = 64;

/** Fixed size of each of a server's two young-generation semi-spaces, MiB (see above). */
export const SERVER_SEMI_SPACE_MB = 4;

function ownFlags(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
}

/** The Node options a server process lacks (empty when it runs with them, or with the operator's own sizing). */
export function serverHeapArgs(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): string[] {
  const own = ownFlags(execArgv, env);
  const out: string[] = [];
  if (!own.some((a) => /initial[-_](old[-_]space|heap)[-_]size/.test(a))) out.push(`--initial-old-space-size=${SERVER_OLD_SPACE_MB}`);
  if (!own.some((a) => /semi[-_]space/.test(a))) out.push(`--min-semi-space-size=${SERVER_SEMI_SPACE_MB}`, `--max-semi-space-size=${SERVER_SEMI_SPACE_MB}`);
  return out;
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

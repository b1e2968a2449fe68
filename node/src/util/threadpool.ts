/**
 * libuv's worker pool runs every file-system call. Its default of 4 threads
 * is too few for a storage node: each drive of a large PUT has a shard
 * write and a write-behind flush in flight at once (see
 * `LocalDrive.createFile`), and reads and metadata calls queue behind them.
 * Measured on the 64 MiB PUT bench (4 drives EC:2): 4 threads 0.16 GB/s,
 * 16 or 32 threads 0.24–0.25 GB/s. The threads are idle in I/O waits, so a
 * generous pool costs little. libuv sizes the pool on first use, so this
 * must run before any I/O; an operator's own UV_THREADPOOL_SIZE wins.
 */
export const DEFAULT_THREADPOOL_SIZE = 32;

export function sizeThreadpool(env: NodeJS.ProcessEnv = process.env): void {
  if (env.UV_THREADPOOL_SIZE === undefined || env.UV_THREADPOOL_SIZE === '') env.UV_THREADPOOL_SIZE = String(DEFAULT_THREADPOOL_SIZE);
}

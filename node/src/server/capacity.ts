/**
 * Capacity accounting for `svc_capacity_current_bytes`: the used raw bytes
 * of this node's local drives, sampled periodically and published on
 * `svc:capacity:sampled`. Each node reports its own drives, so the sum over
 * nodes is the cluster's used raw capacity (the alert compares it with the
 * deployed raw capacity). Drives sharing one file system (several drive
 * folders on one disk) count once.
 *
 * Sampling runs only while someone listens: no `statfs` otherwise.
 */
import { stat } from 'node:fs/promises';
import type { DiskInfo } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import { type CapacitySampledMessage, capacitySampled } from '../util/diagnostics.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';

export interface CapacitySource {
  /** The drive's root directory on this machine. */
  readonly root: string;
  diskInfo(): Promise<DiskInfo>;
}

/** Used and total raw bytes of `drives`, each file system once (by device id). */
export async function sampleCapacity(drives: Iterable<CapacitySource>): Promise<CapacitySampledMessage> {
  const seen = new Set<number | bigint>();
  let usedBytes = 0;
  let totalBytes = 0;
  for (const d of drives) {
    const info = await d.diskInfo().catch(() => undefined);
    if (!info?.online) continue;
    const dev = await stat(d.root).then(
      (s) => s.dev,
      () => undefined,
    );
    if (dev === undefined || seen.has(dev)) continue;
    seen.add(dev);
    usedBytes += info.used;
    totalBytes += info.total;
  }
  return { usedBytes, totalBytes };
}

/**
 * The sampler as a worker: samples at start and every `everyMs` after,
 * skipping rounds while nobody subscribes to `svc:capacity:sampled`.
 */
export function capacitySampler(drives: () => Iterable<CapacitySource>, o: { clock: Clock; logger: Logger; everyMs?: number }): Worker<PeriodicProgress> {
  return periodicWorker({
    name: 'capacity-sampling',
    everyMs: o.everyMs ?? 10_000,
    // sampleCapacity settles every drive's failure itself (an offline drive counts nothing).
    tick: async () => {
      if (capacitySampled.hasSubscribers) capacitySampled.publish(await sampleCapacity(drives()));
    },
    clock: o.clock,
    logger: o.logger,
  });
}

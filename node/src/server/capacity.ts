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

/** Samples now and every `everyMs` while `svc:capacity:sampled` has subscribers; returns the stop function. */
export function startCapacitySampler(drives: () => Iterable<CapacitySource>, clock: Clock, everyMs = 10_000): () => void {
  let busy = false;
  const tick = () => {
    if (busy || !capacitySampled.hasSubscribers) return;
    busy = true;
    sampleCapacity(drives())
      // sampleCapacity settles every drive's failure itself (an offline drive counts nothing).
      .then((m) => capacitySampled.publish(m))
      .finally(() => {
        busy = false;
      });
  };
  tick();
  return clock.every(everyMs, tick);
}

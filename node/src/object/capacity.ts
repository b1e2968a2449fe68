/**
 * Capacity and health of the pools: per-drive usage for the admin API and
 * new-object placement, per-set quorum health for readiness, and the drive
 * probe that keeps `Drive.isOnline()` fresh without traffic.
 */
import type { DiskInfo, Drive, DriveIssue } from '../storage/drive.ts';
import type { Logger } from '../util/logger.ts';
import type { Pool } from './pools.ts';
import { readQuorum, writeQuorum } from './quorum.ts';
import type { PoolCapacity, StorageHealth } from './types.ts';

/** Capacity of one pool: online drives only, usable ≈ raw × K/N at STANDARD parity. */
export async function poolCapacity(pool: Pool): Promise<PoolCapacity> {
  const drives = (
    await Promise.all(
      pool.sets.map((set) =>
        Promise.all(
          set.drives.map(async (d, slot) => {
            const info = await d.diskInfo().catch(() => ({ online: false, total: 0, used: 0, free: 0 }));
            return {
              endpoint: d.endpoint,
              pool: pool.index,
              set: set.index,
              slot,
              online: info.online,
              total: info.total,
              used: info.used,
              free: info.free,
            };
          }),
        ),
      ),
    )
  ).flat();
  const online = drives.filter((d) => d.online);
  const rawTotal = online.reduce((a, d) => a + d.total, 0);
  const rawFree = online.reduce((a, d) => a + d.free, 0);
  const ratio = (pool.width - pool.standardParity) / pool.width;
  return {
    pool: pool.index,
    rawTotal,
    rawFree,
    usableTotal: Math.floor(rawTotal * ratio),
    usableFree: Math.floor(rawFree * ratio),
    drives,
  };
}

/** Quorum health of every set from the drives' last known online state (no I/O). */
export function storageHealth(pools: readonly Pool[]): StorageHealth {
  let read = true;
  let write = true;
  let online = 0;
  let total = 0;
  for (const pool of pools) {
    const k = pool.width - pool.standardParity;
    for (const set of pool.sets) {
      const up = set.drives.filter((d) => d.isOnline()).length;
      online += up;
      total += set.width;
      if (up < readQuorum(k)) read = false;
      if (up < writeQuorum(k, pool.standardParity)) write = false;
    }
  }
  return { readQuorum: read, writeQuorum: write, onlineDrives: online, totalDrives: total };
}

/** Refreshes every drive's online state (a failing probe is logged, never thrown); each drive's answer, in order. */
export async function probeDrives(drives: readonly Drive[], log: Logger): Promise<(DiskInfo | undefined)[]> {
  const rs = await Promise.allSettled(drives.map((d) => d.diskInfo()));
  return rs.map((r, i) => {
    if (r.status === 'fulfilled') return r.value;
    log.warn({ event: 'drive_probe_failed', endpoint: drives[i]!.endpoint, err: r.reason }, 'drive probe failed');
    return undefined;
  });
}

/** A drive with problems its node reports, where it sits. */
export interface DriveIssueReport {
  readonly endpoint: string;
  readonly pool: number;
  readonly set: number;
  readonly issues: readonly DriveIssue[];
}

/**
 * Sets that cannot take writes because too many of their online drives
 * are full or read-only (fewer writable drives than the set's write
 * quorum at its STANDARD parity), and a one-line account for readiness.
 */
export function writeBlockedSets(pools: readonly Pool[], issues: readonly DriveIssueReport[]): { pool: number; set: number; why: string; full: boolean }[] {
  const out: { pool: number; set: number; why: string; full: boolean }[] = [];
  // Every PUT asks (object-writes.ts): with no drive reporting an issue no set is blocked, without walking them.
  if (issues.length === 0) return out;
  for (const pool of pools) {
    const k = pool.width - pool.standardParity;
    for (const set of pool.sets) {
      const blocked = issues.filter((r) => r.pool === pool.index && r.set === set.index && r.issues.some((i) => i.kind === 'full' || i.kind === 'read-only'));
      const writable = set.drives.filter((d) => d.isOnline()).length - blocked.length;
      if (blocked.length > 0 && writable < writeQuorum(k, pool.standardParity)) {
        const kinds = [...new Set(blocked.flatMap((b) => b.issues.filter((i) => i.kind === 'full' || i.kind === 'read-only').map((i) => i.kind)))];
        // Full when the full drives alone cost the quorum (free space, and it writes again).
        const fullOnes = blocked.filter((b) => b.issues.some((i) => i.kind === 'full')).length;
        const full = set.drives.filter((d) => d.isOnline()).length - fullOnes < writeQuorum(k, pool.standardParity);
        out.push({ pool: pool.index, set: set.index, why: `${blocked.length} of ${set.width} drives ${kinds.join(' or ')}: writes refused`, full });
      }
    }
  }
  return out;
}

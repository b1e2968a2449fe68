/**
 * The drive probe's state: every drive's online state refreshed
 * (`Drive.isOnline`, which `health()` reads synchronously, so a drive that
 * left or came back without traffic is noticed), the problems each drive's
 * node reported, and the sets those problems leave short of write quorum
 * (logged when a set stops and when it resumes taking writes).
 */
import type { Logger } from '../util/logger.ts';
import { type DriveIssueReport, probeDrives, writeBlockedSets } from './capacity.ts';
import type { Pools } from './pools.ts';

/** How often the object layer probes its drives. */
export const DRIVE_PROBE_MS = 5_000;

export class DriveProbe {
  readonly #pools: Pools;
  readonly #log: Logger;
  #probing = false;
  #driveIssues: readonly DriveIssueReport[] = [];
  #blockedSets = new Set<string>();

  constructor(pools: Pools, logger: Logger) {
    this.#pools = pools;
    this.#log = logger;
  }

  /** One probe of every drive (a probe already running: nothing). */
  async probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      const drives = this.#pools.list.flatMap((p) => p.sets.flatMap((s) => s.drives.map((d) => ({ d, pool: p.index, set: s.index }))));
      const infos = await probeDrives(
        drives.map((x) => x.d),
        this.#log,
      );
      this.#driveIssues = drives.flatMap((x, i) => {
        const issues = infos[i]?.online === true ? (infos[i]?.issues ?? []) : [];
        return issues.length > 0 ? [{ endpoint: x.d.endpoint, pool: x.pool, set: x.set, issues }] : [];
      });
      // A set that can no longer take writes (its drives full or read-only) is an alert, and so is its recovery.
      const blocked = new Map(this.writeBlockedSets().map((b) => [`${b.pool}/${b.set}`, b]));
      for (const [k, b] of blocked) {
        if (!this.#blockedSets.has(k)) this.#log.error({ event: 'storage_set_write_blocked', pool: b.pool, set: b.set, reason: b.why }, `pool ${b.pool} set ${b.set} cannot take writes: ${b.why}`);
      }
      for (const k of this.#blockedSets) {
        if (!blocked.has(k)) this.#log.info({ event: 'storage_set_writable', set: k }, `set ${k} takes writes again`);
      }
      this.#blockedSets = new Set(blocked.keys());
    } finally {
      this.#probing = false;
    }
  }

  /** Drives with problems their nodes reported at the last probe. */
  driveIssues(): readonly DriveIssueReport[] {
    return this.#driveIssues;
  }

  /** Sets whose full or read-only drives leave them short of write quorum (from the last probe). */
  writeBlockedSets(): { pool: number; set: number; why: string; full: boolean }[] {
    return writeBlockedSets(this.#pools.list, this.#driveIssues);
  }
}

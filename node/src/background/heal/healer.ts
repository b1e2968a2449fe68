/**
 * The heal engine bound to one object layer: heal an object wherever it
 * lives, a bucket, the `.svc.sys` records, and enumerate what a heal walks.
 * Every healer (admin sequences, the read-repair worker, the scanner, the
 * drive rebuild) goes through one `Healer`, and it publishes the heal task
 * events the telemetry turns into the SPEC's heal metrics.
 */
import { BUCKETS_DIR } from '../../storage/drive.ts';
import { objectPath } from '../../storage/object-path.ts';
import type { Clock } from '../../util/clock.ts';
import { type HealTaskType, healTaskFinished, healTaskQueued, healTaskStarted, setLabel } from '../../util/diagnostics.ts';
import { toSvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { ErasureSet } from '../../object/erasure-set.ts';
import { volumesOnDrives } from '../../object/namespace-walk.ts';
import type { NamespaceLocker } from '../../object/ns-lock.ts';
import type { LockClock } from '../../object/object-lock.ts';
import type { Pools } from '../../object/pools.ts';
import type { SysRecords } from '../../object/sys-records.ts';
import { type BucketHealOptions, healBucket, healSysRecords, type MetaHealDeps } from './heal-bucket.ts';
import { healDrives, healObject } from './heal-object.ts';
import type { HealObjectOptions, HealResult } from './types.ts';

export interface HealerOptions {
  pools: Pools;
  locker: NamespaceLocker;
  records: SysRecords;
  clock: Clock;
  logger: Logger;
  /** The object layer's lock clock (server time plus the cluster's skew allowance); default the clock, no allowance. */
  lockClock?: () => LockClock;
}

export class Healer implements MetaHealDeps {
  readonly pools: Pools;
  readonly locker: NamespaceLocker;
  readonly records: SysRecords;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly #lockClock: () => LockClock;

  constructor(o: HealerOptions) {
    this.pools = o.pools;
    this.locker = o.locker;
    this.records = o.records;
    this.clock = o.clock;
    this.logger = o.logger;
    this.#lockClock = o.lockClock ?? (() => ({ now: o.clock.now(), graceMs: 0 }));
  }

  /** `remove` never takes a version object lock protects (heal-object). */
  lockClock(): LockClock {
    return this.#lockClock();
  }

  /** The task was queued now (metrics: queue delay starts). */
  queued(type: HealTaskType, pool: number, set: number): void {
    if (healTaskQueued.hasSubscribers) healTaskQueued.publish({ type, set: setLabel(pool, set) });
  }

  /**
   * Runs one heal task with the start/finish events around it (`queuedAt`:
   * when it was queued, for the queue-delay histogram).
   */
  async task<T extends HealResult | undefined>(type: HealTaskType, pool: number, set: number, queuedAt: number, fn: () => Promise<T>): Promise<T> {
    const label = setLabel(Math.max(pool, 0), Math.max(set, 0));
    if (healTaskStarted.hasSubscribers) healTaskStarted.publish({ type, set: label, queueDelaySeconds: Math.max(0, this.clock.now() - queuedAt) / 1000 });
    let ok = false;
    try {
      const r = await fn();
      ok = r === undefined || r.outcome !== 'failed';
      return r;
    } finally {
      if (healTaskFinished.hasSubscribers) healTaskFinished.publish({ type, set: label, result: ok ? 'success' : 'error' });
    }
  }

  /** Heals `key` of one set. */
  healInSet(set: ErasureSet, bucket: string, key: string, opts: HealObjectOptions): Promise<HealResult> {
    return healObject(this, set, bucket, key, opts);
  }

  /**
   * Heals `bucket/key` in every pool (in the set its key hashes to); the
   * result is the pool that holds it (the first that is not absent), or an
   * `absent` result. A pool whose heal failed wins over one that found
   * nothing, so an error is never hidden.
   */
  async healObjectAnywhere(bucket: string, key: string, opts: HealObjectOptions): Promise<HealResult> {
    objectPath(key);
    let best: HealResult | undefined;
    for (const pool of this.pools.list) {
      const set = this.pools.setOf(pool, key);
      let r: HealResult;
      try {
        r = await healObject(this, set, bucket, key, opts);
      } catch (err) {
        r = this.failure(set, bucket, key, err);
      }
      if (best === undefined || (best.outcome === 'absent' && r.outcome !== 'absent')) best = r;
    }
    return best!;
  }

  /** A heal that threw before it could produce a result (lock timeout, quorum lost). */
  failure(set: ErasureSet, bucket: string, key: string, err: unknown): HealResult {
    const e = toSvcError(err);
    const states = set.drives.map((d) => (d.isOnline() ? ('ok' as const) : ('offline' as const)));
    return {
      type: 'object',
      bucket,
      object: key,
      versionId: '',
      pool: set.pool,
      set: set.index,
      dataBlocks: 0,
      parityBlocks: 0,
      diskCount: set.width,
      setCount: 1,
      objectSize: 0,
      before: healDrives(set, states),
      after: healDrives(set, states),
      outcome: 'failed',
      detail: `${e.code}: ${e.message}`,
      shardsHealed: 0,
      bytesHealed: 0,
    };
  }

  /**
   * Collects orphaned data directories of one key (`orphans[slot]`, as the
   * drives reported them): under the key's write lock, so no commit is half
   * way, every drive's journal is read again and a directory goes only when
   * no version on any drive names it and it still holds nothing but part
   * files. A drive that cannot answer (offline, unreadable journal) stops
   * the collection: it could be the one naming it. Returns how many went.
   */
  async collectOrphans(set: ErasureSet, vol: string, key: string, orphans: readonly (readonly string[] | undefined)[]): Promise<number> {
    const path = objectPath(key);
    const unlock = await this.locker.lock(vol, key);
    try {
      const metas = await set.readMetas(vol, path, false);
      if (metas.some((m) => !m.ok && !m.notFound)) return 0;
      const named = new Set(metas.flatMap((m) => (m.ok ? m.versions.map((v) => v.dataDir) : [])));
      let removed = 0;
      for (const [slot, dirs] of orphans.entries()) {
        const drive = set.drives[slot];
        if (drive === undefined || dirs === undefined) continue;
        for (const dir of dirs) {
          if (named.has(dir)) continue;
          try {
            const inside = await drive.listDir(vol, `${path}/${dir}`);
            if (!inside.every((f) => /^part\.[0-9]+$/.test(f))) continue;
            await drive.delete(vol, `${path}/${dir}`, { recursive: true });
            removed++;
            this.logger.info({ event: 'orphan_data_collected', bucket: vol, object: key, dataDir: dir, endpoint: drive.endpoint, files: inside.length }, 'collected a data folder no version names');
          } catch (err) {
            this.logger.warn({ event: 'orphan_collect_failed', bucket: vol, object: key, dataDir: dir, endpoint: drive.endpoint, err: toSvcError(err).message }, 'could not collect an orphaned data folder');
          }
        }
      }
      return removed;
    } finally {
      unlock();
    }
  }

  healBucket(bucket: string, opts: BucketHealOptions): Promise<HealResult> {
    return healBucket(this, bucket, opts);
  }

  healSysRecords(opts: { dryRun: boolean; deep: boolean; only?: (pool: number, set: number) => boolean }, each: (r: HealResult) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
    return healSysRecords(this, opts, each, signal);
  }

  /** Every bucket a cluster heal visits: those with a record, and volumes found on drives. */
  async buckets(): Promise<string[]> {
    const names = new Set<string>(await volumesOnDrives(this.pools));
    const { names: recs } = await this.records.list(BUCKETS_DIR).catch(() => ({ names: [] as string[] }));
    for (const r of recs) if (r.endsWith('/')) names.add(r.slice(0, -1));
    return [...names].sort();
  }
}

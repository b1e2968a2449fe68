/**
 * Bucket presence on every pool. A bucket exists when its metadata record
 * (a sys record, see `sys-records.ts`) says so; on each pool it also needs
 * its volume on the drives of every set, or that pool refuses the bucket's
 * writes. Pools drift apart when a pool joins (start-up with one more
 * volume argument), or when a bucket operation could not reach a pool.
 * One mechanism repairs both:
 *
 * - `pass()` walks every bucket record: the record's newest copy goes to
 *   the pools that miss it (`SysRecords.repair`), and the volume is made on
 *   every drive that lacks it. Start-up runs a pass before the node reports
 *   ready (`attempt`); a worker repeats it every `intervalMs`, sooner after
 *   a change that missed a pool (`markDirty`).
 * - `ensure(bucket, pool)` does the same for one bucket and pool at once; a
 *   write that finds its target pool lacking the bucket's volume calls it.
 *
 * A pool holds a bucket when a majority (N/2 + 1) of every set's drives
 * hold its volume: no less than a write there needs. What cannot be
 * repaired is kept as an issue naming the pool, the bucket and why; an issue
 * is *blocking* when a reachable drive refused to create the volume (a
 * read-only or failing drive), and not when drives are merely offline (the
 * storage health already reports those) or a record copy failed (reads take
 * the newest copy of any pool).
 */
import { BUCKETS_DIR, type Drive } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError, toSvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { Pool, Pools } from './pools.ts';
import { majority } from './quorum.ts';
import type { SysRecords } from './sys-records.ts';
import { sleepUnlessAborted, Worker, type WorkResult } from '../util/worker.ts';

export function bucketRecordPath(bucket: string): string {
  return `${BUCKETS_DIR}/${bucket}/.metadata.bin`;
}

/** One thing that keeps a bucket from being whole on a pool. */
export interface BucketIssue {
  pool: number;
  cmdline: string;
  bucket: string;
  kind: 'volume' | 'record';
  reason: string;
  /** True when a reachable drive refused: the pool cannot take the bucket's writes until someone acts. */
  blocking: boolean;
}

export interface BucketSyncReport {
  /** Unix ms the pass ended. */
  at: number;
  buckets: number;
  volumesMade: number;
  recordsCopied: number;
  issues: BucketIssue[];
}

export interface BucketSyncProgress {
  passes: number;
  lastPassAt?: number;
  buckets: number;
  issues: number;
}

/** What making one bucket's volume on one pool found, per set. */
export interface PoolVolumes {
  pool: Pool;
  /** Every set holds the volume on a majority of its drives. */
  ok: boolean;
  /** Drives where this call created the volume. */
  created: Drive[];
  /** Human summary of the sets short of a majority (empty when ok). */
  reason: string;
  /** A reachable drive refused to create the volume. */
  refused: boolean;
}

/**
 * Makes `bucket`'s volume on every drive of `pool` that lacks it
 * (`present`: drives already known to hold it are skipped).
 */
export async function makePoolVolumes(pool: Pool, bucket: string, present?: (d: Drive) => boolean): Promise<PoolVolumes> {
  const created: Drive[] = [];
  const short: string[] = [];
  let refused = false;
  await Promise.all(
    pool.sets.map(async (set) => {
      let have = 0;
      const failures: string[] = [];
      let offline = 0;
      await Promise.all(
        set.drives.map(async (d) => {
          if (present?.(d)) {
            have++;
            return;
          }
          try {
            await d.makeVol(bucket);
            created.push(d);
            have++;
          } catch (err) {
            if (hasCode(err, 'VolumeExists')) {
              have++;
              return;
            }
            const e = toSvcError(err);
            if (!d.isOnline()) offline++;
            else failures.push(`${d.endpoint}: ${e.code}: ${e.message}`);
          }
        }),
      );
      const need = majority(set.width);
      if (have < need) {
        if (failures.length > 0) refused = true;
        const why = [offline > 0 ? `${offline} offline` : '', ...failures].filter(Boolean).join('; ');
        short.push(`set ${set.index} has the volume on ${have} of ${set.width} drives, ${need} needed (${why})`);
      }
    }),
  );
  return { pool, ok: short.length === 0, created, reason: short.join('; '), refused };
}

export interface BucketSyncOptions {
  pools: Pools;
  records: SysRecords;
  clock: Clock;
  logger: Logger;
  /** Full pass period (default 10 min). */
  intervalMs?: number;
  /** Retry period while a pass left blocking issues or a change missed a pool (default 30 s). */
  retryMs?: number;
}

const key = (pool: number, bucket: string) => `${pool}/${bucket}`;
const PASS_CONCURRENCY = 8;

export class BucketSync {
  readonly worker: Worker<BucketSyncProgress>;
  readonly #pools: Pools;
  readonly #records: SysRecords;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #retryMs: number;
  /** Issues by `pool/bucket/kind`. */
  #issues = new Map<string, BucketIssue>();
  /** `pool/bucket` pairs whose volume is short of a majority somewhere: writes there `ensure` first. */
  #short = new Set<string>();
  readonly #ensuring = new Map<string, Promise<void>>();
  #pass: Promise<BucketSyncReport> | undefined;
  #last: BucketSyncReport | undefined;
  #passes = 0;
  #lastAttemptAt: number | undefined;
  #dirty = true;

  constructor(opts: BucketSyncOptions) {
    this.#pools = opts.pools;
    this.#records = opts.records;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#intervalMs = opts.intervalMs ?? 10 * 60_000;
    this.#retryMs = opts.retryMs ?? 30_000;
    this.worker = new Worker(
      {
        name: 'bucket-sync',
        work: (signal) => this.#work(signal),
        waitForWork: (signal) => sleepUnlessAborted(this.#clock, this.#untilDue(), signal),
        progress: () => ({
          passes: this.#passes,
          ...(this.#last ? { lastPassAt: this.#last.at } : {}),
          buckets: this.#last?.buckets ?? 0,
          issues: this.#issues.size,
        }),
      },
      { clock: opts.clock, logger: opts.logger },
    );
  }

  /** The last full pass, if any. */
  get lastReport(): BucketSyncReport | undefined {
    return this.#last;
  }

  /** Current issues (last pass, updated by `ensure`). */
  issues(): BucketIssue[] {
    return [...this.#issues.values()].sort((a, b) => a.pool - b.pool || (a.bucket < b.bucket ? -1 : 1));
  }

  /** True when `bucket`'s volume was last seen short of a majority on `pool`. */
  knownShort(pool: number, bucket: string): boolean {
    return this.#short.has(key(pool, bucket));
  }

  /** A bucket change missed some pool: repair soon. */
  markDirty(): void {
    this.#dirty = true;
    this.worker.wake();
  }

  /**
   * One start-up attempt: a pass; undefined when no blocking issue is left,
   * else why (for the readiness detail; start-up retries).
   */
  async attempt(): Promise<string | undefined> {
    const r = await this.pass();
    return r.issues.some((i) => i.blocking) ? this.note() : undefined;
  }

  /** Human summary of the current issues (readiness detail); undefined when none. */
  note(): string | undefined {
    const all = this.issues();
    if (all.length === 0) return undefined;
    const shown = all
      .slice(0, 5)
      .map((i) => `pool ${i.pool} (${i.cmdline}): bucket "${i.bucket}" ${i.kind === 'volume' ? 'not present' : 'record not copied'}: ${i.reason}`);
    if (all.length > shown.length) shown.push(`and ${all.length - shown.length} more`);
    return `bucket sync: ${shown.join('; ')}`;
  }

  /**
   * Makes `bucket` present on `pool`: its volume on a majority of every set's
   * drives (else `XSvcBucketNotOnPool` naming the pool and why), then its
   * record copy (best effort). Concurrent calls for one pair share the work.
   */
  ensure(bucket: string, pool: Pool): Promise<void> {
    const k = key(pool.index, bucket);
    let p = this.#ensuring.get(k);
    if (!p) {
      p = this.#ensure(bucket, pool).finally(() => this.#ensuring.delete(k));
      this.#ensuring.set(k, p);
    }
    return p;
  }

  async #ensure(bucket: string, pool: Pool): Promise<void> {
    const r = await makePoolVolumes(pool, bucket);
    this.#noteVolumes(this.#issues, this.#short, bucket, r);
    if (!r.ok) {
      this.#dirty = true;
      throw new SvcError('XSvcBucketNotOnPool', `bucket "${bucket}" cannot be made present on pool ${pool.index} (${pool.cmdline}): ${r.reason}`, {
        bucket,
        pool: pool.index,
      });
    }
    if (r.created.length > 0) this.#log.info({ event: 'bucket_volume_made', bucket, pool: pool.index, drives: r.created.length }, 'bucket volume made on pool');
    await this.#records.repair(bucketRecordPath(bucket)).then(
      (rep) => this.#noteRecord(this.#issues, bucket, rep.failed),
      (err: unknown) => this.#log.warn({ event: 'bucket_record_repair_failed', bucket, err }, 'bucket record copy failed'),
    );
  }

  /**
   * One pass over every bucket and pool (concurrent callers share one pass;
   * `signal` ends the pass early, between buckets).
   */
  pass(signal?: AbortSignal): Promise<BucketSyncReport> {
    if (!this.#pass) {
      this.#pass = this.#runPass(signal).finally(() => {
        this.#pass = undefined;
        this.#lastAttemptAt = this.#clock.now();
      });
    }
    return this.#pass;
  }

  async #runPass(signal: AbortSignal | undefined): Promise<BucketSyncReport> {
    this.#dirty = false;
    const { names } = await this.#records.list(BUCKETS_DIR);
    const buckets = names.filter((n) => n.endsWith('/')).map((n) => n.slice(0, -1));
    // One volume listing per drive for the whole pass.
    const listed = new Map<Drive, Set<string>>();
    await Promise.all(
      this.#pools.allDrives().map(async (d) => {
        const vols = await d.listVols().catch(() => undefined);
        if (vols) listed.set(d, new Set(vols.map((v) => v.name)));
      }),
    );
    const issues = new Map<string, BucketIssue>();
    const short = new Set<string>();
    let volumesMade = 0;
    let recordsCopied = 0;
    let live = 0;
    let next = 0;
    const one = async (bucket: string) => {
      let rep;
      try {
        rep = await this.#records.repair(bucketRecordPath(bucket));
      } catch (err) {
        this.#log.warn({ event: 'bucket_sync_record_failed', bucket, err }, 'bucket record could not be read or repaired');
        return;
      }
      recordsCopied += rep.repaired.length;
      this.#noteRecord(issues, bucket, rep.failed);
      const w = rep.view.winner;
      if (!w) {
        for (const p of rep.view.pools.filter((x) => x.state === 'unreachable')) {
          this.#issue(issues, p.pool, bucket, 'record', 'bucket record unreadable (pool below read quorum)', false);
        }
        return;
      }
      if (w.data === undefined) return; // deleted
      live++;
      for (const pool of this.#pools.list) {
        const r = await makePoolVolumes(pool, bucket, (d) => listed.get(d)?.has(bucket) === true);
        volumesMade += r.created.length;
        this.#noteVolumes(issues, short, bucket, r);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(PASS_CONCURRENCY, buckets.length) }, async () => {
        while (next < buckets.length && !signal?.aborted) await one(buckets[next++]!);
      }),
    );
    const report: BucketSyncReport = { at: this.#clock.now(), buckets: live, volumesMade, recordsCopied, issues: [...issues.values()] };
    if (signal?.aborted) return report; // a partial pass replaces nothing
    this.#issues = issues;
    this.#short = short;
    this.#passes++;
    report.issues = this.issues();
    this.#last = report;
    if (volumesMade > 0 || recordsCopied > 0) {
      this.#log.info({ event: 'bucket_sync_repaired', buckets: live, volumesMade, recordsCopied }, 'bucket sync made missing bucket volumes and record copies');
    }
    if (report.issues.length > 0) {
      this.#dirty = true;
      this.#log.warn({ event: 'bucket_sync_issues', issues: report.issues }, this.note() ?? 'bucket sync issues');
    }
    return report;
  }

  #issue(into: Map<string, BucketIssue>, pool: number, bucket: string, kind: BucketIssue['kind'], reason: string, blocking: boolean): void {
    const cmdline = this.#pools.list[pool]?.cmdline ?? '';
    into.set(`${key(pool, bucket)}/${kind}`, { pool, cmdline, bucket, kind, reason, blocking });
  }

  #noteVolumes(into: Map<string, BucketIssue>, short: Set<string>, bucket: string, r: PoolVolumes): void {
    const k = key(r.pool.index, bucket);
    if (r.ok) {
      into.delete(`${k}/volume`);
      short.delete(k);
      return;
    }
    short.add(k);
    this.#issue(into, r.pool.index, bucket, 'volume', r.reason, r.refused);
  }

  #noteRecord(into: Map<string, BucketIssue>, bucket: string, failed: readonly { pool: number; error: SvcError }[]): void {
    for (const pool of this.#pools.list) into.delete(`${key(pool.index, bucket)}/record`);
    for (const f of failed) this.#issue(into, f.pool, bucket, 'record', `${f.error.code}: ${f.error.message}`, false);
  }

  async #work(signal: AbortSignal): Promise<WorkResult> {
    if (this.#untilDue() > 0) return 'idle';
    try {
      await this.pass(signal);
    } catch (err) {
      this.#dirty = true;
      this.#log.warn({ event: 'bucket_sync_failed', err }, 'bucket sync pass failed');
    }
    return 'busy';
  }

  /** Milliseconds until the next pass is due (0: now). */
  #untilDue(): number {
    const since = this.#lastAttemptAt === undefined ? Number.POSITIVE_INFINITY : this.#clock.now() - this.#lastAttemptAt;
    return Math.max(0, (this.#dirty ? this.#retryMs : this.#intervalMs) - since);
  }
}

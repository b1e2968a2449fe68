/**
 * One pool's share of a rebalance, as a `WorkerTask`: walk the pool's
 * buckets and move objects (every version, `ObjectMover`) to the pools that
 * only receive, until the pool's fill is within `STOP_MARGIN` of the
 * target (the mean fill at start), checked after every step. Each key gets
 * up to `SVC_REBALANCE_MAX_ATTEMPTS` attempts; one that still fails is
 * left where it is (`lastError` says which), one whose copy succeeded but
 * whose source copy could not be removed is a cleanup warning.
 *
 * Progress is persisted in this pool's entry of `rebalance.bin` while it
 * runs; the entry's state changes only while it belongs to this rebalance
 * and is `started`. A stop request (`stopping` in the record, or the
 * worker's `stop()`) ends the task with the state `stopped`, keeping every
 * move made.
 */
import { poolCapacity } from '../../object/capacity.ts';
import type { Pool } from '../../object/pools.ts';
import { MAX_REBALANCE_WARNINGS, type RebalancePoolEntry, type RebalanceWarning } from '../../object/records/rebalance-meta.ts';
import { sleepUnlessAborted, type WorkerStatus, type WorkerTask, type WorkResult } from '../../util/worker.ts';
import { errorMessage, type MovementContext } from './context.ts';
import { BucketCursor, type PoolEntry } from './cursor.ts';
import { fillOf, STOP_MARGIN } from './rebalance-plan.ts';
import { TargetChooser } from './targets.ts';

const STEP_MS = 1_000;
const WINDOW = 4;

export interface RebalanceTaskOptions {
  readonly ctx: MovementContext;
  readonly pool: Pool;
  /** The rebalance this task belongs to. */
  readonly id: string;
  /** Target fill (fraction). */
  readonly target: number;
  /** Attempts per key (`SVC_REBALANCE_MAX_ATTEMPTS`). */
  readonly attempts: number;
  /** Usable bytes the pool held in use when the rebalance started. */
  readonly initUsed: number;
}

export interface RebalanceTaskProgress {
  objects: number;
  versions: number;
  bytes: number;
  failed: number;
  bucket: string;
  object: string;
  fill: number;
}

type Outcome = { state: 'completed'; note: string | null };

/** Object bytes of every version a key holds, as the walk saw them (the drive with the longest journal). */
function bytesOf(e: PoolEntry): number {
  let best = 0;
  for (const m of e.metas) if (m.ok) best = Math.max(best, m.versions.reduce((a, v) => a + v.size, 0));
  return best;
}

export class RebalanceTask implements WorkerTask<RebalanceTaskProgress> {
  readonly name: string;
  readonly #o: RebalanceTaskOptions;
  readonly #chooser: TargetChooser;
  #started = false;
  #gone = false;
  #stopRequested = false;
  #outcome: Outcome | undefined;
  #remaining: string[] = [];
  #cursor: BucketCursor | undefined;
  #objects = 0;
  #versions = 0;
  #bytes = 0;
  #failed = 0;
  #bucket = '';
  #object = '';
  #fill = 0;
  #lastError: string | null = null;
  #warnings: RebalanceWarning[] = [];
  #warningCount = 0;
  #runStart = 0;
  #elapsedBase = 0;

  constructor(o: RebalanceTaskOptions) {
    this.#o = o;
    this.name = `rebalance pool ${o.pool.index}`;
    this.#chooser = new TargetChooser({
      capacity: () => o.ctx.layer.capacity(),
      clock: o.ctx.clock,
      eligible: (p) => p !== o.pool && o.ctx.layer.movement.pools.admits(p.index),
    });
  }

  get id(): string {
    return this.#o.id;
  }

  get pool(): Pool {
    return this.#o.pool;
  }

  progress(): RebalanceTaskProgress {
    return { objects: this.#objects, versions: this.#versions, bytes: this.#bytes, failed: this.#failed, bucket: this.#bucket, object: this.#object, fill: this.#fill };
  }

  /** Read-modify-write of this pool's entry, only while it belongs to this rebalance. */
  async #update(fn: (e: RebalancePoolEntry) => RebalancePoolEntry | undefined): Promise<void> {
    const { ctx, pool, id } = this.#o;
    await ctx.records.updateRebalanceMeta((meta) => {
      const e = meta?.id === id ? meta.pools.find((p) => p.cmdline === pool.cmdline) : undefined;
      if (meta === undefined || e === undefined || (e.state !== 'started' && !e.stopping)) {
        this.#gone = true;
        return undefined;
      }
      if (e.stopping) this.#stopRequested = true;
      const next = fn(e);
      if (next === undefined) return undefined;
      return { ...meta, pools: meta.pools.map((p) => (p === e ? next : p)) };
    });
  }

  async #begin(): Promise<void> {
    const { ctx } = this.#o;
    const buckets = (await ctx.layer.listBuckets()).map((b) => b.name);
    this.#runStart = ctx.clock.now();
    await this.#update((e) => {
      this.#elapsedBase = e.progress.elapsedMs;
      return { ...e, progress: { ...e.progress, remainingBuckets: buckets, startedAt: e.progress.startedAt || this.#runStart, updatedAt: this.#runStart } };
    });
    this.#remaining = buckets;
    this.#started = true;
    ctx.logger.info({ event: 'rebalance_pool_started', id: this.#o.id, pool: this.#o.pool.index, target: this.#o.target, buckets: buckets.length }, `rebalance of pool ${this.#o.pool.index} is moving objects`);
  }

  #warn(bucket: string, object: string, message: string): void {
    this.#warningCount++;
    this.#warnings.push({ bucket, object, message, at: this.#o.ctx.clock.now() });
    if (this.#warnings.length > MAX_REBALANCE_WARNINGS) this.#warnings.shift();
  }

  async #handle(bucket: string, e: PoolEntry, signal: AbortSignal): Promise<void> {
    const { ctx, pool } = this.#o;
    let last: unknown;
    let cleanup = false;
    for (let a = 1; a <= Math.max(1, this.#o.attempts) && !signal.aborted; a++) {
      try {
        const r = await ctx.layer.movement.mover.move(bucket, e.name, pool, this.#chooser.choose);
        this.#bytes += r.bytes;
        this.#versions += r.copied;
        if (r.cleanupError === undefined) {
          if (r.found) {
            this.#objects++;
            this.#bucket = bucket;
            this.#object = e.name;
          }
          return;
        }
        last = r.cleanupError;
        cleanup = true;
      } catch (err) {
        last = err;
        cleanup = false;
      }
      await sleepUnlessAborted(ctx.clock, 250 * a, signal);
    }
    if (signal.aborted) return;
    const msg = errorMessage(last);
    if (cleanup) this.#warn(bucket, e.name, `moved, but the copy left on pool ${pool.index} could not be removed: ${msg}`);
    else {
      this.#failed++;
      this.#lastError = `${bucket}/${e.name} was not moved after ${this.#o.attempts} attempt(s): ${msg}`;
    }
    ctx.logger.warn({ event: 'rebalance_object_failed', pool: pool.index, bucket, object: e.name, cleanup, err: last }, 'rebalance could not move an object');
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    if (this.#gone || this.#stopRequested || this.#outcome !== undefined) return 'done';
    if (!this.#started) {
      await this.#begin();
      return 'busy';
    }
    const cap = await poolCapacity(this.#o.pool);
    // The file system frees a moved object's space a little later (its
    // data goes through the drive's trash): the fill is what it measures,
    // or what the start's measure minus the bytes moved says, if lower.
    const counted = cap.usableTotal > 0 ? Math.max(0, this.#o.initUsed - this.#bytes) / cap.usableTotal : 0;
    this.#fill = Math.min(fillOf(cap), counted);
    if (this.#fill <= this.#o.target + STOP_MARGIN) {
      this.#outcome = { state: 'completed', note: null };
      return 'done';
    }
    if (this.#cursor === undefined) {
      const bucket = this.#remaining[0];
      if (bucket === undefined) {
        this.#outcome = {
          state: 'completed',
          note: `every object of the pool was walked; its fill (${(this.#fill * 100).toFixed(1)} %) is still above the target (${(this.#o.target * 100).toFixed(1)} %)${this.#failed > 0 ? `; ${this.#failed} object(s) could not be moved` : ''}`,
        };
        return 'done';
      }
      this.#cursor = new BucketCursor(this.#o.pool, bucket, this.#o.ctx.clock);
    }
    const c = this.#cursor;
    // Bytes still to give away: the step ends once as many were moved, so the pool does not overshoot the target.
    const excess = (this.#fill - this.#o.target - STOP_MARGIN / 2) * cap.usableTotal;
    // Counted when handed out (keys in flight included), from the journals the walk read.
    let handedOut = 0;
    await c.step({
      window: WINDOW,
      max: WINDOW * 4,
      deadline: this.#o.ctx.clock.now() + STEP_MS,
      signal,
      enough: () => handedOut >= excess,
      handle: (entry) => {
        handedOut += bytesOf(entry);
        return this.#handle(c.bucket, entry, signal);
      },
    });
    if (c.done) {
      this.#remaining.shift();
      this.#cursor = undefined;
    }
    return 'busy';
  }

  async persist(status: WorkerStatus<RebalanceTaskProgress>): Promise<void> {
    const now = this.#o.ctx.clock.now();
    const ended = status.state === 'completed' || status.state === 'stopped' || status.state === 'failed';
    await this.#update((e) => {
      const progress = {
        ...e.progress,
        objects: this.#objects,
        versions: this.#versions,
        bytes: this.#bytes,
        remainingBuckets: [...this.#remaining],
        bucket: this.#bucket,
        object: this.#object,
        elapsedMs: this.#elapsedBase + (this.#runStart > 0 ? now - this.#runStart : 0),
        updatedAt: now,
      };
      const warnings = [...e.warnings, ...this.#warnings].slice(-MAX_REBALANCE_WARNINGS);
      const next: RebalancePoolEntry = { ...e, progress, lastError: this.#lastError ?? e.lastError, warnings, warningCount: e.warningCount + this.#warningCount };
      this.#warnings = [];
      this.#warningCount = 0;
      if (!ended) return next;
      if (status.state === 'failed') return { ...next, state: 'failed', stopping: false, lastError: status.lastError ?? 'the rebalance of this pool failed' };
      if (status.state === 'completed' && this.#outcome !== undefined && !this.#stopRequested) {
        return { ...next, state: 'completed', stopping: false, lastError: this.#outcome.note ?? this.#lastError };
      }
      // Stopped without a request: this node is shutting down (a restart never resumes a rebalance).
      const note = this.#stopRequested ? next.lastError : `stopped: ${this.#o.ctx.selfId} shut down; the moves made are kept; start a new rebalance to continue`;
      return { ...next, state: 'stopped', stopping: false, lastError: note };
    });
    if (ended && !this.#gone) {
      this.#o.ctx.logger.info(
        { event: 'rebalance_pool_ended', id: this.#o.id, pool: this.#o.pool.index, state: status.state, objects: this.#objects, bytes: this.#bytes, fill: this.#fill },
        `rebalance of pool ${this.#o.pool.index} ended (${this.#stopRequested ? 'stopped' : status.state})`,
      );
    }
  }

  async close(): Promise<void> {
    await this.#cursor?.close();
  }
}

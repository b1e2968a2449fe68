/**
 * The drain of one pool (its decommission once it is `active`), as a
 * `WorkerTask`: walk every bucket the pool holds (up to
 * `SVC_DECOMMISSION_BUCKET_CONCURRENCY` buckets at once, up to
 * `SVC_DECOMMISSION_ENTRY_CONCURRENCY` keys in flight per bucket) and move
 * each key, every version of it, to the remaining pools (`ObjectMover`).
 *
 * Rounds:
 * 1. the main round walks the buckets queued in `pool.bin` (resuming a
 *    restarted drain: moved keys are gone from the pool, so a bucket's walk
 *    simply starts over and finds what is left);
 * 2. sweep rounds walk every bucket again, after telling every node to
 *    apply the records (the admission fence), to catch what arrived after
 *    the main walk passed: writes a node accepted before it learned of the
 *    decommission, multipart uploads completed on the pool. The drain
 *    completes only after a sweep that found the pool empty, with every
 *    drive of the pool online from its start to its end (a drive that was
 *    away may hold keys the others do not list), and no upload open on it.
 *    Open uploads (they may finish while the entry is not terminal) and
 *    offline drives are waited for up to a grace period, re-sweeping; after
 *    it the drain fails and says why. A sweep that finds keys it cannot
 *    move fails the drain.
 *
 * Progress (counters, buckets done, the last key moved, the pool's free
 * space) is persisted in `pool.bin` while it runs and when it ends; the
 * entry's state changes only while it is `active` (a cancel wins).
 */
import { poolCapacity } from '../../object/capacity.ts';
import type { Pool } from '../../object/pools.ts';
import { type DecommissionEntry, withPoolEntries } from '../../object/records/pool-meta.ts';
import { sleepUnlessAborted, type WorkerStatus, type WorkerTask, type WorkResult } from '../../util/worker.ts';
import { errorMessage, isUnresolved, type MovementContext } from './context.ts';
import { BucketCursor, type PoolEntry } from './cursor.ts';
import { TargetChooser } from './targets.ts';

/** Sweeps that still find keys before the drain gives up (the pool kept receiving objects). */
const MAX_SWEEPS = 10;
/** Time budget of one worker step. */
const STEP_MS = 2_000;

export interface DrainOptions {
  readonly ctx: MovementContext;
  readonly pool: Pool;
  readonly bucketConcurrency: number;
  readonly entryConcurrency: number;
  /** Attempts per key before it counts as failed (default 3). */
  readonly attempts?: number;
  /** How long open multipart uploads (or offline drives of the pool) are waited for after the walk (default 15 min). */
  readonly uploadGraceMs?: number;
  /** Pause between the sweeps that wait for them (default 5 s). */
  readonly uploadPollMs?: number;
  /** Tells every other node to apply the records now; resolves with the nodes that did not acknowledge. */
  fence(): Promise<string[]>;
}

export interface DrainProgress {
  phase: 'starting' | 'walking' | 'sweeping' | 'waiting-for-uploads' | 'waiting-for-drives' | 'done';
  objects: number;
  bytes: number;
  failedObjects: number;
  failedBytes: number;
  bucket: string;
  object: string;
  openUploads: number;
}

interface Round {
  sweep: boolean;
  /** Every drive of the pool was online when the round started. */
  allOnline: boolean;
  queue: string[];
  active: BucketCursor[];
  seen: number;
  moved: number;
  failed: number;
  unresolved: number;
}

type Outcome = { state: 'completed' } | { state: 'failed'; error: string; unresolved: number };

function sizeOf(e: PoolEntry): number {
  let size = 0;
  for (const m of e.metas) if (m.ok) for (const v of m.versions) size = Math.max(size, v.size);
  return size;
}

export class DrainTask implements WorkerTask<DrainProgress> {
  readonly name: string;
  readonly #o: DrainOptions;
  readonly #chooser: TargetChooser;
  #phase: DrainProgress['phase'] = 'starting';
  #round: Round | undefined;
  /** Sweeps that still found keys. */
  #busySweeps = 0;
  #waitSince = 0;
  #waitingFor: 'waiting-for-uploads' | 'waiting-for-drives' | undefined;
  #openUploads = 0;
  #outcome: Outcome | undefined;
  /** The entry left `active` behind this task's back (canceled, cleared): stop without touching it. */
  #gone = false;
  #queued: string[] = [];
  #done: string[] = [];
  #objects = 0;
  #bytes = 0;
  #failedObjects = 0;
  #failedBytes = 0;
  #bucket = '';
  #object = '';
  #lastError: string | null = null;
  /** Keys whose move failed (`bucket/key` → bytes), counted once however many rounds retry them. */
  readonly #failedKeys = new Map<string, number>();

  constructor(o: DrainOptions) {
    this.#o = o;
    this.name = `decommission pool ${o.pool.index}`;
    this.#chooser = new TargetChooser({
      capacity: () => o.ctx.layer.capacity(),
      clock: o.ctx.clock,
      eligible: (p) => p !== o.pool && o.ctx.layer.movement.pools.admits(p.index),
    });
  }

  get pool(): Pool {
    return this.#o.pool;
  }

  /** True once the entry was found no longer active (canceled or cleared elsewhere). */
  get gone(): boolean {
    return this.#gone;
  }

  progress(): DrainProgress {
    return {
      phase: this.#phase,
      objects: this.#objects,
      bytes: this.#bytes,
      failedObjects: this.#failedObjects,
      failedBytes: this.#failedBytes,
      bucket: this.#bucket,
      object: this.#object,
      openUploads: this.#openUploads,
    };
  }

  /** Read-modify-write of this pool's entry under pool.bin's lock; `fn` sees it only while it is active (or queued, for the start). */
  async #update(fn: (e: DecommissionEntry) => DecommissionEntry | undefined): Promise<DecommissionEntry | undefined> {
    const { ctx, pool } = this.#o;
    let result: DecommissionEntry | undefined;
    await ctx.records.updatePoolMeta((meta) => {
      const e = meta?.pools.find((p) => p.cmdline === pool.cmdline)?.decommission;
      if (e === undefined || e === null || (e.state !== 'active' && e.state !== 'queued')) {
        this.#gone = true;
        return undefined;
      }
      const next = fn(e);
      if (next === undefined) return undefined;
      result = next;
      return withPoolEntries(meta, [{ id: pool.index, cmdline: pool.cmdline, lastUpdate: ctx.clock.now(), decommission: next }]);
    });
    return result;
  }

  async #begin(): Promise<void> {
    const { ctx, pool } = this.#o;
    const [cap, buckets] = await Promise.all([poolCapacity(pool), ctx.layer.listBuckets()]);
    const names = buckets.map((b) => b.name);
    const now = ctx.clock.now();
    let resumed = false;
    const e = await this.#update((cur) => {
      resumed = cur.state === 'active';
      if (cur.state === 'queued') {
        return { ...cur, state: 'active', startTime: now, startSize: cap.usableFree, totalSize: cap.usableTotal, currentSize: cap.usableFree, queuedBuckets: names, decommissionedBuckets: [], lastError: null, unresolvedEntries: 0 };
      }
      // Resuming: buckets made since the start join the queue.
      const known = new Set([...cur.queuedBuckets, ...cur.decommissionedBuckets]);
      return { ...cur, queuedBuckets: [...cur.queuedBuckets, ...names.filter((n) => !known.has(n))] };
    });
    if (e === undefined) return;
    this.#objects = e.objectsDecommissioned;
    this.#bytes = e.bytesDecommissioned;
    this.#failedObjects = e.objectsDecommissionedFailed;
    this.#failedBytes = e.bytesDecommissionedFailed;
    this.#queued = [...e.queuedBuckets];
    this.#done = [...e.decommissionedBuckets];
    this.#lastError = e.lastError;
    ctx.logger.info({ event: 'decommission_active', pool: pool.index, cmdline: pool.cmdline, buckets: this.#queued.length, resumed }, `decommission of pool ${pool.index} is moving data`);
    this.#phase = 'walking';
    this.#round = this.#newRound(false, this.#queued);
  }

  #newRound(sweep: boolean, buckets: readonly string[], allOnline = false): Round {
    return { sweep, allOnline, queue: [...buckets], active: [], seen: 0, moved: 0, failed: 0, unresolved: 0 };
  }

  /** Endpoints of the pool's drives that are offline now (measured). */
  async #offlineDrives(): Promise<string[]> {
    const drives = this.#o.pool.sets.flatMap((s) => s.drives);
    await Promise.allSettled(drives.map((d) => d.diskInfo()));
    return drives.filter((d) => !d.isOnline()).map((d) => d.endpoint);
  }

  async #handle(round: Round, bucket: string, e: PoolEntry, signal: AbortSignal): Promise<void> {
    const { ctx, pool } = this.#o;
    const attempts = this.#o.attempts ?? 3;
    let last: unknown;
    for (let a = 1; a <= attempts && !signal.aborted; a++) {
      try {
        const r = await ctx.layer.movement.mover.move(bucket, e.name, pool, this.#chooser.choose);
        this.#bytes += r.bytes;
        if (r.cleanupError === undefined) {
          this.#forgive(`${bucket}/${e.name}`);
          if (r.found) {
            round.seen++;
            this.#objects++;
            round.moved++;
            this.#bucket = bucket;
            this.#object = e.name;
          } else if (e.metas.some((m) => !m.ok && m.error !== undefined)) {
            // Nothing decodable at all: garbage no quorum can bring back.
            ctx.logger.warn({ event: 'decommission_unreadable_entry', pool: pool.index, bucket, object: e.name }, 'an entry on the decommissioning pool has no readable journal on any drive; it is left behind');
          }
          return;
        }
        last = r.cleanupError;
      } catch (err) {
        last = err;
      }
      await sleepUnlessAborted(ctx.clock, 250 * a, signal);
    }
    // A stopped worker leaves the key for the resumed drain: not a failure.
    if (signal.aborted) return;
    round.seen++;
    round.failed++;
    if (isUnresolved(last)) round.unresolved++;
    const id = `${bucket}/${e.name}`;
    if (!this.#failedKeys.has(id)) {
      const size = sizeOf(e);
      this.#failedKeys.set(id, size);
      this.#failedObjects++;
      this.#failedBytes += size;
    }
    this.#lastError = `${bucket}/${e.name}: ${errorMessage(last)}`;
    ctx.logger.warn({ event: 'decommission_object_failed', pool: pool.index, bucket, object: e.name, err: last }, 'an object could not be moved off the decommissioning pool');
  }

  /** A key that failed in an earlier round moved after all: it no longer counts as failed. */
  #forgive(id: string): void {
    const size = this.#failedKeys.get(id);
    if (size === undefined) return;
    this.#failedKeys.delete(id);
    this.#failedObjects = Math.max(0, this.#failedObjects - 1);
    this.#failedBytes = Math.max(0, this.#failedBytes - size);
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    if (this.#gone || this.#outcome !== undefined) return 'done';
    if (this.#phase === 'starting') {
      await this.#begin();
      return this.#gone ? 'done' : 'busy';
    }
    // After a wait (uploads, drives): sweep again, which checks everything anew.
    if (this.#phase === 'waiting-for-uploads' || this.#phase === 'waiting-for-drives') return this.#startSweep();
    const round = this.#round!;
    const b = Math.max(1, this.#o.bucketConcurrency);
    while (round.active.length < b && round.queue.length > 0) round.active.push(new BucketCursor(this.#o.pool, round.queue.shift()!, this.#o.ctx.clock));
    if (round.active.length === 0) return this.#endRound(round);
    const e = Math.max(1, this.#o.entryConcurrency);
    const deadline = this.#o.ctx.clock.now() + STEP_MS;
    await Promise.all(
      round.active.map((c) => c.step({ window: e, max: e * 8, deadline, signal, handle: (entry) => this.#handle(round, c.bucket, entry, signal) })),
    );
    for (const c of round.active.filter((x) => x.done)) {
      if (!round.sweep) {
        this.#queued = this.#queued.filter((n) => n !== c.bucket);
        if (!this.#done.includes(c.bucket)) this.#done.push(c.bucket);
      }
    }
    round.active = round.active.filter((x) => !x.done);
    return 'busy';
  }

  async #startSweep(): Promise<WorkResult> {
    const { ctx, pool } = this.#o;
    const failedPeers = await this.#o.fence();
    if (failedPeers.length > 0) ctx.logger.warn({ event: 'decommission_fence_unacknowledged', pool: pool.index, peers: failedPeers }, 'some nodes did not acknowledge the decommission fence; they apply it from pool.bin within seconds');
    const buckets = (await ctx.layer.listBuckets()).map((x) => x.name);
    const allOnline = (await this.#offlineDrives()).length === 0;
    this.#phase = 'sweeping';
    this.#round = this.#newRound(true, buckets, allOnline);
    return 'busy';
  }

  async #endRound(round: Round): Promise<WorkResult> {
    if (!round.sweep) return this.#startSweep();
    if (round.failed > 0) {
      return this.#finish({ state: 'failed', error: `${round.failed} object(s) could not be moved off the pool${round.unresolved > 0 ? ` (${round.unresolved} below read quorum)` : ''}; last: ${this.#lastError ?? 'unknown'}`, unresolved: round.unresolved });
    }
    if (round.seen > 0) {
      this.#waitingFor = undefined;
      if (++this.#busySweeps >= MAX_SWEEPS) return this.#finish({ state: 'failed', error: `the pool still received objects after ${MAX_SWEEPS} sweeps; check that every node runs this build`, unresolved: 0 });
      return this.#startSweep();
    }
    const offline = await this.#offlineDrives();
    if (!round.allOnline || offline.length > 0) {
      return this.#wait('waiting-for-drives', `drive(s) of the pool were offline during the last sweep (${offline.join(', ') || 'since back'}): the pool cannot be shown empty until every drive walked it; bring them back online`);
    }
    this.#openUploads = await this.#o.ctx.layer.movement.openUploads(this.#o.pool);
    if (this.#openUploads > 0) {
      return this.#wait('waiting-for-uploads', `${this.#openUploads} multipart upload(s) are still open on the pool; complete or abort them (ListMultipartUploads), then clear and start the decommission again`);
    }
    return this.#finish({ state: 'completed' });
  }

  /** Waits (idle, then sweeps again) for uploads to finish or drives to return; fails after the grace period. */
  #wait(phase: 'waiting-for-uploads' | 'waiting-for-drives', why: string): WorkResult {
    const { ctx, pool } = this.#o;
    const now = ctx.clock.now();
    if (this.#waitingFor !== phase) {
      this.#waitingFor = phase;
      this.#waitSince = now;
      ctx.logger.info({ event: `decommission_${phase.replaceAll('-', '_')}`, pool: pool.index, why }, `decommission of pool ${pool.index} is ${phase.replaceAll('-', ' ')}`);
    }
    if (now - this.#waitSince >= (this.#o.uploadGraceMs ?? 15 * 60_000)) return this.#finish({ state: 'failed', error: why, unresolved: 0 });
    this.#phase = phase;
    // Shown in the status while it waits.
    this.#lastError = `waiting: ${why}`;
    return 'idle';
  }

  #finish(outcome: Outcome): WorkResult {
    this.#outcome = outcome;
    this.#phase = 'done';
    return 'done';
  }

  waitForWork(signal: AbortSignal): Promise<void> {
    return sleepUnlessAborted(this.#o.ctx.clock, this.#o.uploadPollMs ?? 5_000, signal);
  }

  async persist(status: WorkerStatus<DrainProgress>): Promise<void> {
    const { ctx, pool } = this.#o;
    if (this.#gone) return;
    const cap = await poolCapacity(pool).catch(() => undefined);
    const now = ctx.clock.now();
    const outcome: Outcome | undefined =
      status.state === 'failed' ? { state: 'failed', error: status.lastError ?? 'the drain failed', unresolved: 0 } : status.state === 'completed' ? this.#outcome : undefined;
    await this.#update((e) => {
      if (e.state !== 'active') return undefined;
      const next: DecommissionEntry = {
        ...e,
        objectsDecommissioned: this.#objects,
        objectsDecommissionedFailed: this.#failedObjects,
        bytesDecommissioned: this.#bytes,
        bytesDecommissionedFailed: this.#failedBytes,
        queuedBuckets: [...this.#queued],
        decommissionedBuckets: [...this.#done],
        bucket: this.#bucket,
        object: this.#object,
        currentSize: cap?.usableFree ?? e.currentSize,
        lastError: this.#lastError,
      };
      if (outcome === undefined) return next;
      // Completed means the last sweep found the pool empty: whatever failed on the way was moved after all.
      if (outcome.state === 'completed') {
        return { ...next, state: 'completed', endTime: now, queuedBuckets: [], lastError: null, unresolvedEntries: 0, objectsDecommissionedFailed: 0, bytesDecommissionedFailed: 0 };
      }
      return { ...next, state: 'failed', endTime: now, lastError: outcome.error, unresolvedEntries: outcome.unresolved };
    });
    if (outcome !== undefined && !this.#gone) {
      const log = outcome.state === 'completed' ? ctx.logger.info.bind(ctx.logger) : ctx.logger.error.bind(ctx.logger);
      log(
        { event: `decommission_${outcome.state}`, pool: pool.index, cmdline: pool.cmdline, objects: this.#objects, bytes: this.#bytes, failed: this.#failedObjects, ...(outcome.state === 'failed' ? { error: outcome.error } : {}) },
        outcome.state === 'completed' ? `decommission of pool ${pool.index} completed: it may now be removed from the launch command` : `decommission of pool ${pool.index} failed: ${outcome.error}`,
      );
    }
  }

  /** Releases the walks (after the worker stopped). */
  async close(): Promise<void> {
    await Promise.all((this.#round?.active ?? []).map((c) => c.close()));
  }
}

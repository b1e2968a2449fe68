/**
 * One admin heal sequence (`POST /svc/admin/v3/heal/[bucket[/prefix]]`): a
 * Worker task that walks what the request names and heals it with the
 * engine, one object per step.
 *
 * - Root heal (`/heal/`): with `pool` and `set`, the set's drive formats
 *   first (a replaced drive gets its format in its original slot), then the
 *   `.svc.sys` records, then every bucket (volumes and record) and every
 *   object of every bucket, limited to the named pool and set.
 * - Bucket heal: the bucket, then every object in it (always recursive).
 * - Prefix heal: recursive, the bucket and every object under the prefix;
 *   not recursive, exactly the object the prefix names.
 *
 * Results are queued as `HealResultItem`s for status calls, which pop them
 * (each call returns the items since the previous one). Objects found
 * healthy only count in the progress; everything else (healed, refused,
 * dangling, failed, dry-run findings) is an item, and a single-object heal
 * always answers its item. At most 1000 items wait: while they are not
 * consumed the sequence pauses, and after 24 h unconsumed it stops.
 *
 * The walk position (`cursor`) is plain data: a root heal stopped by a
 * graceful shutdown is persisted (`root-heal-<id>.json` under `.svc.sys`)
 * and resumes from it on the next start.
 */
import type { HealOpts, HealProgress, HealResultItem, HealTaskStatus } from '../../object/admin/types.ts';
import { nanos, rfc3339 } from '../../object/admin/types.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import { walkSet } from '../../object/namespace-walk.ts';
import { sleepUnlessAborted, Worker, type WorkerStatus, type WorkResult } from '../../util/worker.ts';
import type { Healer } from './healer.ts';
import type { HealResult } from './types.ts';

/** Formats replaced drives of a set into their slots (the drive healer). */
export interface SetFormatHealer {
  healSetFormat(pool: number, set: number, opts: { dryRun: boolean; healer: string }): Promise<HealResult | undefined>;
  /** The set heal that formatted drives of `pool`/`set` finished walking it. */
  setHealed(pool: number, set: number, healer: string, progress: { objects: number; healed: number; bytes: number; ok: boolean }): Promise<void>;
  /** The set heal is walking: keep the replaced drives' trackers fresh. */
  setProgress(pool: number, set: number, healer: string, progress: { objects: number; healed: number; bytes: number }): Promise<void>;
  /** The set heal ended without finishing its walk (stopped, failed). */
  abandoned(healer: string): void;
}

export const MAX_UNCONSUMED = 1000;
const UNCONSUMED_LIMIT_MS = 24 * 3600_000;

export interface SequenceScope {
  bucket: string;
  prefix: string;
  opts: HealOpts;
}

export interface SequenceCursor {
  stage: 'format' | 'meta' | 'buckets' | 'done';
  /** The buckets to walk (root heal: listed when the stage starts). */
  buckets?: string[];
  bucketIndex: number;
  /** The current bucket's own heal (volumes, record) is done. */
  bucketDone: boolean;
  /** Index into the sets in scope. */
  setIndex: number;
  /** Last object healed in the current set (resume after it). */
  marker?: string;
}

export interface SequenceState {
  id: string;
  token: string;
  scope: SequenceScope;
  clientAddress: string;
  /** Unix ms. */
  startTime: number;
  cursor: SequenceCursor;
  progress: Omit<HealProgress, 'itemsQueued' | 'elapsed'> & { elapsedMs: number };
}

export interface SequenceDeps {
  healer: Healer;
  formats?: SetFormatHealer | undefined;
  clock: Clock;
  logger: Logger;
  tranquility: number;
  /** Persists a root heal stopped by shutdown; removes the record when the heal ends otherwise. */
  persist?: (seq: HealSequence, keep: boolean) => Promise<void>;
  /** Results held for status calls before the walk pauses (default `MAX_UNCONSUMED`). */
  maxUnconsumed?: number;
  /** Objects healed at once (one Worker step). */
  concurrency: number;
  /** The heal metrics' `type` of the objects it heals: `object` (admin heals) or `drive` (a replaced drive's rebuild). */
  objectTaskType?: 'object' | 'drive';
}

export function scopePath(s: { bucket: string; prefix: string }): string {
  return s.prefix === '' ? s.bucket : `${s.bucket}/${s.prefix}`;
}

function newProgress(): SequenceState['progress'] {
  return {
    objectsScanned: 0,
    objectsHealed: 0,
    objectsFailed: 0,
    objectsRefused: 0,
    objectsDangling: 0,
    bucketsScanned: 0,
    bytesHealed: 0,
    currentBucket: '',
    currentObject: '',
    elapsedMs: 0,
  };
}

export class HealSequence {
  readonly id: string;
  readonly token: string;
  readonly scope: SequenceScope;
  readonly clientAddress: string;
  readonly startTime: number;
  readonly worker: Worker<HealProgress>;
  readonly #deps: SequenceDeps;
  readonly #cursor: SequenceCursor;
  readonly #progress: SequenceState['progress'];
  #items: HealResultItem[] = [];
  #nextResultId = 1;
  #gen: AsyncGenerator<void> | undefined;
  #runStart = 0;
  #lastConsumed: number;
  #consumed: (() => void) | undefined;
  #stoppedByUser = false;
  #shuttingDown = false;
  #detail: string | undefined;
  endedAt: number | undefined;

  constructor(deps: SequenceDeps, state: Omit<SequenceState, 'cursor' | 'progress'> & Partial<Pick<SequenceState, 'cursor' | 'progress'>>) {
    this.#deps = deps;
    this.id = state.id;
    this.token = state.token;
    this.scope = state.scope;
    this.clientAddress = state.clientAddress;
    this.startTime = state.startTime;
    this.#cursor = state.cursor ?? { stage: state.scope.bucket === '' ? 'format' : 'buckets', bucketIndex: 0, bucketDone: false, setIndex: 0 };
    this.#progress = state.progress ?? newProgress();
    this.#lastConsumed = deps.clock.now();
    this.worker = new Worker<HealProgress>(
      {
        name: 'heal',
        work: (signal) => this.#work(signal),
        waitForWork: (signal) => this.#waitForConsumer(signal),
        progress: () => this.progress(),
        persist: (st) => this.#persist(st),
      },
      { clock: deps.clock, logger: deps.logger, tranquility: deps.tranquility, idleMs: 1_000, persistEveryMs: 5_000 },
    );
  }

  get path(): string {
    return scopePath(this.scope);
  }

  /** A root heal (of the whole cluster or of one set): persisted at shutdown. */
  get root(): boolean {
    return this.scope.bucket === '';
  }

  get ended(): boolean {
    const st = this.worker.state;
    return this.endedAt !== undefined || st === 'stopped' || st === 'completed' || st === 'failed';
  }

  get hasItems(): boolean {
    return this.#items.length > 0;
  }

  progress(): HealProgress {
    const { elapsedMs, ...rest } = this.#progress;
    const running = this.#runStart > 0 && this.endedAt === undefined ? this.#deps.clock.now() - this.#runStart : 0;
    return { ...rest, itemsQueued: this.#items.length, elapsed: nanos(elapsedMs + running) };
  }

  state(): SequenceState {
    const { itemsQueued: _q, elapsed, ...p } = this.progress();
    return {
      id: this.id,
      token: this.token,
      scope: this.scope,
      clientAddress: this.clientAddress,
      startTime: this.startTime,
      cursor: structuredClone(this.#cursor),
      progress: { ...p, elapsedMs: Math.round(elapsed / 1_000_000) },
    };
  }

  start(): void {
    this.#runStart = this.#deps.clock.now();
    this.worker.start();
    void this.worker.done().then(async (st) => {
      this.#progress.elapsedMs += this.#deps.clock.now() - this.#runStart;
      this.endedAt = this.#deps.clock.now();
      if (st.state === 'failed') this.#detail = st.lastError;
      if (st.state !== 'completed') this.#deps.formats?.abandoned(this.token);
      await this.#gen?.return(undefined).catch(() => undefined);
    });
  }

  /** Stops the walk: `user` (forceStop) ends it for good; otherwise (shutdown) a root heal is kept to resume. */
  async stop(user: boolean): Promise<void> {
    this.#stoppedByUser ||= user;
    this.#shuttingDown ||= !user;
    await this.worker.stop();
  }

  /** `HealTaskStatus`, popping the items waiting. */
  status(): HealTaskStatus {
    const items = this.#items.splice(0);
    this.#lastConsumed = this.#deps.clock.now();
    this.#consumed?.();
    const st = this.worker.state;
    const summary: HealTaskStatus['Summary'] =
      st === 'completed' ? 'finished' : st === 'stopped' || st === 'failed' ? 'stopped' : st === 'stopping' ? 'stopped' : 'running';
    const detail = this.#detail ?? (this.#stoppedByUser ? 'stopped by the client (forceStop)' : undefined);
    return {
      Summary: summary,
      // madmin's `detail` is not omitempty: empty while there is nothing to say
      Detail: detail ?? '',
      StartTime: rfc3339(this.startTime),
      Settings: this.scope.opts,
      Items: items.length > 0 ? items : null,
      ClientToken: this.token,
      Path: this.path,
      Progress: this.progress(),
    };
  }

  #push(r: HealResult, always = false): void {
    const p = this.#progress;
    if (r.type === 'object' || r.type === 'metadata') {
      if (r.outcome === 'healed' || r.outcome === 'removed') p.objectsHealed++;
      if (r.outcome === 'failed') p.objectsFailed++;
      if (r.outcome === 'refused') p.objectsRefused++;
      if (r.outcome === 'dangling') p.objectsDangling++;
    }
    p.bytesHealed += r.bytesHealed;
    if (!always && (r.outcome === 'ok' || r.outcome === 'absent')) return;
    this.#items.push({
      resultId: this.#nextResultId++,
      type: r.type,
      bucket: r.bucket,
      object: r.object,
      versionId: r.versionId,
      detail: r.detail,
      parityBlocks: r.parityBlocks,
      dataBlocks: r.dataBlocks,
      diskCount: r.diskCount,
      setCount: r.setCount,
      before: { drives: r.before },
      after: { drives: r.after },
      objectSize: r.objectSize,
      outcome: r.outcome,
      pool: r.pool,
      set: r.set,
      bytesHealed: r.bytesHealed,
    });
  }

  async #waitForConsumer(signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#consumed = resolve;
      void sleepUnlessAborted(this.#deps.clock, 1_000, signal).then(resolve);
    });
    this.#consumed = undefined;
  }

  async #work(signal: AbortSignal): Promise<WorkResult> {
    const cap = this.#deps.maxUnconsumed ?? MAX_UNCONSUMED;
    if (this.#items.length >= cap) {
      if (this.#deps.clock.now() - this.#lastConsumed > UNCONSUMED_LIMIT_MS) {
        this.#detail = `stopped: ${cap} results were not collected by a status call for 24 hours`;
        return 'done';
      }
      return 'idle';
    }
    this.#gen ??= this.#run(signal);
    const r = await this.#gen.next();
    return r.done ? 'done' : 'busy';
  }

  /** The sets the scope names, in order. */
  #sets(): { pool: number; set: number }[] {
    const { opts } = this.scope;
    return this.#deps.healer.pools.list.flatMap((p) =>
      opts.pool !== undefined && p.index !== opts.pool ? [] : p.sets.flatMap((s) => (opts.set !== undefined && s.index !== opts.set ? [] : [{ pool: p.index, set: s.index }])),
    );
  }

  async *#run(signal: AbortSignal): AsyncGenerator<void> {
    const h = this.#deps.healer;
    const { bucket, prefix, opts } = this.scope;
    // An operator's remove=true also takes versions whose data is lost (background heal never does).
    const obj = { dryRun: opts.dryRun, remove: opts.remove, removeLost: opts.remove, deep: opts.scanMode === 2 };
    const c = this.#cursor;
    const p = this.#progress;
    const now = () => this.#deps.clock.now();

    if (bucket !== '' && prefix !== '' && !opts.recursive) {
      p.currentBucket = bucket;
      p.currentObject = prefix;
      const r = await h.task('object', 0, 0, now(), () => h.healObjectAnywhere(bucket, prefix, obj));
      p.objectsScanned++;
      this.#push(r, true);
      c.stage = 'done';
      return;
    }
    const sets = this.#sets();
    const setScoped = opts.pool !== undefined && opts.set !== undefined;

    if (c.stage === 'format') {
      if (setScoped && this.#deps.formats) {
        for (const s of sets) {
          const formats = this.#deps.formats;
          const r = await h.task('format', s.pool, s.set, now(), () => formats.healSetFormat(s.pool, s.set, { dryRun: opts.dryRun, healer: this.token }));
          if (r !== undefined) this.#push(r);
        }
        yield;
      }
      c.stage = bucket === '' ? 'meta' : 'buckets';
    }
    if (c.stage === 'meta') {
      p.currentBucket = '.svc.sys';
      await h.healSysRecords(
        { dryRun: opts.dryRun, deep: obj.deep, only: (pool, set) => sets.some((s) => s.pool === pool && s.set === set) },
        (r) => {
          p.objectsScanned++;
          this.#push(r);
        },
        signal,
      );
      if (signal.aborted) return;
      c.stage = 'buckets';
      yield;
    }
    if (c.stage === 'buckets') {
      c.buckets ??= bucket !== '' ? [bucket] : await h.buckets();
      const buckets = c.buckets;
      for (; c.bucketIndex < buckets.length; c.bucketIndex++, c.bucketDone = false, c.setIndex = 0, delete c.marker) {
        const b = buckets[c.bucketIndex]!;
        p.currentBucket = b;
        p.currentObject = '';
        if (!c.bucketDone) {
          const r = await h.task('bucket', sets[0]?.pool ?? 0, sets[0]?.set ?? 0, now(), () => h.healBucket(b, { dryRun: opts.dryRun, remove: opts.remove, recreate: opts.recreate, deep: obj.deep }));
          p.bucketsScanned++;
          this.#push(r);
          c.bucketDone = true;
          yield;
          if (r.outcome === 'absent' || r.outcome === 'removed' || (r.outcome === 'dangling' && !opts.recreate)) continue;
        }
        for (; c.setIndex < sets.length; c.setIndex++, delete c.marker) {
          const { pool, set: si } = sets[c.setIndex]!;
          const set = h.pools.list[pool]!.sets[si]!;
          // Objects are healed `concurrency` at a time (one Worker step per batch):
          // per-object latency (fsyncs, lock round trips) overlaps.
          let batch: string[] = [];
          const flush = async () => {
            const names = batch;
            batch = [];
            const rs = await Promise.all(
              names.map((name) =>
                h.task(this.#deps.objectTaskType ?? 'object', pool, si, now(), () => h.healInSet(set, b, name, obj).catch((err: unknown) => h.failure(set, b, name, err))),
              ),
            );
            for (const r of rs) {
              p.objectsScanned++;
              this.#push(r);
            }
            c.marker = names[names.length - 1]!;
            p.currentObject = c.marker;
            if (setScoped) await this.#deps.formats?.setProgress(pool, si, this.token, { objects: p.objectsScanned, healed: p.objectsHealed, bytes: p.bytesHealed });
          };
          for await (const e of walkSet(set, b, { prefix, ...(c.marker !== undefined ? { marker: c.marker } : {}) })) {
            if (signal.aborted) return;
            batch.push(e.name);
            if (batch.length < this.#deps.concurrency) continue;
            await flush();
            yield;
          }
          if (batch.length > 0) {
            await flush();
            yield;
          }
        }
      }
      c.stage = 'done';
    }
    if (setScoped && !opts.dryRun) {
      for (const s of sets) {
        await this.#deps.formats?.setHealed(s.pool, s.set, this.token, {
          objects: p.objectsScanned,
          healed: p.objectsHealed,
          bytes: p.bytesHealed,
          ok: p.objectsFailed === 0 && p.objectsRefused === 0,
        });
      }
    }
  }

  async #persist(st: WorkerStatus<HealProgress>): Promise<void> {
    if (!this.root || this.#deps.persist === undefined) return;
    const ended = st.state === 'completed' || st.state === 'failed' || st.state === 'stopped';
    if (!ended) return;
    await this.#deps.persist(this, st.state === 'stopped' && this.#shuttingDown && !this.#stoppedByUser);
  }
}

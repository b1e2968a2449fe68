/**
 * A resumable walk over the keys one pool holds in one bucket (every set of
 * the pool merged in key order, each key with every drive's journal:
 * `namespace-walk.ts`), handing each key to a handler with up to `window`
 * keys in flight. `step` does a bounded slice (a number of keys or a time
 * budget) and returns with nothing in flight, so a worker step ends at a
 * clean point: every key handed out before it is finished, and `last` is
 * where a new walk resumes.
 *
 * A walk that fails is reopened after `last` a few times before the error
 * is passed on. A drive that drops out does not fail the walk (the other
 * drives of its set still list every committed key while fewer than a
 * majority are out); a drain checks that its pool's drives were all online
 * for the walk that proves the pool empty (`drain.ts`).
 */
import type { Clock } from '../../util/clock.ts';
import type { ErasureSet } from '../../object/erasure-set.ts';
import { mergeSorted } from '../../object/list-merge.ts';
import { type NamespaceEntry, walkSet } from '../../object/namespace-walk.ts';
import type { Pool } from '../../object/pools.ts';
import { sleepUnlessAborted } from '../../util/worker.ts';

/** A key of a pool with every drive's view of it (from its set). */
export interface PoolEntry extends NamespaceEntry {
  readonly set: ErasureSet;
}

/** The keys of `bucket` on every set of `pool`, merged in key order. */
export async function* walkPool(pool: Pool, bucket: string, marker?: string): AsyncGenerator<PoolEntry> {
  const opts = marker === undefined || marker === '' ? {} : { marker };
  const perSet = pool.sets.map(async function* (set): AsyncGenerator<PoolEntry> {
    for await (const e of walkSet(set, bucket, opts)) yield { ...e, set };
  });
  for await (const g of mergeSorted(perSet)) for (const { item } of g.items) yield item;
}

const REOPEN_ATTEMPTS = 3;

export interface CursorStep {
  /** Keys in flight at most. */
  window: number;
  /** Keys handed out at most in this step. */
  max: number;
  /** Clock time after which no new key is handed out. */
  deadline: number;
  /** Checked before each key is handed out: true ends the step early. */
  enough?: () => boolean;
  signal: AbortSignal;
  /** Must not throw: failures are the handler's to count. */
  handle(entry: PoolEntry): Promise<void>;
}

export class BucketCursor {
  readonly bucket: string;
  readonly #pool: Pool;
  readonly #clock: Clock;
  #it: AsyncIterator<PoolEntry> | undefined;
  #reopens = 0;
  /** Last key handed out (walks resume after it). */
  last: string;
  done = false;

  constructor(pool: Pool, bucket: string, clock: Clock, after = '') {
    this.#pool = pool;
    this.bucket = bucket;
    this.#clock = clock;
    this.last = after;
  }

  async #next(signal: AbortSignal): Promise<PoolEntry | undefined> {
    for (;;) {
      this.#it ??= walkPool(this.#pool, this.bucket, this.last)[Symbol.asyncIterator]();
      try {
        const r = await this.#it.next();
        if (r.done) return undefined;
        this.#reopens = 0;
        return r.value;
      } catch (err) {
        this.#it = undefined;
        if (++this.#reopens > REOPEN_ATTEMPTS || signal.aborted) throw err;
        await sleepUnlessAborted(this.#clock, 500 * this.#reopens, signal);
      }
    }
  }

  /** Hands out keys until the step's bound; resolves with how many, once all of them finished. */
  async step(s: CursorStep): Promise<number> {
    const inflight = new Set<Promise<void>>();
    let n = 0;
    try {
      while (!this.done && n < s.max && !s.signal.aborted && this.#clock.now() < s.deadline && !(s.enough?.() ?? false)) {
        if (inflight.size >= s.window) {
          await Promise.race(inflight);
          continue;
        }
        const e = await this.#next(s.signal);
        if (e === undefined) {
          this.done = true;
          break;
        }
        n++;
        this.last = e.name;
        const p: Promise<void> = s.handle(e).finally(() => inflight.delete(p));
        inflight.add(p);
      }
    } finally {
      await Promise.all(inflight);
    }
    return n;
  }

  /** Releases the walk (a stopped worker). */
  async close(): Promise<void> {
    const it = this.#it;
    this.#it = undefined;
    await it?.return?.(undefined);
  }
}

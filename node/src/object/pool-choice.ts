/**
 * Where a new version goes: the pool already holding its key, else the
 * admitting pool with the most free space that holds the bucket (see
 * `placement.ts` for the pure ranking), and how much of it is inlined in
 * its metadata.
 */
import { hasCode, SvcError } from '../util/errors.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { BucketSync } from './bucket-sync.ts';
import { poolCapacity } from './capacity.ts';
import { rankPools } from './placement.ts';
import { pickNewest, type Pool, type PoolLookup, type Pools } from './pools.ts';

const FREE_SPACE_TTL_MS = 1_000;
const DEFAULT_INLINE_TOTAL = 256 * 1024;
const MAX_INLINE_SHARD = 128 * 1024;

export interface PoolChoiceOptions {
  pools: Pools;
  bucketSync: BucketSync;
  clock: Clock;
  logger: Logger;
  /** Fixed per-shard inline limit (SVC_STORAGE_CLASS_INLINE_BLOCK); replaces the scaled default. */
  inlineBlock?: number;
}

export class PoolChoice {
  readonly #pools: Pools;
  readonly #sync: BucketSync;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #inlineBlock: number | undefined;
  readonly #free = new Map<number, { at: number; free: number }>();

  constructor(opts: PoolChoiceOptions) {
    this.#pools = opts.pools;
    this.#sync = opts.bucketSync;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#inlineBlock = opts.inlineBlock;
  }

  /** Per-shard inline budget: 256 KiB / K capped at 128 KiB, /8 on versioned buckets; a configured block replaces it. */
  inlineBudget(k: number, versioned: boolean): number {
    if (this.#inlineBlock !== undefined) return this.#inlineBlock;
    const b = Math.min(Math.floor(DEFAULT_INLINE_TOTAL / k), MAX_INLINE_SHARD);
    return versioned ? Math.floor(b / 8) : b;
  }

  /**
   * Pool for a new object of `bucket`: the admitting pool with the most free
   * space that holds the bucket. A pool seen lacking the bucket's volume
   * (`found`: the lookup of the key on every pool, or the bucket sync's last
   * pass) gets it first (`BucketSync.ensure`); when that fails the next pool
   * is tried, and with none left the first pool's `XSvcBucketNotOnPool`
   * names the pool and why.
   */
  async forNew(bucket: string, found?: readonly PoolLookup[]): Promise<Pool> {
    const open = this.#pools.list.filter((p) => this.#pools.admits(p.index));
    if (open.length === 0) throw new SvcError('SlowDown', 'no pool takes new objects; retry later');
    let ranked = open;
    if (open.length > 1) {
      const caps = await Promise.all(open.map((p) => this.#freeOf(p)));
      ranked = rankPools(
        caps,
        caps.map(() => true),
      ).map((i) => open[i]!);
    }
    let first: unknown;
    for (const pool of ranked) {
      const lacking = found?.find((f) => f.pool === pool)?.metas.some((m) => !m.ok && m.noVolume) || this.#sync.knownShort(pool.index, bucket);
      if (!lacking) return pool;
      try {
        await this.#sync.ensure(bucket, pool);
        return pool;
      } catch (err) {
        if (!hasCode(err, 'XSvcBucketNotOnPool')) throw err;
        this.#log.warn({ event: 'bucket_not_on_pool', bucket, pool: pool.index, err: (err as Error).message }, 'pool skipped for a new object');
        first ??= err;
      }
    }
    throw first;
  }

  /**
   * Usable free bytes of a pool for placement, measured at most once per
   * `FREE_SPACE_TTL_MS` (a drive statfs each, over RPC for remote drives:
   * too much to repeat for every new object).
   */
  async #freeOf(pool: Pool): Promise<number> {
    const c = this.#free.get(pool.index);
    if (c && this.#clock.now() - c.at < FREE_SPACE_TTL_MS) return c.free;
    const free = (await poolCapacity(pool)).usableFree;
    this.#free.set(pool.index, { at: this.#clock.now(), free });
    return free;
  }

  /**
   * Counts bytes about to be written to a pool against its sampled free
   * space until the next sample. Without it every new object of a burst
   * inside one sample period goes to the same pool (measured: 108 of 120
   * quick PUTs on one of two equal pools); with it the pools take turns as
   * their remaining free space crosses. Unknown sizes (-1) count nothing.
   */
  reserve(pool: number, bytes: number): void {
    const c = this.#free.get(pool);
    if (c !== undefined && bytes > 0) c.free -= bytes;
  }

  /**
   * Pool a new version of `bucket/key` goes to: the pool already holding the
   * key (`SlowDown` when that pool is closed to new writes), else a pool for
   * new objects.
   */
  async forKey(bucket: string, key: string): Promise<Pool> {
    if (this.#pools.count === 1) return this.forNew(bucket);
    const found = await this.#pools.lookup(bucket, key);
    const existing = pickNewest(found, bucket, key);
    if (existing) {
      this.#pools.checkAdmits(existing.pool);
      return existing.pool;
    }
    return this.forNew(bucket, found);
  }
}

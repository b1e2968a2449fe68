/**
 * Small internal records under `.svc.sys`: bucket metadata
 * (`buckets/<bucket>/.metadata.bin`) today, `pool.bin`, `rebalance.bin` and
 * `root-heal-<id>.json` for the workers. A record is a whole value (read
 * and replaced at once, a few KiB to a few MiB, stored inline in its
 * xl.meta), kept on **every pool**, in the set its path hashes to.
 *
 * Quorum rules:
 * - Inside a pool a record is coded with parity N/2 whatever the storage
 *   class (K = N − ⌊N/2⌋ data shards): a write commits at the set's write
 *   quorum (K, or K + 1 when K = M, i.e. N/2 + 1 on an even set), a read
 *   needs K agreeing drives. A deletion is a tombstone (a `null` delete
 *   marker) at majority N/2 + 1, so a pool that missed the delete cannot
 *   bring the record back.
 * - Across pools a write goes to every pool in parallel and succeeds when at
 *   least one pool committed it (`require: 'all'` demands every pool); the
 *   result names the pools that failed, and `repair` copies the winning
 *   copy to them later. Writes are serialised per path by the namespace
 *   lock, and each takes a mod time strictly above the newest copy any pool
 *   holds, so "newest wins" follows the lock order, not the nodes' clocks.
 * - A read asks every pool and takes the newest copy any pool holds at its
 *   quorum (a tombstone reads as absent). A record on one pool only (a pool
 *   that joined later, a write that reached one pool) reads. A pool that
 *   cannot answer does not block a read another pool answers (it may hold a
 *   newer copy: availability over recency; `repair` converges them). With no
 *   copy anywhere, the read is "absent" only when every pool answered, else
 *   `ErasureReadQuorum`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { BLOCK_SIZE } from '../erasure/index.ts';
import { type FileVersion, MULTIPART_DIR, SYS_VOL, TMP_DIR } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { hashOrder } from './placement.ts';
import type { Pool, PoolLookup, Pools } from './pools.ts';
import type { VersionGroup } from './quorum.ts';

/** How one pool's copy compares with the winning copy. */
export type SysRecordPoolState = 'current' | 'stale' | 'missing' | 'unreachable';

export interface SysRecordView {
  /** The newest copy any pool holds at quorum; `data` undefined for a tombstone. Absent when no pool holds one. */
  winner?: { data: Uint8Array | undefined; modTime: number; pool: number };
  /** Per pool, in pool order. */
  pools: { pool: number; state: SysRecordPoolState; modTime?: number }[];
}

export interface SysRecordWriteResult {
  /** Pools that committed the write at their quorum. */
  committed: number[];
  /** Pools that did not, with why. */
  failed: { pool: number; error: SvcError }[];
}

export interface SysRecordUpdateOptions extends SysRecordWriteOptions {
  /**
   * Call `fn` with `undefined` even when no pool holds a copy and some pool
   * could not answer (default: `ErasureReadQuorum`). For creators that accept
   * that a copy only an unreachable pool holds is then overwritten.
   */
  unreachableOk?: boolean;
}

export interface SysRecordWriteOptions {
  /**
   * `any` (default): one pool committing is success; `all`: every pool
   * must. A write refused under `all` is not undone on the pools that did
   * commit it: like any write below quorum it may still become visible.
   */
  require?: 'any' | 'all';
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
}

/** Rejects paths that are not records: empty segments, or the staging and multipart areas. */
function checkPath(path: string): void {
  const top = path.split('/')[0];
  if (path.endsWith('/') || top === TMP_DIR || top === MULTIPART_DIR) throw new SvcError('InvalidArgument', `not a record path: ${path}`);
  objectPath(path);
}

/** Some pool misses or holds an older copy of the winner, or a tombstone every pool holds can go. */
function needsRepair(view: SysRecordView): boolean {
  if (!view.winner) return false;
  if (view.pools.some((p) => p.state === 'missing' || p.state === 'stale')) return true;
  return view.winner.data === undefined && view.pools.every((p) => p.state === 'current');
}

export class SysRecords {
  readonly #pools: Pools;
  readonly #clock: Clock;
  readonly #locker: NamespaceLocker;

  constructor(pools: Pools, clock: Clock, locker: NamespaceLocker) {
    this.#pools = pools;
    this.#clock = clock;
    this.#locker = locker;
  }

  /** The record's value; undefined when absent or deleted (see the read rule above). */
  async read(path: string): Promise<Uint8Array | undefined> {
    checkPath(path);
    const view = await this.inspect(path);
    if (view.winner) return view.winner.data;
    if (view.pools.some((p) => p.state === 'unreachable')) throw new SvcError('ErasureReadQuorum', undefined, { record: path });
    return undefined;
  }

  /** Every pool's copy of the record compared with the winning one (no lock, no repair). */
  async inspect(path: string): Promise<SysRecordView> {
    checkPath(path);
    return this.#view(await this.#pools.lookup(SYS_VOL, path), path, true);
  }

  /** Replaces the record on every pool (see the write rule above). */
  async write(path: string, data: Uint8Array, opts: SysRecordWriteOptions = {}): Promise<SysRecordWriteResult> {
    checkPath(path);
    return this.#locked(path, async () => {
      const cur = await this.#view(await this.#pools.lookup(SYS_VOL, path), path, false);
      return this.#writeAll(path, data, this.#nextModTime(cur), opts);
    });
  }

  /** Deletes the record: a tombstone on every pool (same success rule as `write`). */
  async delete(path: string, opts: SysRecordWriteOptions = {}): Promise<SysRecordWriteResult> {
    checkPath(path);
    return this.#locked(path, async () => {
      const cur = await this.#view(await this.#pools.lookup(SYS_VOL, path), path, false);
      return this.#writeAll(path, undefined, this.#nextModTime(cur), opts);
    });
  }

  /**
   * Read-modify-write under the record's lock: `fn` gets the current value
   * (undefined when absent) and returns the new one, undefined to delete, or
   * `null` to leave the record unchanged.
   */
  async update(
    path: string,
    fn: (cur: Uint8Array | undefined) => Uint8Array | undefined | null | Promise<Uint8Array | undefined | null>,
    opts: SysRecordUpdateOptions = {},
  ): Promise<SysRecordWriteResult | undefined> {
    checkPath(path);
    return this.#locked(path, async () => {
      const cur = await this.#view(await this.#pools.lookup(SYS_VOL, path), path, true);
      if (!cur.winner && !opts.unreachableOk && cur.pools.some((p) => p.state === 'unreachable')) {
        throw new SvcError('ErasureReadQuorum', undefined, { record: path });
      }
      const next = await fn(cur.winner?.data);
      if (next === null) return undefined;
      return this.#writeAll(path, next, this.#nextModTime(cur), opts);
    });
  }

  /**
   * Copies the winning copy (value or tombstone, its mod time kept) to the
   * pools that miss it or hold an older one. A tombstone every pool holds
   * is removed everywhere (nothing is left that it must outvote).
   */
  async repair(path: string): Promise<{ view: SysRecordView; repaired: number[]; failed: { pool: number; error: SvcError }[] }> {
    checkPath(path);
    // A look without the lock first: a record every pool holds current needs
    // nothing, and a pass over many records must not queue on their locks
    // (lock quorum may be away while storage answers).
    const seen = await this.#view(await this.#pools.lookup(SYS_VOL, path), path, true);
    if (!needsRepair(seen)) return { view: seen, repaired: [], failed: [] };
    return this.#locked(path, async () => {
      const view = await this.#view(await this.#pools.lookup(SYS_VOL, path), path, true);
      const repaired: number[] = [];
      const failed: { pool: number; error: SvcError }[] = [];
      const w = view.winner;
      if (!w) return { view, repaired, failed };
      if (w.data === undefined && view.pools.every((p) => p.state === 'current')) {
        await Promise.all(
          this.#pools.list.map((pool) =>
            this.#pools
              .setOf(pool, path)
              .deleteVersion(SYS_VOL, objectPath(path), 'null', SYS_VOL, path)
              .catch((err: unknown) => failed.push({ pool: pool.index, error: toSvcError(err) })),
          ),
        );
        return { view, repaired, failed };
      }
      await Promise.all(
        view.pools
          .filter((p) => p.state === 'missing' || p.state === 'stale')
          .map(async (p) => {
            try {
              await this.#writeOn(this.#pools.list[p.pool]!, path, w.data, w.modTime);
              repaired.push(p.pool);
            } catch (err) {
              failed.push({ pool: p.pool, error: toSvcError(err) });
            }
          }),
      );
      return { view, repaired: repaired.sort((a, b) => a - b), failed };
    });
  }

  /**
   * Entry names under `dir` on any drive of any pool (directories end in
   * '/'), sorted and deduplicated, with how many drives answered.
   */
  async list(dir: string): Promise<{ names: string[]; answered: number; drives: number }> {
    const names = new Set<string>();
    const drives = this.#pools.allDrives();
    const rs = await Promise.allSettled(drives.map((d) => d.listDir(SYS_VOL, dir)));
    let answered = 0;
    for (const r of rs) {
      if (r.status === 'rejected') continue;
      answered++;
      for (const n of r.value) names.add(n);
    }
    return { names: [...names].sort(), answered, drives: drives.length };
  }

  async #locked<T>(path: string, fn: () => Promise<T>): Promise<T> {
    const unlock = await this.#locker.lock(SYS_VOL, path);
    try {
      return await fn();
    } finally {
      unlock();
    }
  }

  /** A mod time after every copy any pool holds (writes are ordered by the lock, not by clocks). */
  #nextModTime(cur: SysRecordView): number {
    const newest = Math.max(0, ...cur.pools.map((p) => p.modTime ?? 0));
    return Math.max(this.#clock.now(), newest + 1);
  }

  async #view(found: readonly PoolLookup[], path: string, withData: boolean): Promise<SysRecordView> {
    // Newest copy over the pools that hold one at quorum (ties: lowest pool).
    let best: { f: PoolLookup; group: VersionGroup } | undefined;
    for (const f of found) {
      if (f.res.kind === 'found' && (!best || f.res.group.version.modTime > best.group.version.modTime)) best = { f, group: f.res.group };
    }
    const bv = best?.group.version;
    const pools = found.map((f): SysRecordView['pools'][number] => {
      if (f.res.kind === 'quorum') return { pool: f.pool.index, state: 'unreachable' };
      if (f.res.kind === 'notFound') return { pool: f.pool.index, state: 'missing' };
      const v = f.res.group.version;
      const current = bv !== undefined && v.modTime === bv.modTime && v.type === bv.type;
      return { pool: f.pool.index, state: current ? 'current' : 'stale', modTime: v.modTime };
    });
    if (!best || !bv) return { pools };
    let data: Uint8Array | undefined;
    if (bv.type === 'object') {
      data = withData ? await collect(best.f.set.readRange(SYS_VOL, objectPath(path), best.group, 0, bv.size, SYS_VOL, path)) : new Uint8Array(0);
    }
    return { winner: { data, modTime: bv.modTime, pool: best.f.pool.index }, pools };
  }

  async #writeAll(path: string, data: Uint8Array | undefined, modTime: number, opts: SysRecordWriteOptions): Promise<SysRecordWriteResult> {
    const rs = await Promise.allSettled(this.#pools.list.map((pool) => this.#writeOn(pool, path, data, modTime)));
    const committed: number[] = [];
    const failed: { pool: number; error: SvcError }[] = [];
    rs.forEach((r, i) => {
      if (r.status === 'fulfilled') committed.push(i);
      else failed.push({ pool: i, error: toSvcError(r.reason) });
    });
    if (committed.length === 0 || (opts.require === 'all' && failed.length > 0)) {
      throw new SvcError(
        'ErasureWriteQuorum',
        `record ${path}: committed on ${committed.length} of ${this.#pools.count} pools`,
        { record: path, committed, failed: failed.map((f) => ({ pool: f.pool, code: f.error.code, message: f.error.message })) },
        { cause: failed[0]?.error },
      );
    }
    return { committed, failed };
  }

  /** Commits one copy (data, or a tombstone when `data` is undefined) on one pool with parity N/2. */
  async #writeOn(pool: Pool, path: string, data: Uint8Array | undefined, modTime: number): Promise<void> {
    const set = this.#pools.setOf(pool, path);
    const base = { versionId: 'null', modTime, contentHeaders: {}, userMeta: {}, sysMeta: {}, tags: '' };
    if (data === undefined) {
      const marker: FileVersion = { ...base, type: 'delete', dataDir: '', size: 0, parts: [], etag: '', storageClass: '', inline: false };
      await set.writeMarker(SYS_VOL, path, marker, SYS_VOL, path);
      return;
    }
    const n = set.width;
    const parity = Math.floor(n / 2);
    const k = n - parity;
    const dist = hashOrder(`${SYS_VOL}/${path}`, n);
    const staged = await set.stageShards(
      (async function* () {
        if (data.length > 0) yield data;
      })(),
      data.length,
      { data: k, parity, distribution: dist, inlineBudget: Math.max(data.length, 1), partNumber: 1, dataDir: randomUUID() },
    );
    const version: FileVersion = {
      ...base,
      type: 'object',
      dataDir: staged.dataDir,
      erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
      size: data.length,
      parts: [{ number: 1, size: data.length, etag: '', modTime }],
      etag: createHash('md5').update(data).digest('hex'),
      storageClass: 'STANDARD',
      inline: staged.inline,
    };
    try {
      await set.commit(staged, version, SYS_VOL, path, SYS_VOL, path);
    } catch (err) {
      await set.discardStage(staged.stagePath);
      throw err;
    }
  }
}

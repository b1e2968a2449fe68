/**
 * The pools of a deployment, as the object layer sees them: each pool's
 * erasure sets and parity, placement inside a pool (key → set), and the
 * cross-pool lookup that finds where an object lives. Every other object
 * module (buckets, listing, multipart, capacity, sys records) works through
 * this one view.
 */
import type { Drive } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { ErasureSet } from './erasure-set.ts';
import { MemberDrive } from './member-drive.ts';
import type { MrfQueue } from './mrf.ts';
import { setIndexOf, uuidBytes } from './placement.ts';
import type { SlotMeta, VersionGroup } from './quorum.ts';
import type { StorageClass } from './types.ts';

export interface PoolSpec {
  cmdline: string;
  /** Per set, drives in slot order. */
  sets: Drive[][];
  standardParity: number;
  rrsParity: number;
  /**
   * Per set, the drive id format.json gives each slot (the pool's set
   * matrix). With it a drive is used only while it carries that id
   * (`MemberDrive`); without it every drive is taken as it is.
   */
  ids?: readonly (readonly string[])[];
}

export interface Pool {
  index: number;
  cmdline: string;
  sets: ErasureSet[];
  standardParity: number;
  rrsParity: number;
  width: number;
}

/** A located version: the pool/set holding it and the vote that chose it. */
export interface Located {
  pool: Pool;
  set: ErasureSet;
  group: VersionGroup;
  /** The journals the vote was taken from (reused by a delete that follows). */
  metas: SlotMeta[];
}

/** What each pool answered when asked for one object (see `Pools.lookup`). */
export interface PoolLookup {
  pool: Pool;
  set: ErasureSet;
  res: { kind: 'found'; group: VersionGroup } | { kind: 'notFound' } | { kind: 'quorum' };
  metas: SlotMeta[];
}

/** Whether a pool takes new objects (see `Pools.setAdmission`). */
export interface PoolAdmission {
  pool: number;
  admitting: boolean;
  /** Why it does not (e.g. `decommission`, `rebalance`). */
  reason?: string;
  /** Closed to new keys only: writes of keys that live there still apply there (a rebalance fence). */
  existingKeys?: boolean;
}

export class Pools {
  readonly list: readonly Pool[];
  /** The deployment id (format.json `id`, shared by every drive of every pool). */
  readonly deploymentId: string;
  /** Per pool, per set: the drive id format.json gives each slot, when known. */
  readonly ids: readonly ((readonly (readonly string[])[]) | undefined)[];
  readonly #depId: Uint8Array;
  /** Pools closed to new objects, with why, and whether keys living there still take writes. */
  readonly #closed = new Map<number, { reason: string; existingKeys: boolean }>();

  constructor(opts: { deploymentId: string; pools: PoolSpec[]; logger: Logger; mrf: MrfQueue }) {
    if (opts.pools.length === 0) throw new SvcError('InvalidTopology', 'no pools');
    this.#depId = uuidBytes(opts.deploymentId);
    this.deploymentId = opts.deploymentId;
    this.ids = opts.pools.map((p) => p.ids);
    this.list = opts.pools.map((p, pi) => {
      const width = p.sets[0]?.length ?? 0;
      if (width === 0 || p.sets.some((s) => s.length !== width)) throw new SvcError('InvalidTopology', `pool ${pi}: sets differ in width`);
      for (const parity of [p.standardParity, p.rrsParity]) {
        if (parity < 0 || parity > Math.floor(width / 2)) throw new SvcError('InvalidStorageClassConfig', `pool ${pi}: parity ${parity} > N/2`);
      }
      return {
        index: pi,
        cmdline: p.cmdline,
        width,
        standardParity: p.standardParity,
        rrsParity: p.rrsParity,
        sets: p.sets.map(
          (drives, si) =>
            new ErasureSet({
              pool: pi,
              set: si,
              drives: drives.map((d, slot) => new MemberDrive(d, p.ids?.[si]?.[slot])),
              logger: opts.logger,
              mrf: opts.mrf,
            }),
        ),
      };
    });
  }

  get count(): number {
    return this.list.length;
  }

  /**
   * Opens or closes a pool to new objects (decommission closes its source
   * pool). A closed pool receives no new object, no new multipart upload and
   * no new delete marker: new keys go to the admitting pools, and a write of
   * a key that lives on the closed pool is refused with `SlowDown` (the
   * client retries once the key was moved), also when the pool closed while
   * the write was staged. Uploads already started there may complete;
   * permanent deletes and metadata updates still apply in place.
   *
   * `existingKeys: true` closes the pool to new keys only (a rebalance
   * fence): writes of keys that live there still apply there.
   *
   * In-memory and per node: the data-movement workers apply it on every
   * node from `pool.bin` and `rebalance.bin` (`background/movement/`).
   */
  setAdmission(pool: number, admitting: boolean, reason = 'closed', opts: { existingKeys?: boolean } = {}): void {
    if (!this.list[pool]) throw new SvcError('InvalidArgument', `no pool ${pool}`);
    if (admitting) this.#closed.delete(pool);
    else this.#closed.set(pool, { reason, existingKeys: opts.existingKeys ?? false });
  }

  /** True when `pool` takes new keys. */
  admits(pool: number): boolean {
    return !this.#closed.has(pool);
  }

  /** True while some pool is closed or fenced (data movement is under way). */
  get fenced(): boolean {
    return this.#closed.size > 0;
  }

  admission(): PoolAdmission[] {
    return this.list.map((p) => {
      const c = this.#closed.get(p.index);
      if (c === undefined) return { pool: p.index, admitting: true };
      return c.existingKeys ? { pool: p.index, admitting: false, reason: c.reason, existingKeys: true } : { pool: p.index, admitting: false, reason: c.reason };
    });
  }

  /** Throws `SlowDown` when `pool` does not take writes of the keys living there. */
  checkAdmits(pool: Pool): void {
    const c = this.#closed.get(pool.index);
    if (c !== undefined && !c.existingKeys) {
      throw new SvcError('SlowDown', `pool ${pool.index} does not take new writes (${c.reason}); retry later`, { pool: pool.index, reason: c.reason });
    }
  }

  /** The set of `pool` that `key` hashes to. */
  setOf(pool: Pool, key: string): ErasureSet {
    return pool.sets[setIndexOf(key, this.#depId, pool.sets.length)]!;
  }

  /** The pool's parity for a storage class. */
  parity(pool: Pool, sc: StorageClass | undefined): number {
    return sc === 'REDUCED_REDUNDANCY' ? pool.rrsParity : pool.standardParity;
  }

  /** Every drive of every set of every pool. */
  allDrives(): Drive[] {
    return this.list.flatMap((p) => p.sets.flatMap((s) => s.drives));
  }

  /** The membership guard of a set's slot (every set drive is one). */
  member(pool: number, set: number, slot: number): MemberDrive {
    return this.list[pool]!.sets[set]!.drives[slot] as MemberDrive;
  }

  /** Each pool's vote on `vol/key` (latest, or `versionId`), in pool order. */
  async lookup(vol: string, key: string, versionId?: string): Promise<PoolLookup[]> {
    const path = objectPath(key);
    return Promise.all(
      this.list.map(async (pool) => {
        const set = this.setOf(pool, key);
        const { res, metas } = await set.resolve(vol, path, versionId);
        return { pool, set, res, metas };
      }),
    );
  }

  /**
   * Finds the authoritative version in every pool (latest, or `versionId`);
   * the pool holding the newest wins. Throws ErasureReadQuorum when no pool
   * found it and some pool lacked quorum; returns undefined when absent.
   */
  async locate(vol: string, key: string, versionId?: string): Promise<Located | undefined> {
    return pickNewest(await this.lookup(vol, key, versionId), vol, key);
  }
}

/** The newest found version over the pools' answers (see `Pools.locate`). */
export function pickNewest(found: readonly PoolLookup[], vol: string, key: string): Located | undefined {
  let best: Located | undefined;
  let quorumLost = false;
  for (const f of found) {
    if (f.res.kind === 'found') {
      if (!best || f.res.group.version.modTime > best.group.version.modTime) best = { pool: f.pool, set: f.set, group: f.res.group, metas: f.metas };
    } else if (f.res.kind === 'quorum') quorumLost = true;
  }
  if (!best && quorumLost) throw new SvcError('ErasureReadQuorum', undefined, { bucket: vol, key });
  return best;
}

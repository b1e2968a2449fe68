/**
 * Moves one object, every version of it, from one pool to another: the
 * engine step of decommission and rebalance (and of anything else that
 * relocates objects between sets or pools).
 *
 * Under the object's namespace write lock (the lock PUT, delete, multipart
 * complete and heal take):
 *
 * 1. every pool's journal of the key is read; on the source, versions are
 *    classified by the read-quorum vote: committed (copied), undecidable
 *    (a version that may have been acknowledged but whose drives do not
 *    answer: the move is refused as `unresolved`, nothing changes), or
 *    never committed (dropped with the source copy);
 * 2. the committed versions are copied oldest first, each exactly as it is:
 *    version id, mod time, delete markers, parts (one shard file per part,
 *    same numbers, sizes, ETags and checksums), metadata, tags, content
 *    headers, storage class, checksum. The data is read (K verified shards)
 *    and re-encoded with the target pool's parity for the version's storage
 *    class; small single-part versions are inlined by the target's budget.
 *    A version the target already holds at quorum with the same or a newer
 *    mod time is not copied again (an interrupted earlier move);
 * 3. only then are the source's versions removed, newest first.
 *
 * Why this order keeps every acknowledged version readable, at any crash
 * point: before the copy of the newest version commits, the source holds a
 * strictly newer latest version and wins every lookup; once it committed,
 * both pools hold the same newest version (either serves it); removing the
 * source's newest version first leaves the target strictly newer. A crash
 * leaves at worst a copy on both pools, which the next move of the key
 * resolves (copies nothing, removes the source).
 */
import { randomUUID } from 'node:crypto';
import { BLOCK_SIZE } from '../erasure/index.ts';
import { type FileVersion, TMP_DIR } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { ErasureSet, StagedShards } from './erasure-set.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { hashOrder } from './placement.ts';
import type { Pool, PoolLookup, Pools } from './pools.ts';
import { groupVersions, listedVersions, type SlotMeta, type VersionGroup, writeQuorum } from './quorum.ts';

/** Where a moved object goes: called under the object's lock with what the pools hold. */
export type MoveTargetChooser = (req: {
  /** The largest version's size in bytes (0 for markers only). */
  size: number;
  /** Every pool's answer for the key, the source's included. */
  found: readonly PoolLookup[];
  source: Pool;
}) => Promise<Pool> | Pool;

export interface MoveResult {
  /** False when the source held nothing of the key at quorum (already moved or deleted). */
  found: boolean;
  /** Versions copied to the target (delete markers included). */
  copied: number;
  /** Versions the target already held (an interrupted earlier move). */
  skipped: number;
  /** Object bytes copied. */
  bytes: number;
  /** Source journal entries removed after the copy. */
  removed: number;
  /** The target pool (when something was found). */
  target?: number;
  /**
   * The copy is complete but removing the source's versions failed: the key
   * is on both pools until a later move of it removes the source copy.
   */
  cleanupError?: SvcError;
}

export interface ObjectMoverOptions {
  pools: Pools;
  locker: NamespaceLocker;
  logger: Logger;
  /** Per-shard inline budget for K data shards (the PUT rule). */
  inlineBudget(k: number, versioned: boolean): number;
  /** Whether the bucket is versioned (enabled or suspended): the inline budget depends on it. */
  versioned(bucket: string): Promise<boolean>;
  /** Makes the bucket present on `pool` (its volume was seen missing there) before a copy lands there. */
  ensureBucket?(bucket: string, pool: Pool): Promise<void>;
}

function plain(v: FileVersion): FileVersion {
  const out: FileVersion = { ...v, parts: v.parts.map((p) => ({ ...p })), contentHeaders: { ...v.contentHeaders }, userMeta: { ...v.userMeta }, sysMeta: { ...v.sysMeta } };
  delete out.inlineData;
  if (v.checksum) out.checksum = { ...v.checksum };
  return out;
}

/** The source journal's versions, by the read-quorum vote. */
export function classifyVersions(metas: readonly SlotMeta[]): { committed: VersionGroup[]; undecidable: VersionGroup[]; stray: VersionGroup[]; any: boolean } {
  const { groups, failed } = groupVersions(metas);
  const committed = listedVersions(groups, (g) => g.quorum);
  const keep = new Set(committed);
  const undecidable: VersionGroup[] = [];
  const stray: VersionGroup[] = [];
  for (const g of groups) {
    if (keep.has(g)) continue;
    // A newer copy of a committed id (or an older superseded one) is part of it.
    if (g.votes < g.quorum && g.votes + failed >= g.quorum && !committed.some((c) => c.version.versionId === g.version.versionId)) undecidable.push(g);
    else stray.push(g);
  }
  return { committed, undecidable, stray, any: groups.length > 0 };
}

export class ObjectMover {
  readonly #o: ObjectMoverOptions;

  constructor(o: ObjectMoverOptions) {
    this.#o = o;
  }

  /**
   * Moves every version of `bucket/key` off `source` to the pool `choose`
   * picks. Throws when the move could not complete (nothing on the source
   * was removed then); `ErasureReadQuorum` with `details.unresolved` when the
   * source holds versions no quorum decides.
   */
  async move(bucket: string, key: string, source: Pool, choose: MoveTargetChooser): Promise<MoveResult> {
    const path = objectPath(key);
    const unlock = await this.#o.locker.lock(bucket, key);
    try {
      const found = await this.#o.pools.lookup(bucket, key);
      const src = found.find((f) => f.pool === source)!;
      const c = classifyVersions(src.metas);
      if (c.undecidable.length > 0) {
        throw new SvcError('ErasureReadQuorum', `${bucket}/${key}: ${c.undecidable.length} version(s) on pool ${source.index} have neither read quorum nor enough missing drives to rule them out`, {
          unresolved: true,
          bucket,
          key,
          pool: source.index,
        });
      }
      if (!c.any) return { found: false, copied: 0, skipped: 0, bytes: 0, removed: 0 };
      const size = c.committed.reduce((a, g) => Math.max(a, g.version.size), 0);
      let result: MoveResult = { found: true, copied: 0, skipped: 0, bytes: 0, removed: 0 };
      if (c.committed.length > 0) {
        const target = await choose({ size, found, source });
        if (target === source) throw new SvcError('InternalError', `no target pool other than the source (pool ${source.index})`);
        const dst = found.find((f) => f.pool === target)!;
        if (dst.metas.some((m) => !m.ok && m.noVolume === true)) await this.#o.ensureBucket?.(bucket, target);
        result = { ...result, target: target.index, ...(await this.#copyAll(bucket, key, path, src.set, c.committed, target, dst)) };
      }
      // Newest first: the target stays strictly newer while the source empties.
      const ids = [...new Set([...c.committed, ...c.stray].map((g) => g.version.versionId))];
      try {
        for (const id of ids) {
          if (await src.set.deleteVersion(bucket, path, id, bucket, key, src.metas)) result.removed++;
        }
      } catch (err) {
        const e = err instanceof SvcError ? err : new SvcError('InternalError', String(err), undefined, { cause: err });
        this.#o.logger.warn({ event: 'move_cleanup_failed', bucket, key, pool: source.index, err: e }, 'object copied, but its source copy could not be removed yet');
        result.cleanupError = e;
      }
      return result;
    } finally {
      unlock();
    }
  }

  async #copyAll(
    bucket: string,
    key: string,
    path: string,
    srcSet: ErasureSet,
    committed: readonly VersionGroup[],
    target: Pool,
    dst: PoolLookup,
  ): Promise<{ copied: number; skipped: number; bytes: number }> {
    // What the target already holds at quorum, by version id.
    const held = new Map<string, number>();
    for (const g of classifyVersions(dst.metas).committed) held.set(g.version.versionId, g.version.modTime);
    const versioned = await this.#o.versioned(bucket);
    let copied = 0;
    let skipped = 0;
    let bytes = 0;
    for (const g of [...committed].reverse()) {
      const v = g.version;
      const have = held.get(v.versionId);
      if (have !== undefined && have >= v.modTime) {
        skipped++;
        continue;
      }
      if (v.type === 'delete') await dst.set.writeMarker(bucket, path, plain(v), bucket, key);
      else {
        await this.#copyData(bucket, key, path, srcSet, g, target, dst.set, versioned);
        bytes += v.size;
      }
      copied++;
    }
    return { copied, skipped, bytes };
  }

  /** Re-encodes one object version onto `dstSet`, part by part into one staging dir, and commits it. */
  async #copyData(bucket: string, key: string, path: string, srcSet: ErasureSet, g: VersionGroup, target: Pool, dstSet: ErasureSet, versioned: boolean): Promise<void> {
    const v = g.version;
    const parity = this.#o.pools.parity(target, v.storageClass === 'REDUCED_REDUNDANCY' ? 'REDUCED_REDUNDANCY' : 'STANDARD');
    const n = dstSet.width;
    const k = n - parity;
    const dist = hashOrder(`${bucket}/${key}`, n);
    const dataDir = randomUUID();
    const stagePath = `${TMP_DIR}/${randomUUID()}`;
    const single = v.parts.length === 1;
    const alive = new Array<boolean>(n).fill(true);
    let inline: StagedShards | undefined;
    try {
      let offset = 0;
      for (const part of v.parts) {
        // stageShards copies every chunk into its block buffer before it asks for the next: reused read buffers are safe.
        const staged = await dstSet.stageShards(srcSet.readRange(bucket, path, g, offset, part.size, bucket, key, { reuse: true }), part.size, {
          data: k,
          parity,
          distribution: dist,
          inlineBudget: single ? this.#o.inlineBudget(k, versioned) : 0,
          partNumber: part.number,
          dataDir,
          stagePath,
        });
        staged.alive.forEach((a, s) => {
          if (!a) alive[s] = false;
        });
        if (staged.inline) inline = staged;
        offset += part.size;
      }
      const wq = writeQuorum(k, parity);
      const ok = alive.filter(Boolean).length;
      if (ok < wq) throw new SvcError('ErasureWriteQuorum', undefined, { alive: ok, needed: wq });
      const version: FileVersion = {
        ...plain(v),
        dataDir: inline ? '' : dataDir,
        erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
        inline: inline !== undefined,
      };
      const staged: StagedShards = inline ?? { size: v.size, shardBytes: 0, inline: false, inlineData: [], alive, stagePath, dataDir };
      await dstSet.commit({ ...staged, alive }, version, bucket, path, bucket, key);
    } catch (err) {
      await dstSet.discardStage(stagePath);
      throw err;
    }
  }
}

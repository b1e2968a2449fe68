/**
 * Walks the objects of a bucket on one erasure set, or on every set of a
 * pool, with the raw journal of every drive: the input of data movement
 * (decommission, rebalance) and of heal and the scanner, which need to see
 * what each drive holds (listings, by contrast, vote entries away).
 *
 * Every drive of the set is walked recursively (`Drive.walkDir`) and the
 * streams are merged by key in S3 order. For each key the walker yields one
 * `SlotMeta` per slot:
 * - `ok` with the decoded journal when the drive holds the key;
 * - `notFound` when the drive's walk is past the key without it (also when
 *   the drive lacks the bucket's volume);
 * - `ok: false, notFound: false` when the drive's walk failed (offline,
 *   I/O error): from then on the slot counts as failed for every key.
 *
 * The walk holds no lock: an entry is a hint that a key exists (or existed);
 * a consumer that acts on it re-reads the object under its namespace lock.
 * The journals are decoded without inline data unless asked for.
 */
import type { WalkEntry } from '../storage/drive.ts';
import { decodeXlMeta } from '../storage/xl-meta.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { ErasureSet } from './erasure-set.ts';
import { mergeSorted } from './list-merge.ts';
import type { Pool } from './pools.ts';
import type { SlotMeta } from './quorum.ts';

export interface NamespaceWalkOptions {
  /** Only keys starting with this. */
  prefix?: string;
  /** Only keys strictly after this (S3 order). */
  marker?: string;
  /** Decode inline data into the journals (default false). */
  withData?: boolean;
}

/** One key of one set, with every drive's view of it. */
export interface NamespaceEntry {
  /** The object key. */
  name: string;
  set: ErasureSet;
  /** Per slot, in slot order. */
  metas: SlotMeta[];
  /** Slots whose walk failed before this key (their `metas` entries are failures). */
  failedSlots: number;
}

const FAILED: SlotMeta = { ok: false, notFound: false };
const ABSENT: SlotMeta = { ok: false, notFound: true };

/**
 * The keys of `bucket` on `set`, in S3 key order. Throws `ErasureReadQuorum`
 * when no drive of the set could be walked at all.
 */
export async function* walkSet(set: ErasureSet, bucket: string, opts: NamespaceWalkOptions = {}): AsyncGenerator<NamespaceEntry> {
  const failed = new Set<number>();
  const errors: unknown[] = [];
  const walkOpts = { recursive: true, ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}), ...(opts.marker !== undefined ? { marker: opts.marker } : {}) };
  const guard = async function* (slot: number, it: AsyncIterable<WalkEntry>): AsyncGenerator<WalkEntry> {
    try {
      yield* it;
    } catch (err) {
      // A drive without the bucket's volume holds none of its keys.
      if (hasCode(err, 'VolumeNotFound')) return;
      failed.add(slot);
      errors.push(err);
    }
  };
  const streams = set.drives.map((d, slot) => guard(slot, d.walkDir(bucket, walkOpts)));
  const checkAlive = () => {
    if (failed.size >= set.width) {
      throw new SvcError('ErasureReadQuorum', `no drive of pool ${set.pool} set ${set.index} could be walked`, { pool: set.pool, set: set.index, errors: errors.map(String) }, { cause: errors[0] });
    }
  };
  for await (const g of mergeSorted(streams)) {
    checkAlive();
    const metas = set.drives.map((_, slot): SlotMeta => (failed.has(slot) ? FAILED : ABSENT));
    for (const { src, item } of g.items) {
      if (item.prefix || item.meta === undefined) continue;
      try {
        metas[src] = { ok: true, versions: decodeXlMeta(item.meta, opts.withData ?? false) };
      } catch (err) {
        metas[src] = { ok: false, notFound: false, error: err };
      }
    }
    yield { name: g.name, set, metas, failedSlots: failed.size };
  }
  checkAlive();
}

/** The keys of `bucket` on every set of `pool`, merged in S3 key order. */
export async function* walkPool(pool: Pool, bucket: string, opts: NamespaceWalkOptions = {}): AsyncGenerator<NamespaceEntry> {
  if (pool.sets.length === 1) {
    yield* walkSet(pool.sets[0]!, bucket, opts);
    return;
  }
  for await (const g of mergeSorted(pool.sets.map((s) => walkSet(s, bucket, opts)))) {
    for (const { item } of g.items) yield item;
  }
}

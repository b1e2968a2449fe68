/**
 * Walks the namespace of an erasure set with the raw per-drive metadata:
 * every drive of the set is merge-walked in key order and each key comes
 * out with what every slot holds for it (its journal, a clean not-found, or
 * a failure), before any vote. Heal, the scanner and data movement
 * (decommission, rebalance) walk buckets, objects and versions with it;
 * listings use their own quorum-voted walk (`listing.ts`).
 *
 * A drive that is offline, not a member of its slot, or fails mid-walk
 * counts as failed for every key after that point; a drive without the
 * volume holds none of its keys.
 */
import { type Drive, SYS_VOL, type WalkEntry } from '../storage/drive.ts';
import { decodeXlMeta } from '../storage/xl-meta.ts';
import { hasCode } from '../util/errors.ts';
import { compareKeys } from '../util/key-order.ts';
import type { ErasureSet } from './erasure-set.ts';
import { mergeSorted } from './list-merge.ts';
import type { Pools } from './pools.ts';
import type { SlotMeta } from './quorum.ts';

export interface NamespaceEntry {
  /** Object key within the volume. */
  readonly name: string;
  /** Per slot: the drive's journal (without inline data), a clean not-found, or a failure. */
  readonly metas: SlotMeta[];
  /** Per slot: orphaned data directories the drive reported (walks with `orphanAgeMs`). */
  readonly orphans?: (readonly string[] | undefined)[];
}

export interface WalkSetOptions {
  /** Only keys starting with this. */
  prefix?: string;
  /** Only keys strictly after this (resuming a walk). */
  marker?: string;
  /** Top-level prefixes to leave out (e.g. `tmp/` and `multipart/` of `.svc.sys`). */
  skip?: readonly string[];
  /** Also report data directories orphaned for this long (`WalkOptions.orphanAgeMs`); keys with only orphans come out too. */
  orphanAgeMs?: number;
}

/** `.svc.sys` areas that hold no records: staging and multipart uploads. */
export const SYS_SKIP = ['tmp/', 'multipart/'] as const;

function walkOf(d: Drive, vol: string, prefix: string, marker: string | undefined, recursive: boolean, orphanAgeMs: number | undefined): AsyncIterable<WalkEntry> {
  return d.walkDir(vol, { prefix, recursive, ...(marker !== undefined ? { marker } : {}), ...(orphanAgeMs !== undefined ? { orphanAgeMs } : {}) });
}

/**
 * Every key of `vol` on `set` (under `prefix`, after `marker`), in key
 * order, with each slot's metadata.
 */
export async function* walkSet(set: ErasureSet, vol: string, opts: WalkSetOptions = {}): AsyncGenerator<NamespaceEntry> {
  const prefix = opts.prefix ?? '';
  if (opts.skip === undefined || opts.skip.length === 0 || prefix !== '') {
    yield* walkRange(set, vol, prefix, opts.marker, opts.orphanAgeMs);
    return;
  }
  // Top level first (objects there and the prefixes below), then each prefix that is not skipped.
  const tops: string[] = [];
  for await (const e of walkRange(set, vol, '', opts.marker, opts.orphanAgeMs, tops)) yield e;
  for (const p of tops) {
    if (opts.skip.includes(p)) continue;
    if (opts.marker !== undefined && compareKeys(opts.marker, p) >= 0 && !opts.marker.startsWith(p)) continue;
    yield* walkRange(set, vol, p, opts.marker !== undefined && opts.marker.startsWith(p) ? opts.marker : undefined, opts.orphanAgeMs);
  }
}

/**
 * One merge-walk. With `prefixesOut` the walk is not recursive: objects at
 * this level are yielded and the prefixes below are collected instead.
 */
async function* walkRange(
  set: ErasureSet,
  vol: string,
  prefix: string,
  marker: string | undefined,
  orphanAgeMs: number | undefined,
  prefixesOut?: string[],
): AsyncGenerator<NamespaceEntry> {
  const n = set.width;
  const failed = new Array<boolean>(n).fill(false);
  const missingVol = new Array<boolean>(n).fill(false);
  const guard = async function* (slot: number, it: AsyncIterable<WalkEntry>): AsyncGenerator<WalkEntry & { slot: number }> {
    try {
      for await (const e of it) yield { ...e, slot };
    } catch (err) {
      if (hasCode(err, 'VolumeNotFound')) missingVol[slot] = true;
      else failed[slot] = true;
    }
  };
  const streams = set.drives.map((d, slot) => {
    if (!d.isOnline()) {
      failed[slot] = true;
      return guard(slot, (async function* () {})());
    }
    return guard(slot, walkOf(d, vol, prefix, marker, prefixesOut === undefined, orphanAgeMs));
  });
  for await (const g of mergeSorted(streams)) {
    const objects = g.items.filter((i) => !i.item.prefix);
    if (objects.length < g.items.length) prefixesOut?.push(g.name);
    if (objects.length === 0) continue;
    const metas: SlotMeta[] = new Array(n);
    for (let s = 0; s < n; s++) metas[s] = failed[s] ? { ok: false, notFound: false } : missingVol[s] ? { ok: false, notFound: true, noVolume: true } : { ok: false, notFound: true };
    let orphans: (readonly string[] | undefined)[] | undefined;
    for (const { item } of objects) {
      if (item.orphans !== undefined && item.orphans.length > 0) (orphans ??= new Array(n).fill(undefined))[item.slot] = item.orphans;
      // A key holding only orphaned data here has no journal on this drive.
      if (item.meta === undefined) continue;
      try {
        metas[item.slot] = { ok: true, versions: decodeXlMeta(item.meta, false) };
      } catch (err) {
        metas[item.slot] = { ok: false, notFound: false, error: err };
      }
    }
    yield orphans === undefined ? { name: g.name, metas } : { name: g.name, metas, orphans };
  }
}

/**
 * Bucket names present on any drive of the pools (volumes; the bucket
 * records are the authority on which buckets exist, this finds the ones
 * whose volumes outlived or preceded their record too).
 */
export async function volumesOnDrives(pools: Pools): Promise<string[]> {
  const names = new Set<string>();
  const rs = await Promise.allSettled(pools.allDrives().filter((d) => d.isOnline()).map((d) => d.listVols()));
  for (const r of rs) if (r.status === 'fulfilled') for (const v of r.value) if (v.name !== SYS_VOL && !v.name.startsWith('.')) names.add(v.name);
  return [...names].sort();
}

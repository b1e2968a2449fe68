/**
 * Listings: each set's drives are merge-walked in name order and every key's
 * versions voted per the list quorum (`SVC_LIST_OBJECTS_QUORUM`); the sets of
 * every pool are merged again, a key found in several pools taking the newest
 * pool's versions. ListObjects and ListObjectVersions page over that stream.
 */
import { type WalkEntry } from '../storage/drive.ts';
import { decodeXlMeta } from '../storage/xl-meta.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import { compareKeys } from '../util/key-order.ts';
import type { ErasureSet } from './erasure-set.ts';
import { type ListQuorum, listPolicy, mergeSorted } from './list-merge.ts';
import { toObjectInfo } from './object-info.ts';
import type { Pools } from './pools.ts';
import { groupVersions, listedVersions, type SlotMeta, type VersionGroup } from './quorum.ts';
import type { ListObjectsOptions, ListObjectsResult, ListVersionsOptions, ListVersionsResult } from './types.ts';

/** The common prefix `name` rolls up into (prefix through the next delimiter), or undefined. */
export function commonPrefixOf(name: string, prefix: string, delim: string): string | undefined {
  if (delim === '') return undefined;
  const i = name.indexOf(delim, prefix.length);
  return i >= 0 ? name.slice(0, i + delim.length) : undefined;
}

export class Listing {
  readonly #pools: Pools;
  readonly #quorum: ListQuorum;

  constructor(pools: Pools, quorum: ListQuorum) {
    this.#pools = pools;
    this.#quorum = quorum;
  }

  /** True when the bucket holds no version and no prefix (delete-bucket check). */
  async isEmpty(bucket: string): Promise<boolean> {
    const v = await this.versions(bucket, { maxKeys: 1 });
    return v.versions.length === 0 && v.prefixes.length === 0;
  }

  /** Name-sorted stream of a set's objects (versions voted per list quorum) and prefixes. */
  async *#walkSet(
    set: ErasureSet,
    bucket: string,
    prefix: string,
    marker: string | undefined,
    recursive: boolean,
  ): AsyncGenerator<{ name: string; prefix: boolean; groups: VersionGroup[] }> {
    const mode = this.#quorum;
    // disk / reduced walk the first drives believed online; the other modes
    // walk every drive and count the ones that fail.
    const candidates = mode === 'disk' || mode === 'reduced' ? set.drives.filter((d) => d.isOnline()) : set.drives;
    const asked = candidates.slice(0, listPolicy(mode, candidates.length).ask);
    if (asked.length === 0) throw new SvcError('ErasureReadQuorum');
    const failed = new Set<number>();
    const guard = async function* (src: number, it: AsyncIterable<WalkEntry>): AsyncGenerator<WalkEntry> {
      try {
        yield* it;
      } catch (err) {
        if (hasCode(err, 'VolumeNotFound') && mode !== 'strict') return;
        failed.add(src);
      }
    };
    const streams = asked.map((d, i) => guard(i, d.walkDir(bucket, { prefix, ...(marker !== undefined ? { marker } : {}), recursive })));
    const policyNow = () => {
      const alive = asked.length - failed.size;
      const floor = mode === 'disk' || mode === 'reduced' ? 1 : Math.max(1, Math.floor(set.width / 2));
      if (alive < floor || (mode === 'strict' && failed.size > 0)) {
        throw new SvcError('ErasureReadQuorum', 'listing below list quorum', { pool: set.pool, set: set.index, alive });
      }
      return listPolicy(mode, alive);
    };
    for await (const g of mergeSorted<WalkEntry>(streams)) {
      const policy = policyNow();
      const prefixes = g.items.filter((i) => i.item.prefix).length;
      if (prefixes > 0) {
        if (prefixes >= policy.threshold(undefined)) yield { name: g.name, prefix: true, groups: [] };
        continue;
      }
      const metas: SlotMeta[] = asked.map(() => ({ ok: false, notFound: true }));
      for (const { src, item } of g.items) {
        try {
          metas[src] = { ok: true, versions: decodeXlMeta(item.meta!, false) };
        } catch (err) {
          metas[src] = { ok: false, notFound: false, error: err };
        }
      }
      const groups = listedVersions(groupVersions(metas).groups, (vg) => policy.threshold(vg));
      if (groups.length > 0) yield { name: g.name, prefix: false, groups };
    }
    policyNow();
  }

  /** Merged stream over every set of every pool (a key in several pools: the newest pool's versions). */
  async *#walkAll(
    bucket: string,
    prefix: string,
    marker: string | undefined,
    recursive: boolean,
  ): AsyncGenerator<{ name: string; prefix: boolean; groups: VersionGroup[] }> {
    const streams = this.#pools.list.flatMap((p) => p.sets.map((s) => this.#walkSet(s, bucket, prefix, marker, recursive)));
    for await (const g of mergeSorted(streams)) {
      const items = g.items.map((i) => i.item);
      if (items.some((i) => i.prefix)) {
        yield { name: g.name, prefix: true, groups: [] };
        continue;
      }
      let best = items[0]!;
      for (const it of items) if (it.groups[0]!.version.modTime > best.groups[0]!.version.modTime) best = it;
      yield best;
    }
  }

  async objects(bucket: string, opts: ListObjectsOptions): Promise<ListObjectsResult> {
    const prefix = opts.prefix ?? '';
    const delim = opts.delimiter ?? '';
    const marker = opts.marker !== undefined && opts.marker !== '' ? opts.marker : undefined;
    const out: ListObjectsResult = { objects: [], prefixes: [], isTruncated: false };
    if (opts.maxKeys <= 0) return out;
    let count = 0;
    let lastPrefix: string | undefined;
    let last: string | undefined;
    for await (const e of this.#walkAll(bucket, prefix, marker, delim !== '/')) {
      const cp = commonPrefixOf(e.name, prefix, delim);
      if (cp !== undefined) {
        if (cp === lastPrefix || (marker !== undefined && compareKeys(cp, marker) <= 0)) continue;
        if (count >= opts.maxKeys) {
          out.isTruncated = true;
          break;
        }
        out.prefixes.push(cp);
        lastPrefix = cp;
        last = cp;
        count++;
        continue;
      }
      if (e.prefix) continue;
      if (marker !== undefined && compareKeys(e.name, marker) <= 0) continue;
      const latest = e.groups[0]!.version;
      if (latest.type === 'delete') continue;
      if (count >= opts.maxKeys) {
        out.isTruncated = true;
        break;
      }
      out.objects.push(toObjectInfo(bucket, e.name, latest, true));
      last = e.name;
      count++;
    }
    if (out.isTruncated && last !== undefined) out.nextMarker = last;
    return out;
  }

  async versions(bucket: string, opts: ListVersionsOptions): Promise<ListVersionsResult> {
    const prefix = opts.prefix ?? '';
    const delim = opts.delimiter ?? '';
    const keyMarker = opts.keyMarker !== undefined && opts.keyMarker !== '' ? opts.keyMarker : undefined;
    const vidMarker = keyMarker !== undefined ? opts.versionIdMarker : undefined;
    // With a version-id marker the key-marker's own versions are still due:
    // walk from just before it and filter here.
    const walkMarker = keyMarker === undefined ? undefined : vidMarker ? (keyMarker.length > 1 ? keyMarker.slice(0, -1) : undefined) : keyMarker;
    const out: ListVersionsResult = { versions: [], prefixes: [], isTruncated: false };
    if (opts.maxKeys <= 0) return out;
    let count = 0;
    let lastPrefix: string | undefined;
    let lastKey: string | undefined;
    let lastVid: string | undefined;
    outer: for await (const e of this.#walkAll(bucket, prefix, walkMarker, delim !== '/')) {
      if (keyMarker !== undefined && compareKeys(e.name, keyMarker) < 0) continue;
      const cp = commonPrefixOf(e.name, prefix, delim);
      if (cp !== undefined) {
        if (cp === lastPrefix || (keyMarker !== undefined && compareKeys(cp, keyMarker) <= 0)) continue;
        if (count >= opts.maxKeys) {
          out.isTruncated = true;
          break;
        }
        out.prefixes.push(cp);
        lastPrefix = cp;
        lastKey = cp;
        lastVid = undefined;
        count++;
        continue;
      }
      if (e.prefix) continue;
      let vs = e.groups;
      if (keyMarker !== undefined && e.name === keyMarker) {
        if (!vidMarker) continue;
        const i = vs.findIndex((g) => g.version.versionId === vidMarker);
        vs = i >= 0 ? vs.slice(i + 1) : [];
      }
      for (const g of vs) {
        if (count >= opts.maxKeys) {
          out.isTruncated = true;
          break outer;
        }
        out.versions.push(toObjectInfo(bucket, e.name, g.version, g === e.groups[0]));
        lastKey = e.name;
        lastVid = g.version.versionId;
        count++;
      }
    }
    if (out.isTruncated && lastKey !== undefined) {
      out.nextKeyMarker = lastKey;
      if (lastVid !== undefined) out.nextVersionIdMarker = lastVid;
    }
    return out;
  }

}

/**
 * Test helpers for data movement: what the object layer holds (every
 * version of every key, with a digest of its bytes, to compare before and
 * after a move), what a drive holds on disk (object journals left on a
 * drained pool), and data movement composed over an in-process layer.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DataMovementAdmin } from '../../src/object/admin/data-movement-admin.ts';
import { DataMovement, type DataMovementOptions } from '../../src/background/movement/data-movement.ts';
import { NO_PEERS } from '../../src/background/movement/context.ts';
import type { DecommissionEntry } from '../../src/object/records/pool-meta.ts';
import { PoolRecords } from '../../src/object/records/store.ts';
import type { ServerPools } from '../../src/object/server-pools.ts';
import type { ObjectLayer } from '../../src/object/types.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';

/** One version as a client sees it: metadata and a digest of the bytes. */
export interface VersionView {
  key: string;
  versionId: string;
  isLatest: boolean;
  deleteMarker: boolean;
  size: number;
  etag: string;
  modTime: number;
  storageClass: string;
  userMeta: Record<string, string>;
  contentType: string | undefined;
  tags: string;
  checksum: string | undefined;
  parts: string[];
  /** MD5 of the bytes GET returns (markers: ''). */
  md5: string;
}

/** Every version of every key of `bucket`, newest first per key, read back in full (SSE-C keys with `customerKeys`). */
export async function snapshotBucket(layer: ObjectLayer, bucket: string, customerKeys: Record<string, Uint8Array> = {}): Promise<VersionView[]> {
  const out: VersionView[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await layer.listObjectVersions(bucket, { maxKeys: 500, ...(keyMarker !== undefined ? { keyMarker } : {}), ...(versionIdMarker !== undefined ? { versionIdMarker } : {}) });
    for (const v of page.versions) {
      let md5 = '';
      if (!v.deleteMarker) {
        const customer = customerKeys[v.name];
        const r = await layer.getObject(bucket, v.name, { versionId: v.versionId, ...(customer ? { sseCustomerKey: customer } : {}) });
        const h = createHash('md5');
        for await (const c of r.body) h.update(c as Buffer);
        md5 = h.digest('hex');
      }
      out.push({
        key: v.name,
        versionId: v.versionId,
        isLatest: v.isLatest,
        deleteMarker: v.deleteMarker,
        size: v.size,
        etag: v.etag,
        modTime: v.modTime.getTime(),
        storageClass: v.storageClass,
        userMeta: v.userMeta,
        contentType: v.contentHeaders.contentType,
        tags: v.tags,
        checksum: v.checksum ? `${v.checksum.algorithm}:${v.checksum.value}:${v.checksum.type}` : undefined,
        parts: v.parts.map((p) => `${p.number}:${p.size}:${p.etag}${p.checksum ? `:${p.checksum.value}` : ''}`),
        md5,
      });
    }
    if (!page.isTruncated) return out;
    keyMarker = page.nextKeyMarker;
    versionIdMarker = page.nextVersionIdMarker;
  }
}

/** Files under `dir` (relative paths, sorted); `skip` names top-level entries to leave out. */
async function filesUnder(dir: string, skip: readonly string[] = []): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string, rel: string): Promise<void> => {
    let ents;
    try {
      ents = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of ents) {
      if (rel === '' && skip.includes(e.name)) continue;
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
      else found.push(`${rel}${e.name}`);
    }
  };
  await walk(dir, '');
  return found.sort();
}

/** Object journals (`xl.meta`, as `<bucket>/<key path>`) under the bucket volumes of a drive root (`.svc.sys` excluded). */
export async function objectJournals(root: string): Promise<string[]> {
  return (await filesUnder(root, ['.svc.sys'])).filter((f) => f.endsWith('/xl.meta')).map((f) => f.slice(0, -'/xl.meta'.length));
}

/** Files under `.svc.sys/multipart` of a drive root (open uploads; empty directories left by finished ones do not count). */
export function uploadFiles(root: string): Promise<string[]> {
  return filesUnder(join(root, '.svc.sys', 'multipart'));
}

/** Data movement over an in-process layer (a single node: leads every pool, no peers). */
export function movementOver(layer: ServerPools, cmdlines: readonly string[], over: Partial<DataMovementOptions> = {}, clock: Clock = systemClock): DataMovement {
  return new DataMovement({
    ctx: { layer, records: new PoolRecords(layer.sysRecords), clock, logger: silentLogger, selfId: 'local' },
    pools: cmdlines.map((cmdline, id) => ({ id, cmdline, ellipsis: true })),
    leads: () => true,
    peers: NO_PEERS,
    decommissionBucketConcurrency: 2,
    decommissionEntryConcurrency: 4,
    rebalanceMaxAttempts: 3,
    persistEveryMs: 200,
    pollMs: 500,
    ...over,
  });
}

/** The admin services (what the admin API calls) over an in-process layer and its data movement. */
export function adminOver(layer: ServerPools, cmdlines: readonly string[], m: DataMovement): DataMovementAdmin {
  return new DataMovementAdmin({
    pools: cmdlines.map((cmdline, id) => ({ id, cmdline, ellipsis: true, setCount: 1, setDriveCount: 2, standardParity: 1, rrsParity: 1, leader: 'local' })),
    records: new PoolRecords(layer.sysRecords),
    capacity: () => layer.capacity(),
    clock: systemClock,
    decommissionWorker: m.decommission,
    rebalanceWorker: m.rebalance,
  });
}

/** Polls `pool.bin` until `pool`'s entry satisfies `done` (or the time is up). */
export async function waitForEntry(layer: ServerPools, cmdline: string, done: (e: DecommissionEntry | null) => boolean, timeoutMs = 60_000): Promise<DecommissionEntry | null> {
  const records = new PoolRecords(layer.sysRecords);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const e = (await records.readPoolMeta())?.pools.find((p) => p.cmdline === cmdline)?.decommission ?? null;
    if (done(e)) return e;
    if (Date.now() > end) throw new Error(`pool ${cmdline}: entry still ${JSON.stringify(e)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The object layer over pools → sets → drives: placement, versioning, buckets,
 * listing merge, multipart, capacity and health. Quorum-bound drive work is
 * delegated to `ErasureSet`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { pack, unpack } from 'msgpackr';
import { BLOCK_SIZE } from '../erasure/index.ts';
import { BUCKETS_DIR, type Drive, type FileVersion, MULTIPART_DIR, SYS_VOL, type WalkEntry } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import { decodeXlMeta } from '../storage/xl-meta.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type CommitHooks, ErasureSet, type StagedShards } from './erasure-set.ts';
import { type ListQuorum, listPolicy, mergeSorted } from './list-merge.ts';
import { MrfQueue } from './mrf.ts';
import { LocalNamespaceLocker, type NamespaceLocker } from './ns-lock.ts';
import { checkReadPreconditions, checkWritePreconditions, storedHeaders, toChecksum, toObjectInfo } from './object-info.ts';
import { choosePool, hashOrder, setIndexOf, uuidBytes } from './placement.ts';
import { groupVersions, listedVersions, majority, readQuorum, type SlotMeta, type VersionGroup, writeQuorum } from './quorum.ts';
import { resolveRange } from './range.ts';
import type {
  BucketInfo,
  BucketMetadata,
  CompletePart,
  ContentHeaders,
  DeleteObjectOptions,
  DeleteObjectResult,
  GetObjectOptions,
  GetObjectResult,
  ListObjectsOptions,
  ListObjectsResult,
  ListPartsResult,
  ListUploadsOptions,
  ListUploadsResult,
  ListVersionsOptions,
  ListVersionsResult,
  MultipartUploadInfo,
  NewMultipartOptions,
  ObjectChecksum,
  ObjectInfo,
  ObjectLayer,
  PartInfo,
  PoolCapacity,
  Preconditions,
  PutData,
  PutObjectOptions,
  StorageClass,
  StorageHealth,
  VersioningStatus,
} from './types.ts';
import { compareKeys } from '../util/key-order.ts';

export interface PoolSpec {
  cmdline: string;
  /** Per set, drives in slot order. */
  sets: Drive[][];
  standardParity: number;
  rrsParity: number;
}

export interface ObjectLayerOptions {
  deploymentId: string;
  pools: PoolSpec[];
  /** Fixed per-shard inline limit (SVC_STORAGE_CLASS_INLINE_BLOCK); replaces the scaled default. */
  inlineBlock?: number;
  listQuorum?: ListQuorum;
  logger: Logger;
  clock: Clock;
  locker?: NamespaceLocker;
  /** Read-repair / partial-write queue (created when not given). */
  mrf?: MrfQueue;
  /** Test-only crash points of the commit. */
  commitHooks?: CommitHooks;
  /**
   * Called after this node changed or removed a bucket's metadata, so a
   * cluster can tell its peers to drop their cached copy (`forgetBucket`).
   */
  onBucketMetaChanged?: (bucket: string) => void;
}

interface Pool {
  index: number;
  cmdline: string;
  sets: ErasureSet[];
  standardParity: number;
  rrsParity: number;
  width: number;
}

interface BucketRecord {
  v: 1;
  name: string;
  created: number;
  versioning: VersioningStatus;
  tags: string;
  location: string;
}

/** A located version: the pool/set holding it and the vote that chose it. */
interface Located {
  pool: Pool;
  set: ErasureSet;
  group: VersionGroup;
  /** The journals the vote was taken from (reused by a delete that follows). */
  metas: SlotMeta[];
}

const BUCKET_CACHE_MS = 2_000;
const DRIVE_PROBE_MS = 5_000;
const DEFAULT_INLINE_TOTAL = 256 * 1024;
const MAX_INLINE_SHARD = 128 * 1024;
const UPLOAD_VERSION_ID = 'upload';

function validateBucket(bucket: string): void {
  if (bucket === '' || bucket.startsWith('.') || bucket.includes('/')) throw new SvcError('InvalidBucketName');
}

function multipartDir(bucket: string, key: string, uploadUuid: string): string {
  const h = createHash('sha256').update(`${bucket}/${key}`).digest('hex');
  return `${MULTIPART_DIR}/${h}/${uploadUuid}`;
}

function encodeUploadId(pool: number, uuid: string, ms: number): string {
  return Buffer.from(`${pool}.${uuid}x${ms}`).toString('base64url');
}

function decodeUploadId(id: string): { pool: number; uuid: string; ms: number } {
  const m = /^(\d+)\.([0-9a-f-]{36})x(\d+)$/.exec(Buffer.from(id, 'base64url').toString('latin1'));
  if (!m) throw new SvcError('NoSuchUpload');
  return { pool: Number(m[1]), uuid: m[2]!, ms: Number(m[3]) };
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
}

export class ServerPools implements ObjectLayer {
  readonly mrf: MrfQueue;
  readonly #pools: Pool[];
  readonly #depId: Uint8Array;
  readonly #inlineBlock: number | undefined;
  readonly #listQuorum: ListQuorum;
  readonly #log: Logger;
  readonly #onBucketMetaChanged: ((bucket: string) => void) | undefined;
  readonly #clock: Clock;
  readonly #locker: NamespaceLocker;
  readonly #bucketCache = new Map<string, { at: number; meta: BucketMetadata }>();
  readonly #stopProbe: () => void;
  #probing = false;

  constructor(opts: ObjectLayerOptions) {
    if (opts.pools.length === 0) throw new SvcError('InvalidTopology', 'no pools');
    this.#depId = uuidBytes(opts.deploymentId);
    this.#inlineBlock = opts.inlineBlock;
    this.#listQuorum = opts.listQuorum ?? 'optimal';
    this.#log = opts.logger;
    this.#onBucketMetaChanged = opts.onBucketMetaChanged;
    this.#clock = opts.clock;
    this.#locker = opts.locker ?? new LocalNamespaceLocker();
    this.mrf = opts.mrf ?? new MrfQueue();
    this.#pools = opts.pools.map((p, pi) => {
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
              drives,
              logger: opts.logger,
              mrf: this.mrf,
              ...(opts.commitHooks ? { hooks: opts.commitHooks } : {}),
            }),
        ),
      };
    });
    this.#stopProbe = opts.clock.every(DRIVE_PROBE_MS, () => {
      void this.probeDrives();
    });
  }

  /**
   * Refreshes every drive's online state (`Drive.isOnline`, which `health()`
   * reads synchronously) so a drive that left or came back without traffic is
   * noticed.
   */
  async probeDrives(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      const drives = this.#pools.flatMap((p) => p.sets.flatMap((s) => s.drives));
      const rs = await Promise.allSettled(drives.map((d) => d.diskInfo()));
      rs.forEach((r, i) => {
        if (r.status === 'rejected') {
          this.#log.warn({ event: 'drive_probe_failed', endpoint: drives[i]!.endpoint, err: r.reason }, 'drive probe failed');
        }
      });
    } finally {
      this.#probing = false;
    }
  }

  // ---- placement helpers

  #setOf(pool: Pool, key: string): ErasureSet {
    return pool.sets[setIndexOf(key, this.#depId, pool.sets.length)]!;
  }

  #parity(pool: Pool, sc: StorageClass | undefined): number {
    return sc === 'REDUCED_REDUNDANCY' ? pool.rrsParity : pool.standardParity;
  }

  /** Per-shard inline budget: 256 KiB / K capped at 128 KiB, /8 on versioned buckets; a configured block replaces it. */
  #inlineBudget(k: number, versioned: boolean): number {
    if (this.#inlineBlock !== undefined) return this.#inlineBlock;
    const b = Math.min(Math.floor(DEFAULT_INLINE_TOTAL / k), MAX_INLINE_SHARD);
    return versioned ? Math.floor(b / 8) : b;
  }

  /** Pool for a new object: the active pool with the most free space. */
  async #poolForNew(): Promise<Pool> {
    if (this.#pools.length === 1) return this.#pools[0]!;
    const caps = await this.capacity();
    const i = choosePool(
      caps.map((c) => c.usableFree),
      caps.map(() => true),
    );
    if (i < 0) throw new SvcError('XSvcStorageFull');
    return this.#pools[i]!;
  }

  /**
   * Finds the authoritative version in every pool (latest, or `versionId`);
   * the pool holding the newest wins. Throws ErasureReadQuorum when no pool
   * found it and some pool lacked quorum; returns undefined when absent.
   */
  async #locate(vol: string, key: string, versionId?: string): Promise<Located | undefined> {
    const path = objectPath(key);
    const found = await Promise.all(
      this.#pools.map(async (pool) => {
        const set = this.#setOf(pool, key);
        const { res, metas } = await set.resolve(vol, path, versionId);
        return { pool, set, res, metas };
      }),
    );
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

  // ---- buckets

  #bucketRecordPath(bucket: string): string {
    return `${BUCKETS_DIR}/${bucket}/.metadata.bin`;
  }

  /** Writes a small internal record under `.svc.sys` with parity N/2 on every pool. */
  async #writeSysRecord(path: string, data: Uint8Array): Promise<void> {
    for (const pool of this.#pools) {
      const set = this.#setOf(pool, path);
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
      const now = this.#clock.now();
      const version: FileVersion = {
        versionId: 'null',
        modTime: now,
        type: 'object',
        dataDir: staged.dataDir,
        erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
        size: data.length,
        parts: [{ number: 1, size: data.length, etag: '', modTime: now }],
        etag: createHash('md5').update(data).digest('hex'),
        contentHeaders: {},
        userMeta: {},
        sysMeta: {},
        storageClass: 'STANDARD',
        tags: '',
        inline: staged.inline,
      };
      await set.commit(staged, version, SYS_VOL, path, SYS_VOL, path);
    }
  }

  /** Reads an internal record (first pool holding it at quorum); undefined when absent. */
  async #readSysRecord(path: string): Promise<Uint8Array | undefined> {
    const loc = await this.#locate(SYS_VOL, path);
    if (!loc) return undefined;
    const v = loc.group.version;
    return collect(loc.set.readRange(SYS_VOL, objectPath(path), loc.group, 0, v.size, SYS_VOL, path));
  }

  async #deleteSysRecord(path: string): Promise<void> {
    for (const pool of this.#pools) {
      await this.#setOf(pool, path).deleteVersion(SYS_VOL, objectPath(path), 'null', SYS_VOL, path);
    }
  }

  async #saveBucket(meta: BucketMetadata): Promise<void> {
    const rec: BucketRecord = {
      v: 1,
      name: meta.name,
      created: meta.created.getTime(),
      versioning: meta.versioning,
      tags: meta.tags,
      location: meta.location,
    };
    await this.#writeSysRecord(this.#bucketRecordPath(meta.name), pack(rec));
    this.#bucketCache.set(meta.name, { at: this.#clock.now(), meta });
    this.#onBucketMetaChanged?.(meta.name);
  }

  /** Drops the cached metadata of `bucket` (a peer changed it); the next use re-reads it at quorum. */
  forgetBucket(bucket: string): void {
    this.#bucketCache.delete(bucket);
  }

  /** Runs `op` on every drive of every set; each set must reach `need(n)` successes. */
  async #onAllDrives(
    op: (d: Drive) => Promise<void>,
    okErr: (err: unknown) => boolean,
    need: (n: number) => number,
  ): Promise<{ created: Drive[]; okErrCount: number; total: number }> {
    const created: Drive[] = [];
    let okErrCount = 0;
    let total = 0;
    for (const pool of this.#pools) {
      for (const set of pool.sets) {
        const rs = await Promise.allSettled(set.drives.map(op));
        let ok = 0;
        rs.forEach((r, i) => {
          total++;
          if (r.status === 'fulfilled') {
            ok++;
            created.push(set.drives[i]!);
          } else if (okErr(r.reason)) {
            ok++;
            okErrCount++;
          }
        });
        if (ok < need(set.width)) {
          throw new SvcError('ErasureWriteQuorum', undefined, { pool: pool.index, set: set.index, ok, needed: need(set.width), created });
        }
      }
    }
    return { created, okErrCount, total };
  }

  async makeBucket(bucket: string, opts: { location?: string } = {}): Promise<void> {
    validateBucket(bucket);
    let created: Drive[] = [];
    try {
      const r = await this.#onAllDrives(
        (d) => d.makeVol(bucket),
        (e) => hasCode(e, 'VolumeExists'),
        majority,
      );
      created = r.created;
      if (r.okErrCount >= majority(r.total)) {
        throw new SvcError('BucketAlreadyOwnedByYou');
      }
      await this.#saveBucket({
        name: bucket,
        created: new Date(this.#clock.now()),
        versioning: 'Unversioned',
        tags: '',
        location: opts.location ?? '',
      });
      this.#log.info({ event: 'bucket_created', bucket }, 'bucket created');
    } catch (err) {
      const made = err instanceof SvcError && Array.isArray(err.details?.created) ? (err.details.created as Drive[]) : created;
      if (!hasCode(err, 'BucketAlreadyOwnedByYou')) {
        // Roll back the volumes this call created: a failed create leaves nothing.
        await Promise.allSettled(made.map((d) => d.deleteVol(bucket, false)));
      }
      throw err;
    }
  }

  async getBucketInfo(bucket: string): Promise<BucketMetadata> {
    const c = this.#bucketCache.get(bucket);
    if (c && this.#clock.now() - c.at < BUCKET_CACHE_MS) return c.meta;
    if (bucket === '' || bucket.startsWith('.')) throw new SvcError('NoSuchBucket');
    const raw = await this.#readSysRecord(this.#bucketRecordPath(bucket));
    if (!raw) {
      this.#bucketCache.delete(bucket);
      throw new SvcError('NoSuchBucket');
    }
    let rec: BucketRecord;
    try {
      rec = unpack(raw) as BucketRecord;
    } catch (err) {
      throw new SvcError('FileCorrupt', 'bucket metadata record', { bucket }, { cause: err });
    }
    if (rec?.v !== 1) throw new SvcError('FileCorrupt', 'bucket metadata record version', { bucket });
    const meta: BucketMetadata = {
      name: rec.name,
      created: new Date(rec.created),
      versioning: rec.versioning,
      tags: rec.tags,
      location: rec.location,
    };
    this.#bucketCache.set(bucket, { at: this.#clock.now(), meta });
    return meta;
  }

  async listBuckets(): Promise<BucketInfo[]> {
    const counts = new Map<string, number>();
    let answered = 0;
    const drives = this.#pools.flatMap((p) => p.sets.flatMap((s) => s.drives));
    const rs = await Promise.allSettled(drives.map((d) => d.listVols()));
    for (const r of rs) {
      if (r.status !== 'fulfilled') continue;
      answered++;
      for (const v of r.value) counts.set(v.name, (counts.get(v.name) ?? 0) + 1);
    }
    if (answered < Math.max(1, Math.floor(drives.length / 2))) throw new SvcError('ErasureReadQuorum');
    const out: BucketInfo[] = [];
    for (const [name, c] of [...counts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      if (c < Math.max(1, Math.ceil(answered / 2))) continue;
      try {
        const meta = await this.getBucketInfo(name);
        out.push({ name, created: meta.created });
      } catch (err) {
        if (!hasCode(err, 'NoSuchBucket')) throw err;
      }
    }
    return out;
  }

  async deleteBucket(bucket: string, opts: { force?: boolean } = {}): Promise<void> {
    await this.getBucketInfo(bucket);
    if (!opts.force) {
      const v = await this.listObjectVersions(bucket, { maxKeys: 1 });
      if (v.versions.length > 0 || v.prefixes.length > 0) throw new SvcError('BucketNotEmpty');
    }
    await this.#onAllDrives(
      (d) => d.deleteVol(bucket, true),
      (e) => hasCode(e, 'VolumeNotFound'),
      majority,
    );
    this.#bucketCache.delete(bucket);
    await this.#deleteSysRecord(this.#bucketRecordPath(bucket));
    this.#onBucketMetaChanged?.(bucket);
    this.#log.info({ event: 'bucket_deleted', bucket, force: opts.force === true }, 'bucket deleted');
  }

  async setBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void> {
    const meta = await this.getBucketInfo(bucket);
    await this.#saveBucket({ ...meta, versioning: status });
  }

  async setBucketTags(bucket: string, tags: string): Promise<void> {
    const meta = await this.getBucketInfo(bucket);
    await this.#saveBucket({ ...meta, tags });
  }

  // ---- objects

  async putObject(bucket: string, key: string, data: PutData, opts: PutObjectOptions): Promise<ObjectInfo> {
    const meta = await this.getBucketInfo(bucket);
    const path = objectPath(key);
    if (opts.preconditions) {
      // Early check saves streaming a body that cannot commit; re-checked under the lock.
      const cur = await this.#locate(bucket, key);
      checkWritePreconditions(opts.preconditions, cur?.group.version);
    }
    const existing = this.#pools.length > 1 ? await this.#locate(bucket, key) : undefined;
    const pool = existing?.pool ?? (await this.#poolForNew());
    const set = this.#setOf(pool, key);
    const sc = opts.storageClass ?? 'STANDARD';
    const parity = this.#parity(pool, sc);
    const k = set.width - parity;
    const dist = hashOrder(`${bucket}/${key}`, set.width);
    const versioned = meta.versioning !== 'Unversioned';
    const versionId = opts.versionId ?? (meta.versioning === 'Enabled' ? randomUUID() : 'null');
    const staged = await set.stageShards(data.stream, data.size, {
      data: k,
      parity,
      distribution: dist,
      inlineBudget: this.#inlineBudget(k, versioned),
      partNumber: 1,
      dataDir: randomUUID(),
    });
    const modTime = opts.modTime?.getTime() ?? this.#clock.now();
    const etag = data.md5Hex();
    const checksum = data.checksum();
    const version: FileVersion = {
      versionId,
      modTime,
      type: 'object',
      dataDir: staged.dataDir,
      erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
      size: staged.size,
      parts: [{ number: 1, size: staged.size, etag, modTime }],
      etag,
      contentHeaders: storedHeaders(opts.contentHeaders),
      userMeta: { ...(opts.userMeta ?? {}) },
      sysMeta: {},
      storageClass: sc,
      tags: opts.tags ?? '',
      inline: staged.inline,
    };
    if (checksum) version.checksum = { ...checksum };
    await this.#commitLocked(set, staged, version, bucket, key, path, opts.preconditions);
    return toObjectInfo(bucket, key, version, true);
  }

  async #commitLocked(
    set: ErasureSet,
    staged: StagedShards,
    version: FileVersion,
    bucket: string,
    key: string,
    path: string,
    pre: Preconditions | undefined,
  ): Promise<void> {
    const unlock = await this.#locker.lock(bucket, key);
    try {
      if (pre) {
        const { res } = await set.resolve(bucket, path);
        if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
        checkWritePreconditions(pre, res.kind === 'found' ? res.group.version : undefined);
      }
      await set.commit(staged, version, bucket, path, bucket, key);
    } catch (err) {
      // The staging belongs to this PUT: after a refused precondition or a
      // commit below quorum (already undone on the drives) it is discarded.
      await this.#discard(set, staged);
      throw err;
    } finally {
      unlock();
    }
  }

  async #discard(set: ErasureSet, staged: StagedShards): Promise<void> {
    const rs = await Promise.allSettled(set.drives.map((d) => d.delete(SYS_VOL, staged.stagePath, { recursive: true })));
    rs.forEach((r, i) => {
      if (r.status === 'rejected' && !hasCode(r.reason, 'FileNotFound') && !hasCode(r.reason, 'DiskNotFound')) {
        this.#log.warn({ event: 'stage_cleanup_failed', endpoint: set.drives[i]!.endpoint, err: r.reason }, 'staging cleanup failed');
      }
    });
  }

  async #getLocated(bucket: string, key: string, opts: GetObjectOptions): Promise<Located> {
    await this.getBucketInfo(bucket);
    const unlock = await this.#locker.rlock(bucket, key);
    let loc: Located | undefined;
    try {
      loc = await this.#locate(bucket, key, opts.versionId);
    } finally {
      unlock();
    }
    if (!loc) throw new SvcError(opts.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
    if (loc.group.version.type === 'delete') {
      // The edge answers with `x-amz-delete-marker: true` and the marker's version id.
      throw new SvcError(opts.versionId !== undefined ? 'MethodNotAllowed' : 'NoSuchKey', undefined, {
        deleteMarker: true,
        versionId: loc.group.version.versionId,
      });
    }
    return loc;
  }

  async getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo> {
    const loc = await this.#getLocated(bucket, key, opts);
    const info = toObjectInfo(bucket, key, loc.group.version, await this.#isLatest(loc, bucket, key, opts));
    checkReadPreconditions(opts.preconditions, info);
    return info;
  }

  async #isLatest(loc: Located, bucket: string, key: string, opts: GetObjectOptions): Promise<boolean> {
    if (opts.versionId === undefined) return true;
    const latest = await this.#locate(bucket, key).catch(() => undefined);
    return latest?.group.version.versionId === loc.group.version.versionId;
  }

  async getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult> {
    const loc = await this.#getLocated(bucket, key, opts);
    const v = loc.group.version;
    const info = toObjectInfo(bucket, key, v, await this.#isLatest(loc, bucket, key, opts));
    checkReadPreconditions(opts.preconditions, info);
    let start = 0;
    let end = v.size - 1;
    let ranged = false;
    if (opts.partNumber !== undefined) {
      const idx = v.parts.findIndex((p) => p.number === opts.partNumber);
      if (idx < 0) throw new SvcError('InvalidRange', 'no such part', { partNumber: opts.partNumber });
      start = v.parts.slice(0, idx).reduce((a, p) => a + p.size, 0);
      end = start + v.parts[idx]!.size - 1;
      ranged = true;
    }
    if (opts.range) {
      const r = resolveRange(opts.range, v.size);
      start = r.start;
      end = r.end;
      ranged = true;
    }
    const length = Math.max(0, end - start + 1);
    const body = Readable.from(loc.set.readRange(bucket, objectPath(key), loc.group, start, length, bucket, key), {
      objectMode: false,
    });
    return ranged ? { info, range: { start, end }, body } : { info, body };
  }

  async deleteObject(bucket: string, key: string, opts: DeleteObjectOptions): Promise<DeleteObjectResult> {
    const meta = await this.getBucketInfo(bucket);
    const path = objectPath(key);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#locate(bucket, key, opts.versionId).catch((err: unknown) => {
        // A delete needs only majority: an object whose data lost read quorum
        // (EC:0 with a drive offline) can still be deleted.
        if (hasCode(err, 'ErasureReadQuorum')) return undefined;
        throw err;
      });
      if (opts.preconditions?.ifMatch !== undefined) checkWritePreconditions(opts.preconditions, loc?.group.version);
      if (opts.versionId !== undefined || meta.versioning === 'Unversioned') {
        const vid = opts.versionId ?? 'null';
        const pools = loc ? [loc.pool] : this.#pools;
        for (const pool of pools) await this.#setOf(pool, key).deleteVersion(bucket, path, vid, bucket, key, loc?.metas);
        return { versionId: vid, deleteMarker: loc?.group.version.type === 'delete' };
      }
      const pool = loc?.pool ?? this.#pools[0]!;
      const set = this.#setOf(pool, key);
      const versionId = meta.versioning === 'Enabled' ? randomUUID() : 'null';
      const marker: FileVersion = {
        versionId,
        modTime: this.#clock.now(),
        type: 'delete',
        dataDir: '',
        size: 0,
        parts: [],
        etag: '',
        contentHeaders: {},
        userMeta: {},
        sysMeta: {},
        storageClass: '',
        tags: '',
        inline: false,
      };
      await set.writeMarker(bucket, path, marker, bucket, key);
      return { versionId, deleteMarker: true };
    } finally {
      unlock();
    }
  }

  async updateObjectMetadata(
    bucket: string,
    key: string,
    opts: { versionId?: string; userMeta?: Record<string, string>; contentHeaders?: ContentHeaders; tags?: string },
  ): Promise<ObjectInfo> {
    await this.getBucketInfo(bucket);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#locate(bucket, key, opts.versionId);
      if (!loc) throw new SvcError(opts.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
      const cur = loc.group.version;
      if (cur.type === 'delete') throw new SvcError(opts.versionId !== undefined ? 'MethodNotAllowed' : 'NoSuchKey');
      const next: FileVersion = {
        ...cur,
        userMeta: opts.userMeta ?? cur.userMeta,
        contentHeaders: opts.contentHeaders ? storedHeaders(opts.contentHeaders) : cur.contentHeaders,
        tags: opts.tags ?? cur.tags,
      };
      delete next.inlineData;
      await loc.set.updateMetadata(bucket, objectPath(key), next, bucket, key);
      return toObjectInfo(bucket, key, next, opts.versionId === undefined);
    } finally {
      unlock();
    }
  }

  // ---- listing

  /** Name-sorted stream of a set's objects (versions voted per list quorum) and prefixes. */
  async *#walkSet(
    set: ErasureSet,
    bucket: string,
    prefix: string,
    marker: string | undefined,
    recursive: boolean,
  ): AsyncGenerator<{ name: string; prefix: boolean; groups: VersionGroup[] }> {
    const mode = this.#listQuorum;
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
    const streams = this.#pools.flatMap((p) => p.sets.map((s) => this.#walkSet(s, bucket, prefix, marker, recursive)));
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

  async listObjects(bucket: string, opts: ListObjectsOptions): Promise<ListObjectsResult> {
    await this.getBucketInfo(bucket);
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

  async listObjectVersions(bucket: string, opts: ListVersionsOptions): Promise<ListVersionsResult> {
    await this.getBucketInfo(bucket);
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

  // ---- multipart

  async #uploadOf(
    bucket: string,
    key: string,
    uploadId: string,
  ): Promise<{ pool: Pool; set: ErasureSet; dir: string; group: VersionGroup; ms: number }> {
    const { pool: pi, uuid, ms } = decodeUploadId(uploadId);
    const pool = this.#pools[pi];
    if (!pool) throw new SvcError('NoSuchUpload');
    const set = this.#setOf(pool, key);
    const dir = multipartDir(bucket, key, uuid);
    const { res } = await set.resolve(SYS_VOL, dir);
    if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
    if (res.kind === 'notFound') throw new SvcError('NoSuchUpload');
    const v = res.group.version;
    if (v.sysMeta.bucket !== bucket || v.sysMeta.key !== key) throw new SvcError('NoSuchUpload');
    return { pool, set, dir, group: res.group, ms };
  }

  #uploadInfo(bucket: string, key: string, uploadId: string, v: FileVersion): MultipartUploadInfo {
    const info: MultipartUploadInfo = {
      bucket,
      name: key,
      uploadId,
      initiated: new Date(v.modTime),
      storageClass: (v.storageClass || 'STANDARD') as StorageClass,
    };
    if (v.sysMeta.checksumAlgorithm) info.checksumAlgorithm = v.sysMeta.checksumAlgorithm as MultipartUploadInfo['checksumAlgorithm'];
    if (v.sysMeta.checksumType) info.checksumType = v.sysMeta.checksumType as MultipartUploadInfo['checksumType'];
    return info;
  }

  async newMultipartUpload(bucket: string, key: string, opts: NewMultipartOptions): Promise<MultipartUploadInfo> {
    await this.getBucketInfo(bucket);
    objectPath(key);
    const existing = this.#pools.length > 1 ? await this.#locate(bucket, key) : undefined;
    const pool = existing?.pool ?? (await this.#poolForNew());
    const set = this.#setOf(pool, key);
    const sc = opts.storageClass ?? 'STANDARD';
    const parity = this.#parity(pool, sc);
    const k = set.width - parity;
    const uuid = randomUUID();
    const now = this.#clock.now();
    const uploadId = encodeUploadId(pool.index, uuid, now);
    const dir = multipartDir(bucket, key, uuid);
    const sysMeta: Record<string, string> = { bucket, key };
    if (opts.checksumAlgorithm) sysMeta.checksumAlgorithm = opts.checksumAlgorithm;
    if (opts.checksumType) sysMeta.checksumType = opts.checksumType;
    const dist = hashOrder(`${bucket}/${key}`, set.width);
    const v: FileVersion = {
      versionId: UPLOAD_VERSION_ID,
      modTime: now,
      type: 'object',
      dataDir: randomUUID(),
      erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
      size: 0,
      parts: [],
      etag: '',
      contentHeaders: storedHeaders(opts.contentHeaders),
      userMeta: { ...(opts.userMeta ?? {}) },
      sysMeta,
      storageClass: sc,
      tags: opts.tags ?? '',
      inline: false,
    };
    const rs = await Promise.allSettled(
      set.drives.map((d, s) => d.writeMetadata(SYS_VOL, dir, { ...v, erasure: { ...v.erasure!, index: dist[s]! } })),
    );
    const ok = rs.filter((r) => r.status === 'fulfilled').length;
    if (ok < writeQuorum(k, parity)) {
      await Promise.allSettled(set.drives.map((d) => d.delete(SYS_VOL, dir, { recursive: true })));
      throw new SvcError('ErasureWriteQuorum', undefined, { ok, needed: writeQuorum(k, parity) });
    }
    return this.#uploadInfo(bucket, key, uploadId, v);
  }

  async putObjectPart(bucket: string, key: string, uploadId: string, partNumber: number, data: PutData): Promise<PartInfo> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) throw new SvcError('InvalidArgument', 'bad part number');
    await this.getBucketInfo(bucket);
    const { set, dir, group } = await this.#uploadOf(bucket, key, uploadId);
    const up = group.version;
    const e = up.erasure!;
    const staged = await set.stageShards(data.stream, data.size, {
      data: e.data,
      parity: e.parity,
      distribution: e.distribution,
      inlineBudget: 0,
      partNumber,
      dataDir: up.dataDir,
    });
    const etag = data.md5Hex();
    const now = this.#clock.now();
    const fileId = randomUUID();
    const checksum = data.checksum();
    const rec: PartMetaRecord = { n: partNumber, s: staged.size, e: etag, t: now, f: fileId, ...(checksum ? { c: { ...checksum } } : {}) };
    const wq = writeQuorum(e.data, e.parity);
    // Crash points: a part file renamed in without its .meta is not an
    // uploaded part (listing and complete go by .meta); the .meta write is
    // atomic, and names a file id, so a re-upload never mixes old and new.
    const rs = await Promise.allSettled(
      set.drives.map(async (d, s) => {
        if (!staged.alive[s]) throw new SvcError('DiskNotFound');
        await d.renameFile(SYS_VOL, `${staged.stagePath}/${up.dataDir}/part.${partNumber}`, SYS_VOL, `${dir}/${up.dataDir}/part.${partNumber}.${fileId}`);
        await d.writeAll(SYS_VOL, `${dir}/part.${partNumber}.meta`, pack(rec));
      }),
    );
    await Promise.allSettled(set.drives.map((d) => d.delete(SYS_VOL, staged.stagePath, { recursive: true })));
    const ok = rs.filter((r) => r.status === 'fulfilled').length;
    if (ok < wq) throw new SvcError('ErasureWriteQuorum', undefined, { ok, needed: wq });
    const info: PartInfo = { number: partNumber, size: staged.size, etag, modTime: new Date(now) };
    if (checksum) info.checksum = checksum;
    return info;
  }

  /** Part records of an upload at read quorum, ascending by number. */
  async #partRecords(set: ErasureSet, dir: string, k: number, only?: Set<number>): Promise<Map<number, PartMetaRecord>> {
    const listings = await Promise.allSettled(set.drives.map((d) => d.listDir(SYS_VOL, dir)));
    const nums = new Set<number>();
    for (const l of listings) {
      if (l.status !== 'fulfilled') continue;
      for (const name of l.value) {
        const m = /^part\.(\d+)\.meta$/.exec(name);
        if (m && (!only || only.has(Number(m[1])))) nums.add(Number(m[1]));
      }
    }
    const sorted = [...nums].sort((a, b) => a - b);
    const out = new Map<number, PartMetaRecord>();
    const BATCH = 64;
    for (let i = 0; i < sorted.length; i += BATCH) {
      await Promise.all(
        sorted.slice(i, i + BATCH).map(async (n) => {
          const rs = await Promise.allSettled(set.drives.map((d) => d.readAll(SYS_VOL, `${dir}/part.${n}.meta`)));
          const votes = new Map<string, { c: number; rec: PartMetaRecord }>();
          for (const r of rs) {
            if (r.status !== 'fulfilled') continue;
            let rec: PartMetaRecord;
            try {
              rec = unpack(r.value) as PartMetaRecord;
            } catch {
              continue;
            }
            if (typeof rec?.f !== 'string' || typeof rec.e !== 'string') continue;
            const key = `${rec.f}|${rec.e}`;
            const v = votes.get(key);
            if (v) v.c++;
            else votes.set(key, { c: 1, rec });
          }
          for (const v of votes.values()) if (v.c >= readQuorum(k)) out.set(n, v.rec);
        }),
      );
    }
    return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
  }

  async listObjectParts(
    bucket: string,
    key: string,
    uploadId: string,
    opts: { partNumberMarker?: number; maxParts: number },
  ): Promise<ListPartsResult> {
    await this.getBucketInfo(bucket);
    const { set, dir, group } = await this.#uploadOf(bucket, key, uploadId);
    const recs = await this.#partRecords(set, dir, group.version.erasure!.data);
    const marker = opts.partNumberMarker ?? 0;
    const after = [...recs.values()].filter((r) => r.n > marker);
    const page = after.slice(0, Math.max(0, opts.maxParts));
    return {
      parts: page.map(partInfoOf),
      isTruncated: after.length > page.length,
      nextPartNumberMarker: page.length > 0 ? page[page.length - 1]!.n : marker,
      upload: this.#uploadInfo(bucket, key, uploadId, group.version),
    };
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    await this.getBucketInfo(bucket);
    const { set, dir } = await this.#uploadOf(bucket, key, uploadId);
    const rs = await Promise.allSettled(set.drives.map((d) => d.delete(SYS_VOL, dir, { recursive: true })));
    const ok = rs.filter((r) => r.status === 'fulfilled' || hasCode(r.reason, 'FileNotFound')).length;
    if (ok < majority(set.width)) throw new SvcError('ErasureWriteQuorum', undefined, { ok });
  }

  async completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: CompletePart[],
    opts: { preconditions?: Preconditions; checksum?: ObjectChecksum } = {},
  ): Promise<ObjectInfo> {
    const meta = await this.getBucketInfo(bucket);
    if (parts.length === 0) throw new SvcError('MalformedXML', 'no parts');
    for (let i = 1; i < parts.length; i++) if (parts[i]!.number <= parts[i - 1]!.number) throw new SvcError('InvalidPartOrder');
    const path = objectPath(key);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      // Re-check the upload and its parts under the lock (an abort or a
      // concurrent complete may have won).
      const { set, dir, group } = await this.#uploadOf(bucket, key, uploadId);
      const up = group.version;
      const e = up.erasure!;
      const recs = await this.#partRecords(set, dir, e.data, new Set(parts.map((p) => p.number)));
      const chosen: PartMetaRecord[] = [];
      for (const p of parts) {
        const r = recs.get(p.number);
        if (!r || r.e !== p.etag.replace(/^"+|"+$/g, '')) throw new SvcError('InvalidPart', undefined, { part: p.number });
        chosen.push(r);
      }
      if (opts.preconditions) {
        const { res } = await set.resolve(bucket, path);
        if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
        checkWritePreconditions(opts.preconditions, res.kind === 'found' ? res.group.version : undefined);
      }
      const wq = writeQuorum(e.data, e.parity);
      // Give the chosen part files their final names and drop the rest, per
      // drive. Idempotent: a file already renamed by an earlier attempt stays.
      const keep = new Set(chosen.map((r) => `part.${r.n}`));
      const fin = await Promise.allSettled(
        set.drives.map(async (d) => {
          for (const r of chosen) {
            await d
              .renameFile(SYS_VOL, `${dir}/${up.dataDir}/part.${r.n}.${r.f}`, SYS_VOL, `${dir}/${up.dataDir}/part.${r.n}`)
              .catch(async (err: unknown) => {
                if (!hasCode(err, 'FileNotFound')) throw err;
                await d.readFileStream(SYS_VOL, `${dir}/${up.dataDir}/part.${r.n}`, 0, 0);
              });
          }
          for (const name of await d.listDir(SYS_VOL, `${dir}/${up.dataDir}`)) {
            if (!keep.has(name)) await d.delete(SYS_VOL, `${dir}/${up.dataDir}/${name}`, { recursive: name.endsWith('/') });
          }
        }),
      );
      const alive = fin.map((r) => r.status === 'fulfilled');
      if (alive.filter(Boolean).length < wq) throw new SvcError('ErasureWriteQuorum', undefined, { ok: alive.filter(Boolean).length });
      const md5 = createHash('md5');
      for (const r of chosen) md5.update(Buffer.from(r.e, 'hex'));
      const etag = `${md5.digest('hex')}-${chosen.length}`;
      const now = this.#clock.now();
      const size = chosen.reduce((a, r) => a + r.s, 0);
      const version: FileVersion = {
        versionId: meta.versioning === 'Enabled' ? randomUUID() : 'null',
        modTime: now,
        type: 'object',
        dataDir: up.dataDir,
        erasure: { ...e },
        size,
        parts: chosen.map((r) => ({ number: r.n, size: r.s, etag: r.e, modTime: r.t, ...(r.c ? { checksum: r.c } : {}) })),
        etag,
        contentHeaders: up.contentHeaders,
        userMeta: up.userMeta,
        sysMeta: {},
        storageClass: up.storageClass,
        tags: up.tags,
        inline: false,
      };
      // The edge computes the whole-object value (composite or full-object)
      // from the parts' checksums; without it, composite is derived here.
      const cs = opts.checksum ?? compositeChecksum(up.sysMeta.checksumAlgorithm, up.sysMeta.checksumType, chosen);
      if (cs) version.checksum = cs;
      const staged: StagedShards = { size, shardBytes: 0, inline: false, inlineData: [], alive, stagePath: dir, dataDir: up.dataDir };
      await set.commit(staged, version, bucket, path, bucket, key);
      return toObjectInfo(bucket, key, version, true);
    } finally {
      unlock();
    }
  }

  async listMultipartUploads(bucket: string, opts: ListUploadsOptions): Promise<ListUploadsResult> {
    await this.getBucketInfo(bucket);
    const prefix = opts.prefix ?? '';
    const all: MultipartUploadInfo[] = [];
    for (const pool of this.#pools) {
      for (const set of pool.sets) {
        const hashes = new Set<string>();
        for (const r of await Promise.allSettled(set.drives.map((d) => d.listDir(SYS_VOL, MULTIPART_DIR)))) {
          if (r.status === 'fulfilled') for (const h of r.value) if (h.endsWith('/')) hashes.add(h.slice(0, -1));
        }
        for (const h of hashes) {
          const ups = new Set<string>();
          for (const r of await Promise.allSettled(set.drives.map((d) => d.listDir(SYS_VOL, `${MULTIPART_DIR}/${h}`)))) {
            if (r.status === 'fulfilled') for (const u of r.value) if (u.endsWith('/')) ups.add(u.slice(0, -1));
          }
          for (const u of ups) {
            const { res } = await set.resolve(SYS_VOL, `${MULTIPART_DIR}/${h}/${u}`);
            if (res.kind !== 'found') continue;
            const v = res.group.version;
            const key = v.sysMeta.key ?? '';
            if (v.sysMeta.bucket !== bucket || !key.startsWith(prefix)) continue;
            all.push(this.#uploadInfo(bucket, key, encodeUploadId(pool.index, u, v.modTime), v));
          }
        }
      }
    }
    all.sort((a, b) => compareKeys(a.name, b.name) || a.initiated.getTime() - b.initiated.getTime());
    const out: ListUploadsResult = { uploads: [], prefixes: [], isTruncated: false };
    const delim = opts.delimiter ?? '';
    let count = 0;
    let afterUploadMarker = opts.uploadIdMarker === undefined;
    for (const u of all) {
      if (opts.keyMarker !== undefined && opts.keyMarker !== '') {
        if (compareKeys(u.name, opts.keyMarker) < 0) continue;
        if (u.name === opts.keyMarker) {
          if (!opts.uploadIdMarker) continue;
          if (!afterUploadMarker) {
            if (u.uploadId === opts.uploadIdMarker) afterUploadMarker = true;
            continue;
          }
        }
      }
      const cp = commonPrefixOf(u.name, prefix, delim);
      if (count >= opts.maxUploads) {
        out.isTruncated = true;
        break;
      }
      if (cp !== undefined) {
        if (out.prefixes[out.prefixes.length - 1] !== cp) {
          out.prefixes.push(cp);
          count++;
        }
        continue;
      }
      out.uploads.push(u);
      count++;
    }
    if (out.isTruncated) {
      const lastU = out.uploads[out.uploads.length - 1];
      if (lastU) {
        out.nextKeyMarker = lastU.name;
        out.nextUploadIdMarker = lastU.uploadId;
      }
    }
    return out;
  }

  // ---- operations

  async capacity(): Promise<PoolCapacity[]> {
    return Promise.all(
      this.#pools.map(async (pool) => {
        const drives = (
          await Promise.all(
            pool.sets.map((set) =>
              Promise.all(
                set.drives.map(async (d, slot) => {
                  const info = await d.diskInfo().catch(() => ({ online: false, total: 0, used: 0, free: 0 }));
                  return {
                    endpoint: d.endpoint,
                    pool: pool.index,
                    set: set.index,
                    slot,
                    online: info.online,
                    total: info.total,
                    used: info.used,
                    free: info.free,
                  };
                }),
              ),
            ),
          )
        ).flat();
        const online = drives.filter((d) => d.online);
        const rawTotal = online.reduce((a, d) => a + d.total, 0);
        const rawFree = online.reduce((a, d) => a + d.free, 0);
        const ratio = (pool.width - pool.standardParity) / pool.width;
        return {
          pool: pool.index,
          rawTotal,
          rawFree,
          usableTotal: Math.floor(rawTotal * ratio),
          usableFree: Math.floor(rawFree * ratio),
          drives,
        };
      }),
    );
  }

  health(): StorageHealth {
    let read = true;
    let write = true;
    let online = 0;
    let total = 0;
    for (const pool of this.#pools) {
      const k = pool.width - pool.standardParity;
      for (const set of pool.sets) {
        const up = set.drives.filter((d) => d.isOnline()).length;
        online += up;
        total += set.width;
        if (up < readQuorum(k)) read = false;
        if (up < writeQuorum(k, pool.standardParity)) write = false;
      }
    }
    return { readQuorum: read, writeQuorum: write, onlineDrives: online, totalDrives: total };
  }

  async close(): Promise<void> {
    this.#stopProbe();
    this.#bucketCache.clear();
  }
}

/** Stored per uploaded part (`part.N.meta`, msgpack). */
interface PartMetaRecord {
  n: number;
  s: number;
  e: string;
  t: number;
  /** File id: the part's shard file is `part.N.<f>` until complete. */
  f: string;
  c?: { algorithm: string; value: string; type: string };
}

function partInfoOf(r: PartMetaRecord): PartInfo {
  const p: PartInfo = { number: r.n, size: r.s, etag: r.e, modTime: new Date(r.t) };
  const c = toChecksum(r.c);
  if (c) p.checksum = c;
  return p;
}

/** COMPOSITE checksum of a multipart object: hash of the parts' raw checksums, `-N`. */
function compositeChecksum(
  algorithm: string | undefined,
  type: string | undefined,
  parts: PartMetaRecord[],
): FileVersion['checksum'] | undefined {
  if (!algorithm || (type && type !== 'COMPOSITE')) return undefined;
  if (!parts.every((p) => p.c && p.c.algorithm === algorithm)) return undefined;
  const raw = Buffer.concat(parts.map((p) => Buffer.from(p.c!.value, 'base64')));
  let digest: Buffer;
  switch (algorithm) {
    case 'SHA1':
      digest = createHash('sha1').update(raw).digest();
      break;
    case 'SHA256':
      digest = createHash('sha256').update(raw).digest();
      break;
    case 'CRC32':
      digest = Buffer.alloc(4);
      digest.writeUInt32BE(zlibCrc32(raw) >>> 0);
      break;
    case 'CRC32C':
      digest = Buffer.alloc(4);
      digest.writeUInt32BE(crc32c(raw) >>> 0);
      break;
    default:
      return undefined;
  }
  return { algorithm, value: `${digest.toString('base64')}-${parts.length}`, type: 'COMPOSITE' };
}

/** The common prefix `name` rolls up into (prefix through the next delimiter), or undefined. */
function commonPrefixOf(name: string, prefix: string, delim: string): string | undefined {
  if (delim === '') return undefined;
  const i = name.indexOf(delim, prefix.length);
  return i >= 0 ? name.slice(0, i + delim.length) : undefined;
}

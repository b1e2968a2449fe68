/**
 * Multipart uploads. An upload lives in the pool and set its key places it
 * in: `.svc.sys/multipart/<sha256(bucket/key)>/<uuid>/` holds the upload's
 * xl.meta (geometry, headers, `sysMeta.bucket`/`key`), its part shard files
 * under the upload's data dir, and one `part.N.meta` record per uploaded part.
 * Complete renames the chosen parts into place and commits the object like a
 * PUT. The upload id encodes the pool, the upload uuid and its start time.
 */
import { createHash, randomUUID } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { pack, unpack } from 'msgpackr';
import { BLOCK_SIZE } from '../erasure/index.ts';
import { type FileVersion, MULTIPART_DIR, SYS_VOL } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import { compareKeys } from '../util/key-order.ts';
import type { ErasureSet, StagedShards } from './erasure-set.ts';
import type { Governance } from './governance.ts';
import { commonPrefixOf } from './listing.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { storedHeaders, toChecksum, toObjectInfo } from './object-info.ts';
import { lockOf, newVersionLock, withLock } from './object-lock.ts';
import { hashOrder } from './placement.ts';
import { replicaMeta } from './replication-status.ts';
import { type ChangeOrigin, createdChange, type PostCommitHook, withPostCommit } from './post-commit.ts';
import type { Pool, Pools } from './pools.ts';
import { majority, readQuorum, type VersionGroup, writeQuorum } from './quorum.ts';
import { guardNewVersion } from './write-guard.ts';
import { decryptedSizeOf, effectiveSse, encryptPart, openObjectKey, sealNewKey, SSE_META, sseEtag, sseOf, storedSize } from './sse.ts';
import type {
  BucketMetadata,
  CompletePart,
  ListPartsResult,
  ListUploadsOptions,
  ListUploadsResult,
  MultipartUploadInfo,
  NewMultipartOptions,
  ObjectChecksum,
  ObjectInfo,
  PartInfo,
  Preconditions,
  PutData,
  StorageClass,
} from './types.ts';

const UPLOAD_VERSION_ID = 'upload';

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

export interface MultipartOptions {
  pools: Pools;
  clock: Clock;
  locker: NamespaceLocker;
  governance: Governance;
  /** The bucket's metadata (NoSuchBucket when absent). */
  bucketInfo: (bucket: string) => Promise<BucketMetadata>;
  /** The pool a new version of `bucket/key` goes to. */
  placement: (bucket: string, key: string) => Promise<Pool>;
  /** Counts a part's bytes against the pool's sampled free space (placement of later new objects). */
  reserve: (pool: number, bytes: number) => void;
  /** The post-commit hook a completed upload's new version is reported through. */
  postCommit?: () => PostCommitHook | undefined;
}

/** Upload record keys of a replica's upload: the version id and mod time its completion takes. */
const REPLICA_UPLOAD_VID = 'replicaVid';
const REPLICA_UPLOAD_MTIME = 'replicaMtime';

export class Multipart {
  readonly #pools: Pools;
  readonly #clock: Clock;
  readonly #locker: NamespaceLocker;
  readonly #gov: Governance;
  readonly #bucketInfo: MultipartOptions['bucketInfo'];
  readonly #postCommit: MultipartOptions['postCommit'];
  readonly #placement: MultipartOptions['placement'];
  readonly #reserve: MultipartOptions['reserve'];

  constructor(opts: MultipartOptions) {
    this.#pools = opts.pools;
    this.#clock = opts.clock;
    this.#locker = opts.locker;
    this.#gov = opts.governance;
    this.#bucketInfo = opts.bucketInfo;
    this.#postCommit = opts.postCommit;
    this.#placement = opts.placement;
    this.#reserve = opts.reserve;
  }

  async #uploadOf(
    bucket: string,
    key: string,
    uploadId: string,
  ): Promise<{ pool: Pool; set: ErasureSet; dir: string; group: VersionGroup; ms: number }> {
    const { pool: pi, uuid, ms } = decodeUploadId(uploadId);
    const pool = this.#pools.list[pi];
    if (!pool) throw new SvcError('NoSuchUpload');
    const set = this.#pools.setOf(pool, key);
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
    const sse = sseOf(v.sysMeta);
    if (sse) info.sse = sse;
    return info;
  }

  async newMultipartUpload(bucket: string, key: string, opts: NewMultipartOptions): Promise<MultipartUploadInfo> {
    await this.#bucketInfo(bucket);
    objectPath(key);
    const [lockCfg, encryption] = await Promise.all([this.#gov.lockConfig(bucket), this.#gov.encryption(bucket)]);
    // Refuses lock settings on a bucket without object lock now; the bucket's
    // default retention is applied when the upload completes (the version's creation).
    newVersionLock(lockCfg, opts.lock, this.#clock.now());
    const sse = effectiveSse(opts.sse, encryption);
    const sealed = sse ? sealNewKey(sse, this.#gov.kms, bucket, key) : undefined;
    const pool = await this.#placement(bucket, key);
    const set = this.#pools.setOf(pool, key);
    const sc = opts.storageClass ?? 'STANDARD';
    const parity = this.#pools.parity(pool, sc);
    const k = set.width - parity;
    const uuid = randomUUID();
    const now = this.#clock.now();
    const uploadId = encodeUploadId(pool.index, uuid, now);
    const dir = multipartDir(bucket, key, uuid);
    const sysMeta: Record<string, string> = { bucket, key };
    if (opts.checksumAlgorithm) sysMeta.checksumAlgorithm = opts.checksumAlgorithm;
    if (opts.checksumType) sysMeta.checksumType = opts.checksumType;
    if (opts.acl) sysMeta.acl = opts.acl;
    // Every part is encrypted with the upload's object key (sealed here), each with its own part key.
    if (sealed) Object.assign(sysMeta, sealed.sysMeta);
    // The retention and legal hold asked for, kept for the completed version.
    Object.assign(sysMeta, withLock({}, opts.lock ?? {}));
    // A replica's upload keeps the source's version id and time for its completion.
    if (opts.replica && opts.versionId !== undefined) {
      sysMeta[REPLICA_UPLOAD_VID] = opts.versionId;
      sysMeta[REPLICA_UPLOAD_MTIME] = String(opts.modTime?.getTime() ?? this.#clock.now());
    }
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

  async putObjectPart(bucket: string, key: string, uploadId: string, partNumber: number, data: PutData, opts: { sseCustomerKey?: Uint8Array } = {}): Promise<PartInfo> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) throw new SvcError('InvalidArgument', 'bad part number');
    await this.#bucketInfo(bucket);
    const { pool, set, dir, group } = await this.#uploadOf(bucket, key, uploadId);
    this.#reserve(pool.index, data.size);
    const up = group.version;
    const e = up.erasure!;
    // An encrypted upload: the part is sealed with its own part key (an SSE-C upload needs the client's key on every part).
    const objectKey = openObjectKey(up.sysMeta, this.#gov.kms, opts.sseCustomerKey, bucket, key);
    const staged = await set.stageShards(objectKey ? encryptPart(objectKey, partNumber, data.stream) : data.stream, objectKey ? storedSize(data.size) : data.size, {
      data: e.data,
      parity: e.parity,
      distribution: e.distribution,
      inlineBudget: 0,
      partNumber,
      dataDir: up.dataDir,
    });
    const etag = sseEtag(objectKey, data.md5Hex());
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
    const info: PartInfo = { number: partNumber, size: data.size >= 0 ? data.size : decryptedSizeOf(staged.size, objectKey !== undefined), etag, modTime: new Date(now) };
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
    await this.#bucketInfo(bucket);
    const { set, dir, group } = await this.#uploadOf(bucket, key, uploadId);
    const recs = await this.#partRecords(set, dir, group.version.erasure!.data);
    const marker = opts.partNumberMarker ?? 0;
    const after = [...recs.values()].filter((r) => r.n > marker);
    const page = after.slice(0, Math.max(0, opts.maxParts));
    const encrypted = sseOf(group.version.sysMeta) !== undefined;
    return {
      parts: page.map((r) => partInfoOf(r, encrypted)),
      isTruncated: after.length > page.length,
      nextPartNumberMarker: page.length > 0 ? page[page.length - 1]!.n : marker,
      upload: this.#uploadInfo(bucket, key, uploadId, group.version),
    };
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    await this.#bucketInfo(bucket);
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
    opts: { preconditions?: Preconditions; checksum?: ObjectChecksum; origin?: ChangeOrigin } = {},
  ): Promise<ObjectInfo> {
    const meta = await this.#bucketInfo(bucket);
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
      const replicaVid = up.sysMeta[REPLICA_UPLOAD_VID];
      const versionId = replicaVid ?? (meta.versioning === 'Enabled' ? randomUUID() : 'null');
      const lockCfg = await this.#gov.lockConfig(bucket);
      await guardNewVersion(this.#gov, { set, bucket, path, versionId, preconditions: opts.preconditions, lock: lockCfg });
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
      const now = replicaVid !== undefined ? Number(up.sysMeta[REPLICA_UPLOAD_MTIME]) : this.#clock.now();
      const size = chosen.reduce((a, r) => a + r.s, 0);
      // The bucket's default retention applies from the completion (unless the upload asked for one).
      const lock = newVersionLock(lockCfg, lockOf(up.sysMeta), now);
      const sysMeta: Record<string, string> = withLock(up.sysMeta.acl ? { acl: up.sysMeta.acl } : {}, lock);
      for (const k of Object.values(SSE_META)) if (up.sysMeta[k] !== undefined) sysMeta[k] = up.sysMeta[k];
      if (replicaVid !== undefined) Object.assign(sysMeta, replicaMeta(this.#clock.now()));
      const version: FileVersion = {
        versionId,
        modTime: now,
        type: 'object',
        dataDir: up.dataDir,
        erasure: { ...e },
        size,
        parts: chosen.map((r) => ({ number: r.n, size: r.s, etag: r.e, modTime: r.t, ...(r.c ? { checksum: r.c } : {}) })),
        etag,
        contentHeaders: up.contentHeaders,
        userMeta: up.userMeta,
        sysMeta,
        storageClass: up.storageClass,
        tags: up.tags,
        inline: false,
      };
      // The edge computes the whole-object value (composite or full-object)
      // from the parts' checksums; without it, composite is derived here.
      const cs = opts.checksum ?? compositeChecksum(up.sysMeta.checksumAlgorithm, up.sysMeta.checksumType, chosen);
      if (cs) version.checksum = cs;
      const staged: StagedShards = { size, shardBytes: 0, inline: false, inlineData: [], alive, stagePath: dir, dataDir: up.dataDir };
      const info = toObjectInfo(bucket, key, version, true);
      const change = createdChange(info, 'multipart', opts.origin);
      if (replicaVid !== undefined) change.replica = true;
      await withPostCommit(this.#postCommit?.(), change, (extra) => set.commit(staged, Object.keys(extra).length === 0 ? version : { ...version, sysMeta: { ...sysMeta, ...extra } }, bucket, path, bucket, key));
      return info;
    } finally {
      unlock();
    }
  }

  /** Every open upload held by one erasure set at read quorum: its id part and its upload record. */
  async *#uploadsIn(set: ErasureSet): AsyncGenerator<{ uuid: string; version: FileVersion }> {
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
        if (res.kind === 'found') yield { uuid: u, version: res.group.version };
      }
    }
  }

  /** Every open upload on `pool` at quorum. */
  async *#uploadsOn(pool: Pool): AsyncGenerator<{ uuid: string; version: FileVersion }> {
    for (const set of pool.sets) yield* this.#uploadsIn(set);
  }

  /** Uploads still open on `pool` (a drained pool waits for them; see background/movement/). */
  async openUploads(pool: Pool): Promise<number> {
    let n = 0;
    for await (const _ of this.#uploadsOn(pool)) n++;
    return n;
  }

  /**
   * The uploads held by one erasure set (every bucket, or one), at read
   * quorum. The lifecycle sweep of a scanned set uses it.
   */
  async uploadsInSet(pool: Pool, set: ErasureSet, bucket?: string): Promise<MultipartUploadInfo[]> {
    const out: MultipartUploadInfo[] = [];
    for await (const { uuid, version: v } of this.#uploadsIn(set)) {
      const b = v.sysMeta.bucket ?? '';
      if (bucket !== undefined && b !== bucket) continue;
      out.push(this.#uploadInfo(b, v.sysMeta.key ?? '', encodeUploadId(pool.index, uuid, v.modTime), v));
    }
    return out;
  }

  async listMultipartUploads(bucket: string, opts: ListUploadsOptions): Promise<ListUploadsResult> {
    await this.#bucketInfo(bucket);
    const prefix = opts.prefix ?? '';
    const all: MultipartUploadInfo[] = [];
    for (const pool of this.#pools.list) {
      for await (const { uuid, version: v } of this.#uploadsOn(pool)) {
        const key = v.sysMeta.key ?? '';
        if (v.sysMeta.bucket !== bucket || !key.startsWith(prefix)) continue;
        all.push(this.#uploadInfo(bucket, key, encodeUploadId(pool.index, uuid, v.modTime), v));
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

/** A part as clients see it (`encrypted`: its stored size is ciphertext; the plaintext size is shown). */
function partInfoOf(r: PartMetaRecord, encrypted: boolean): PartInfo {
  const p: PartInfo = { number: r.n, size: decryptedSizeOf(r.s, encrypted), etag: r.e, modTime: new Date(r.t) };
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

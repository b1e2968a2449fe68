/**
 * Buckets: one volume per bucket on every drive, and the bucket metadata
 * record (`.svc.sys/buckets/<bucket>/.metadata.bin`, a sys record) with a
 * short-lived per-node cache that peers invalidate on change.
 *
 * The record (msgpack) is versioned: v1 held name, creation time,
 * versioning, tags and location; v2 adds `configs`, the bucket's
 * configuration documents by kind (`BucketConfigKind`: policy, ACL, CORS,
 * lifecycle, …) stored as the bytes the edge handed over. v1 records read
 * as v2 with no documents and are rewritten as v2 on their next change.
 * Fields a v2 record carries that this build does not know are kept across
 * rewrites, so a later build can add fields without a new version; a record
 * of a higher version is refused (`FileCorrupt`), never half-understood.
 */
import { pack, unpack } from 'msgpackr';
import { BUCKETS_DIR, type Drive } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type BucketSync, bucketRecordPath, makePoolVolumes, type PoolVolumes } from './bucket-sync.ts';
import type { Pools } from './pools.ts';
import { checkLockConfigChange, decodeLockConfig, encodeLockConfig } from './object-lock.ts';
import { majority } from './quorum.ts';
import type { SysRecords } from './sys-records.ts';
import { BUCKET_CONFIG_KINDS, type BucketConfigKind, type BucketInfo, type BucketMetadata, type VersioningStatus } from './types.ts';

/** The stored record, current version. */
export interface BucketRecord {
  v: 2;
  name: string;
  created: number;
  versioning: VersioningStatus;
  tags: string;
  location: string;
  configs: Record<string, Uint8Array>;
  /** Fields of a newer build, kept as read. */
  [field: string]: unknown;
}

const RECORD_VERSION = 2;
/** Largest configuration document kept in the record (S3's largest, a lifecycle or notification set, stays far below). */
export const MAX_BUCKET_CONFIG_BYTES = 1024 * 1024;

/** Decodes a stored record of any known version into the current shape. */
export function decodeBucketRecord(raw: Uint8Array, bucket: string): BucketRecord {
  let rec: Record<string, unknown>;
  try {
    rec = unpack(raw) as Record<string, unknown>;
  } catch (err) {
    throw new SvcError('FileCorrupt', 'bucket metadata record', { bucket }, { cause: err });
  }
  if (typeof rec !== 'object' || rec === null || typeof rec.v !== 'number') throw new SvcError('FileCorrupt', 'bucket metadata record', { bucket });
  if (rec.v !== 1 && rec.v !== RECORD_VERSION) {
    throw new SvcError('FileCorrupt', `bucket metadata record version ${String(rec.v)} is newer than this build reads`, { bucket });
  }
  const configs: Record<string, Uint8Array> = {};
  if (rec.v === RECORD_VERSION && typeof rec.configs === 'object' && rec.configs !== null) {
    for (const [k, v] of Object.entries(rec.configs as Record<string, unknown>)) if (v instanceof Uint8Array) configs[k] = v;
  }
  return { ...rec, v: RECORD_VERSION, configs } as BucketRecord;
}

export function encodeBucketRecord(rec: BucketRecord): Uint8Array {
  return pack({ ...rec, v: RECORD_VERSION });
}

function metaOf(rec: BucketRecord): BucketMetadata {
  return { name: rec.name, created: new Date(rec.created), versioning: rec.versioning, tags: rec.tags, location: rec.location };
}

function checkKind(kind: string): asserts kind is BucketConfigKind {
  if (!(BUCKET_CONFIG_KINDS as readonly string[]).includes(kind)) throw new SvcError('InvalidArgument', `unknown bucket configuration kind: ${kind}`);
}

const BUCKET_CACHE_MS = 2_000;

function validateBucket(bucket: string): void {
  if (bucket === '' || bucket.startsWith('.') || bucket.includes('/')) throw new SvcError('InvalidBucketName');
}

export { bucketRecordPath } from './bucket-sync.ts';

export interface BucketsOptions {
  pools: Pools;
  records: SysRecords;
  sync: BucketSync;
  clock: Clock;
  logger: Logger;
  /** Called after this node changed or removed a bucket's metadata (peers drop their cached copy). */
  onBucketMetaChanged?: ((bucket: string) => void) | undefined;
}

export class Buckets {
  readonly #pools: Pools;
  readonly #records: SysRecords;
  readonly #sync: BucketSync;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onChanged: ((bucket: string) => void) | undefined;
  readonly #cache = new Map<string, { at: number; rec: BucketRecord }>();

  constructor(opts: BucketsOptions) {
    this.#pools = opts.pools;
    this.#records = opts.records;
    this.#sync = opts.sync;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#onChanged = opts.onBucketMetaChanged;
  }

  #remember(rec: BucketRecord): BucketRecord {
    this.#cache.set(rec.name, { at: this.#clock.now(), rec });
    return rec;
  }

  /**
   * Changes the record under its lock, from a fresh quorum read (not the
   * cache), so concurrent changes of different fields on different nodes
   * never undo each other; peers are told to drop their cached copy.
   */
  async #change(bucket: string, fn: (rec: BucketRecord) => void): Promise<void> {
    if (bucket === '' || bucket.startsWith('.')) throw new SvcError('NoSuchBucket');
    let next: BucketRecord | undefined;
    const written = await this.#records.update(bucketRecordPath(bucket), (raw) => {
      if (raw === undefined) throw new SvcError('NoSuchBucket');
      next = decodeBucketRecord(raw, bucket);
      fn(next);
      return encodeBucketRecord(next);
    });
    this.#remember(next!);
    this.#onChanged?.(bucket);
    // A pool that missed the change gets it from the bucket sync.
    if (written && written.failed.length > 0) this.#sync.markDirty();
  }

  /** The bucket's current record (cached for a moment). */
  async #record(bucket: string): Promise<BucketRecord> {
    const c = this.#cache.get(bucket);
    if (c && this.#clock.now() - c.at < BUCKET_CACHE_MS) return c.rec;
    if (bucket === '' || bucket.startsWith('.')) throw new SvcError('NoSuchBucket');
    const raw = await this.#records.read(bucketRecordPath(bucket));
    if (!raw) {
      this.#cache.delete(bucket);
      throw new SvcError('NoSuchBucket');
    }
    return this.#remember(decodeBucketRecord(raw, bucket));
  }

  /** Drops the cached metadata of `bucket` (a peer changed it); the next use re-reads it at quorum. */
  forget(bucket: string): void {
    this.#cache.delete(bucket);
  }

  clear(): void {
    this.#cache.clear();
  }

  /** Removes the bucket's volume (contents and all) from every drive; each set needs a majority. */
  async #deleteVolumes(bucket: string): Promise<void> {
    for (const pool of this.#pools.list) {
      for (const set of pool.sets) {
        const rs = await Promise.allSettled(set.drives.map((d) => d.deleteVol(bucket, true)));
        const ok = rs.filter((r) => r.status === 'fulfilled' || hasCode(r.reason, 'VolumeNotFound')).length;
        if (ok < majority(set.width)) {
          throw new SvcError('ErasureWriteQuorum', undefined, { pool: pool.index, set: set.index, ok, needed: majority(set.width) });
        }
      }
    }
  }

  /**
   * Creates the bucket: under its record's lock, refused when a record says
   * it exists; its volume on every pool, then its record on every pool.
   * Succeeds when at least one pool holds both volume and record; pools the
   * create could not reach (unreachable, below quorum) are left to the
   * bucket sync, which completes them. A failed create removes the volumes
   * it made. A bucket whose only record copy sits on a pool that cannot be
   * read now (created while every other pool was away, and not yet synced)
   * is not seen: creating it again starts it afresh, and that newer record
   * wins once the pool is back.
   */
  async make(bucket: string, opts: { location?: string; objectLock?: boolean } = {}): Promise<void> {
    validateBucket(bucket);
    const created: Drive[] = [];
    let volumes: PoolVolumes[] = [];
    const rec: BucketRecord = {
      v: RECORD_VERSION,
      name: bucket,
      created: this.#clock.now(),
      // Object lock forces versioning on, for good (see `setVersioning`).
      versioning: opts.objectLock ? 'Enabled' : 'Unversioned',
      tags: '',
      location: opts.location ?? '',
      configs: opts.objectLock ? { 'object-lock': encodeLockConfig({ enabled: true }) } : {},
    };
    try {
      const written = await this.#records.update(
        bucketRecordPath(bucket),
        async (cur) => {
          if (cur !== undefined) throw new SvcError('BucketAlreadyOwnedByYou');
          volumes = await Promise.all(this.#pools.list.map((pool) => makePoolVolumes(pool, bucket)));
          for (const v of volumes) created.push(...v.created);
          if (!volumes.some((v) => v.ok)) {
            throw new SvcError('ErasureWriteQuorum', `bucket volume below quorum on every pool: ${volumes.map((v) => `pool ${v.pool.index}: ${v.reason}`).join('; ')}`);
          }
          return encodeBucketRecord(rec);
        },
        { unreachableOk: true },
      );
      this.#remember(rec);
      this.#onChanged?.(bucket);
      const missed = [...volumes.filter((v) => !v.ok).map((v) => v.pool.index), ...(written?.failed.map((f) => f.pool) ?? [])];
      if (missed.length > 0) {
        this.#sync.markDirty();
        this.#log.warn(
          { event: 'bucket_created_partial', bucket, pools: [...new Set(missed)].sort() },
          'bucket created; some pools could not be reached and will receive it from the bucket sync',
        );
      } else this.#log.info({ event: 'bucket_created', bucket }, 'bucket created');
    } catch (err) {
      if (!hasCode(err, 'BucketAlreadyOwnedByYou')) {
        // Roll back the volumes this call created: a failed create leaves nothing.
        await Promise.allSettled(created.map((d) => d.deleteVol(bucket, false)));
      }
      throw err;
    }
  }

  async info(bucket: string): Promise<BucketMetadata> {
    return metaOf(await this.#record(bucket));
  }

  /** A configuration document of the bucket; undefined when none is set. */
  async getConfig(bucket: string, kind: string): Promise<Uint8Array | undefined> {
    checkKind(kind);
    const doc = (await this.#record(bucket)).configs[kind];
    return doc === undefined ? undefined : new Uint8Array(doc);
  }

  /** Sets (or, with undefined, removes) a configuration document. */
  async setConfig(bucket: string, kind: string, data: Uint8Array | undefined): Promise<void> {
    checkKind(kind);
    if (data !== undefined && data.length > MAX_BUCKET_CONFIG_BYTES) {
      throw new SvcError('InvalidArgument', `bucket ${kind} configuration over ${MAX_BUCKET_CONFIG_BYTES} bytes`);
    }
    const copy = data === undefined ? undefined : new Uint8Array(data);
    await this.#change(bucket, (rec) => {
      if (kind === 'object-lock') checkLockConfigChange(rec.versioning, rec.configs[kind], copy);
      if (copy === undefined) delete rec.configs[kind];
      else rec.configs[kind] = copy;
    });
  }

  /** Buckets with a live record (volumes alone, e.g. left by a crashed create, are not buckets). */
  async list(): Promise<BucketInfo[]> {
    const { names, answered, drives } = await this.#records.list(BUCKETS_DIR);
    if (answered < Math.max(1, Math.floor(drives / 2))) throw new SvcError('ErasureReadQuorum');
    const out: BucketInfo[] = [];
    for (const entry of names.filter((n) => n.endsWith('/')).sort()) {
      const name = entry.slice(0, -1);
      try {
        const meta = await this.info(name);
        out.push({ name, created: meta.created });
      } catch (err) {
        if (!hasCode(err, 'NoSuchBucket')) throw err;
      }
    }
    return out;
  }

  /** Removes the bucket; `isEmpty` is asked first unless `force` (never forced for a bucket with object lock). */
  async delete(bucket: string, opts: { force?: boolean }, isEmpty: () => Promise<boolean>): Promise<void> {
    const rec = await this.#record(bucket);
    const force = opts.force === true && !decodeLockConfig(rec.configs['object-lock']);
    if (!force && !(await isEmpty())) throw new SvcError('BucketNotEmpty');
    await this.#deleteVolumes(bucket);
    this.#cache.delete(bucket);
    const written = await this.#records.delete(bucketRecordPath(bucket));
    if (written.failed.length > 0) this.#sync.markDirty();
    this.#onChanged?.(bucket);
    this.#log.info({ event: 'bucket_deleted', bucket, force: opts.force === true }, 'bucket deleted');
  }

  async setVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void> {
    await this.#change(bucket, (rec) => {
      if (status !== 'Enabled' && decodeLockConfig(rec.configs['object-lock'])) {
        throw new SvcError('InvalidBucketState', 'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.');
      }
      rec.versioning = status;
    });
  }

  async setTags(bucket: string, tags: string): Promise<void> {
    await this.#change(bucket, (rec) => {
      rec.tags = tags;
    });
  }
}

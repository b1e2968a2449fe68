/**
 * Buckets: one volume per bucket on every drive, and the bucket metadata
 * record (`.svc.sys/buckets/<bucket>/.metadata.bin`, a sys record) with a
 * short-lived per-node cache that peers invalidate on change.
 */
import { pack, unpack } from 'msgpackr';
import { BUCKETS_DIR, type Drive } from '../storage/drive.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { Pools } from './pools.ts';
import { majority } from './quorum.ts';
import type { SysRecords } from './sys-records.ts';
import type { BucketInfo, BucketMetadata, VersioningStatus } from './types.ts';

interface BucketRecord {
  v: 1;
  name: string;
  created: number;
  versioning: VersioningStatus;
  tags: string;
  location: string;
}

const BUCKET_CACHE_MS = 2_000;

function validateBucket(bucket: string): void {
  if (bucket === '' || bucket.startsWith('.') || bucket.includes('/')) throw new SvcError('InvalidBucketName');
}

export function bucketRecordPath(bucket: string): string {
  return `${BUCKETS_DIR}/${bucket}/.metadata.bin`;
}

export interface BucketsOptions {
  pools: Pools;
  records: SysRecords;
  clock: Clock;
  logger: Logger;
  /** Called after this node changed or removed a bucket's metadata (peers drop their cached copy). */
  onBucketMetaChanged?: ((bucket: string) => void) | undefined;
}

export class Buckets {
  readonly #pools: Pools;
  readonly #records: SysRecords;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onChanged: ((bucket: string) => void) | undefined;
  readonly #cache = new Map<string, { at: number; meta: BucketMetadata }>();

  constructor(opts: BucketsOptions) {
    this.#pools = opts.pools;
    this.#records = opts.records;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#onChanged = opts.onBucketMetaChanged;
  }

  async #save(meta: BucketMetadata): Promise<void> {
    const rec: BucketRecord = {
      v: 1,
      name: meta.name,
      created: meta.created.getTime(),
      versioning: meta.versioning,
      tags: meta.tags,
      location: meta.location,
    };
    await this.#records.write(bucketRecordPath(meta.name), pack(rec));
    this.#cache.set(meta.name, { at: this.#clock.now(), meta });
    this.#onChanged?.(meta.name);
  }

  /** Drops the cached metadata of `bucket` (a peer changed it); the next use re-reads it at quorum. */
  forget(bucket: string): void {
    this.#cache.delete(bucket);
  }

  clear(): void {
    this.#cache.clear();
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
    for (const pool of this.#pools.list) {
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

  async make(bucket: string, opts: { location?: string } = {}): Promise<void> {
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
      await this.#save({
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

  async info(bucket: string): Promise<BucketMetadata> {
    const c = this.#cache.get(bucket);
    if (c && this.#clock.now() - c.at < BUCKET_CACHE_MS) return c.meta;
    if (bucket === '' || bucket.startsWith('.')) throw new SvcError('NoSuchBucket');
    const raw = await this.#records.read(bucketRecordPath(bucket));
    if (!raw) {
      this.#cache.delete(bucket);
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
    this.#cache.set(bucket, { at: this.#clock.now(), meta });
    return meta;
  }

  async list(): Promise<BucketInfo[]> {
    const counts = new Map<string, number>();
    let answered = 0;
    const drives = this.#pools.allDrives();
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
        const meta = await this.info(name);
        out.push({ name, created: meta.created });
      } catch (err) {
        if (!hasCode(err, 'NoSuchBucket')) throw err;
      }
    }
    return out;
  }

  /** Removes the bucket; `isEmpty` is asked first unless `force`. */
  async delete(bucket: string, opts: { force?: boolean }, isEmpty: () => Promise<boolean>): Promise<void> {
    await this.info(bucket);
    if (!opts.force && !(await isEmpty())) throw new SvcError('BucketNotEmpty');
    await this.#onAllDrives(
      (d) => d.deleteVol(bucket, true),
      (e) => hasCode(e, 'VolumeNotFound'),
      majority,
    );
    this.#cache.delete(bucket);
    await this.#records.delete(bucketRecordPath(bucket));
    this.#onChanged?.(bucket);
    this.#log.info({ event: 'bucket_deleted', bucket, force: opts.force === true }, 'bucket deleted');
  }

  async setVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void> {
    const meta = await this.info(bucket);
    await this.#save({ ...meta, versioning: status });
  }

  async setTags(bucket: string, tags: string): Promise<void> {
    const meta = await this.info(bucket);
    await this.#save({ ...meta, tags });
  }
}

/**
 * The object layer over pools → sets → drives (`ObjectLayer`): the facade
 * that composes one module per concern and hands each the shared `Pools`
 * view. Object reads (`object-reads.ts`); writes, deletes and in-place
 * metadata changes (`object-writes.ts`); where new versions go
 * (`pool-choice.ts`); the drive probe (`drive-probe.ts`); buckets
 * (`buckets.ts`), listings (`listing.ts`), multipart uploads
 * (`multipart.ts`), capacity and health (`capacity.ts`) and the `.svc.sys`
 * records (`sys-records.ts`) live in their modules.
 * Quorum-bound drive work is delegated to `ErasureSet`; the pools and
 * placement to `Pools`.
 */
import type { Kms } from '../crypto/kms.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { BucketSync } from './bucket-sync.ts';
import { Buckets } from './buckets.ts';
import { type DriveIssueReport, poolCapacity, storageHealth } from './capacity.ts';
import { DRIVE_PROBE_MS, DriveProbe } from './drive-probe.ts';
import type { ListQuorum } from './list-merge.ts';
import { applyLifecycle, type LifecycleOutcome } from './lifecycle/apply.ts';
import type { LifecycleConfig } from './lifecycle/rules.ts';
import { Listing } from './listing.ts';
import { MrfQueue } from './mrf.ts';
import { Multipart } from './multipart.ts';
import { ObjectMover } from './object-move.ts';
import { LocalNamespaceLocker, type NamespaceLocker } from './ns-lock.ts';
import { ObjectReads } from './object-reads.ts';
import { ObjectWrites } from './object-writes.ts';
import { PoolChoice } from './pool-choice.ts';
import { type ChangeOrigin, type PostCommitHook, PostCommitHooks, type PostCommitSlot } from './post-commit.ts';
import type { TargetStatus } from './replication-status.ts';
import { Governance } from './governance.ts';
import { type Pool, type PoolAdmission, type PoolSpec, Pools } from './pools.ts';
import { SysRecords } from './sys-records.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
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
  ObjectLockChange,
  PartInfo,
  PoolCapacity,
  Preconditions,
  PutData,
  PutObjectOptions,
  StorageHealth,
} from './types.ts';

export type { PoolAdmission, PoolSpec } from './pools.ts';

/** What the data-movement workers (`background/movement/`) use of the layer. */
export interface MovementSupport {
  readonly pools: Pools;
  readonly mover: ObjectMover;
  /** Multipart uploads still open on a pool. */
  openUploads(pool: Pool): Promise<number>;
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
  /**
   * Called after this node changed or removed a bucket's metadata, so a
   * cluster can tell its peers to drop their cached copy (`forgetBucket`).
   */
  onBucketMetaChanged?: (bucket: string) => void;
  /** Key store of SSE-S3 and SSE-KMS (none: those requests are refused, SSE-C still works). */
  kms?: Kms;
  /**
   * How long past its date a retention still holds: the largest clock
   * difference between nodes (a cluster), 0 on one node (see `object-lock.ts`).
   */
  lockGraceMs?: number;
}

export class ServerPools implements ObjectLayer {
  readonly mrf: MrfQueue;
  /** `.svc.sys` records written on every pool (see `SysRecords`). */
  readonly sysRecords: SysRecords;
  /** Keeps every bucket present on every pool (see `BucketSync`; its worker is started by the composition root). */
  readonly bucketSync: BucketSync;
  /** The pools, the object mover and upload counts, for decommission and rebalance. */
  readonly movement: MovementSupport;
  readonly #pools: Pools;
  readonly #buckets: Buckets;
  readonly #listing: Listing;
  readonly #multipart: Multipart;
  readonly #reads: ObjectReads;
  readonly #writes: ObjectWrites;
  readonly #probe: DriveProbe;
  /** Object lock, default encryption and the key store, shared by the write paths. */
  readonly governance: Governance;
  readonly #log: Logger;
  readonly #locker: NamespaceLocker;
  /** The drive probe's loop (every `DRIVE_PROBE_MS`): started by `createObjectLayer`, stopped by `close()` at the latest. */
  readonly driveProbe: Worker<PeriodicProgress>;
  readonly #hooks = new PostCommitHooks();

  constructor(opts: ObjectLayerOptions) {
    this.mrf = opts.mrf ?? new MrfQueue();
    this.#pools = new Pools({ deploymentId: opts.deploymentId, pools: opts.pools, logger: opts.logger, mrf: this.mrf });
    this.#log = opts.logger;
    this.#locker = opts.locker ?? new LocalNamespaceLocker();
    this.#probe = new DriveProbe(this.#pools, opts.logger);
    this.sysRecords = new SysRecords(this.#pools, opts.clock, this.#locker);
    this.bucketSync = new BucketSync({ pools: this.#pools, records: this.sysRecords, clock: opts.clock, logger: opts.logger });
    this.#buckets = new Buckets({
      pools: this.#pools,
      records: this.sysRecords,
      sync: this.bucketSync,
      clock: opts.clock,
      logger: opts.logger,
      onBucketMetaChanged: opts.onBucketMetaChanged,
    });
    this.#listing = new Listing(this.#pools, opts.listQuorum ?? 'optimal');
    this.governance = new Governance({
      clock: opts.clock,
      config: (bucket, kind) => this.#buckets.getConfig(bucket, kind),
      kms: opts.kms,
      lockGraceMs: opts.lockGraceMs,
    });
    const choice = new PoolChoice({ pools: this.#pools, bucketSync: this.bucketSync, clock: opts.clock, logger: opts.logger, inlineBlock: opts.inlineBlock });
    const bucketInfo = (bucket: string): Promise<BucketMetadata> => this.#buckets.info(bucket);
    const postCommit = (): PostCommitHook | undefined => this.#hooks.current;
    this.#reads = new ObjectReads({ pools: this.#pools, locker: this.#locker, governance: this.governance, bucketInfo });
    this.#writes = new ObjectWrites({
      pools: this.#pools,
      clock: opts.clock,
      locker: this.#locker,
      governance: this.governance,
      choice,
      bucketInfo,
      writeBlockedSets: () => this.#probe.writeBlockedSets(),
      postCommit,
    });
    this.#multipart = new Multipart({
      pools: this.#pools,
      clock: opts.clock,
      locker: this.#locker,
      governance: this.governance,
      bucketInfo,
      placement: (bucket, key) => choice.forKey(bucket, key),
      reserve: (pool, bytes) => choice.reserve(pool, bytes),
      postCommit,
    });
    const mover = new ObjectMover({
      pools: this.#pools,
      locker: this.#locker,
      logger: opts.logger,
      inlineBudget: (k, versioned) => choice.inlineBudget(k, versioned),
      versioned: async (bucket) => (await this.getBucketInfo(bucket)).versioning !== 'Unversioned',
      ensureBucket: (bucket, pool) => this.bucketSync.ensure(bucket, pool),
    });
    this.movement = { pools: this.#pools, mover, openUploads: (pool) => this.#multipart.openUploads(pool) };
    this.driveProbe = periodicWorker({ name: 'drive-probe', everyMs: DRIVE_PROBE_MS, atStart: false, tick: () => this.probeDrives(), clock: opts.clock, logger: opts.logger });
  }

  // ---- drives

  /**
   * Refreshes every drive's online state (`Drive.isOnline`, which `health()`
   * reads synchronously) so a drive that left or came back without traffic is
   * noticed (see `DriveProbe`).
   */
  probeDrives(): Promise<void> {
    return this.#probe.probe();
  }

  /** Drives with problems their nodes reported at the last probe (every 5 s). */
  driveIssues(): readonly DriveIssueReport[] {
    return this.#probe.driveIssues();
  }

  /** Sets whose full or read-only drives leave them short of write quorum (from the last probe). */
  writeBlockedSets(): { pool: number; set: number; why: string; full: boolean }[] {
    return this.#probe.writeBlockedSets();
  }

  /**
   * Installs the post-commit hook (`post-commit.ts`): told of every new
   * version, delete marker and removed version, under the key's lock,
   * before the commit and after it.
   */
  setPostCommitHook(hook: PostCommitHook | undefined, slot: PostCommitSlot = 'events'): void {
    this.#hooks.set(hook, slot);
  }

  /** The installed post-commit hook (lifecycle execution reports through it). */
  get postCommit(): PostCommitHook | undefined {
    return this.#hooks.current;
  }

  /** Opens or closes a pool to new objects (see `Pools.setAdmission`); decommission and rebalance use it. */
  setPoolAdmission(pool: number, admitting: boolean, reason?: string, opts?: { existingKeys?: boolean }): void {
    this.#pools.setAdmission(pool, admitting, reason, opts);
  }

  poolAdmission(): PoolAdmission[] {
    return this.#pools.admission();
  }

  /** The pools and their sets, for the background workers (heal, scanner, data movement). */
  get pools(): Pools {
    return this.#pools;
  }

  /** The (bucket, object) lock PUT, delete, complete, heal and data movement share. */
  get locker(): NamespaceLocker {
    return this.#locker;
  }

  // ---- buckets

  /** Drops the cached metadata of `bucket` (a peer changed it); the next use re-reads it at quorum. */
  forgetBucket(bucket: string): void {
    this.#buckets.forget(bucket);
  }

  makeBucket(bucket: string, opts: { location?: string; objectLock?: boolean } = {}): Promise<void> {
    return this.#buckets.make(bucket, opts);
  }

  getBucketInfo(bucket: string): Promise<BucketMetadata> {
    return this.#buckets.info(bucket);
  }

  listBuckets(): Promise<BucketInfo[]> {
    return this.#buckets.list();
  }

  deleteBucket(bucket: string, opts: { force?: boolean } = {}): Promise<void> {
    return this.#buckets.delete(bucket, opts, () => this.#listing.isEmpty(bucket));
  }

  setBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void> {
    return this.#buckets.setVersioning(bucket, status);
  }

  setBucketTags(bucket: string, tags: string): Promise<void> {
    return this.#buckets.setTags(bucket, tags);
  }

  getBucketConfig(bucket: string, kind: string): Promise<Uint8Array | undefined> {
    return this.#buckets.getConfig(bucket, kind);
  }

  async setBucketConfig(bucket: string, kind: string, data: Uint8Array | undefined): Promise<void> {
    // A default encryption must be one the key store can serve.
    if (kind === 'encryption' && data !== undefined) this.governance.checkDefaultEncryption(data);
    return this.#buckets.setConfig(bucket, kind, data);
  }


  // ---- objects

  putObject(bucket: string, key: string, data: PutData, opts: PutObjectOptions): Promise<ObjectInfo> {
    return this.#writes.putObject(bucket, key, data, opts);
  }

  getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo> {
    return this.#reads.getObjectInfo(bucket, key, opts);
  }

  /**
   * Streams a version. The key's read lock is held until the body closes
   * (ended, failed or destroyed), so nothing that takes the write lock (an
   * overwrite, a delete, data movement) removes the data under a reader.
   */
  getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult> {
    return this.#reads.getObject(bucket, key, opts);
  }

  deleteObject(bucket: string, key: string, opts: DeleteObjectOptions): Promise<DeleteObjectResult> {
    return this.#writes.deleteObject(bucket, key, opts);
  }

  updateObjectMetadata(
    bucket: string,
    key: string,
    opts: { versionId?: string; userMeta?: Record<string, string>; contentHeaders?: ContentHeaders; tags?: string; acl?: string },
  ): Promise<ObjectInfo> {
    return this.#writes.updateObjectMetadata(bucket, key, opts);
  }

  setObjectLock(bucket: string, key: string, change: ObjectLockChange): Promise<ObjectInfo> {
    return this.#writes.setObjectLock(bucket, key, change);
  }

  /**
   * Records one destination's replication status on a version or delete
   * marker (in place, under the key's lock; its mod time is kept). False
   * when the version is gone (removed before it was replicated).
   */
  setReplicationStatus(bucket: string, key: string, versionId: string, arn: string, status: TargetStatus, remoteVersionId?: string): Promise<boolean> {
    return this.#writes.setReplicationStatus(bucket, key, versionId, arn, status, remoteVersionId);
  }

  /** A version's internal metadata, undefined when absent; the caller holds the key's lock (post-commit consumers). */
  versionMeta(bucket: string, key: string, versionId: string): Promise<Record<string, string> | undefined> {
    return this.#writes.versionMeta(bucket, key, versionId);
  }


  // ---- listing

  async listObjects(bucket: string, opts: ListObjectsOptions): Promise<ListObjectsResult> {
    await this.getBucketInfo(bucket);
    return this.#listing.objects(bucket, opts);
  }

  async listObjectVersions(bucket: string, opts: ListVersionsOptions): Promise<ListVersionsResult> {
    await this.getBucketInfo(bucket);
    return this.#listing.versions(bucket, opts);
  }

  // ---- multipart

  newMultipartUpload(bucket: string, key: string, opts: NewMultipartOptions): Promise<MultipartUploadInfo> {
    return this.#multipart.newMultipartUpload(bucket, key, opts);
  }

  putObjectPart(bucket: string, key: string, uploadId: string, partNumber: number, data: PutData, opts: { sseCustomerKey?: Uint8Array } = {}): Promise<PartInfo> {
    return this.#multipart.putObjectPart(bucket, key, uploadId, partNumber, data, opts);
  }

  listObjectParts(bucket: string, key: string, uploadId: string, opts: { partNumberMarker?: number; maxParts: number }): Promise<ListPartsResult> {
    return this.#multipart.listObjectParts(bucket, key, uploadId, opts);
  }

  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    return this.#multipart.abortMultipartUpload(bucket, key, uploadId);
  }

  completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: CompletePart[],
    opts: { preconditions?: Preconditions; checksum?: ObjectChecksum; origin?: ChangeOrigin } = {},
  ): Promise<ObjectInfo> {
    return this.#multipart.completeMultipartUpload(bucket, key, uploadId, parts, opts);
  }

  listMultipartUploads(bucket: string, opts: ListUploadsOptions): Promise<ListUploadsResult> {
    return this.#multipart.listMultipartUploads(bucket, opts);
  }

  // ---- lifecycle (executed by the scanner: background/lifecycle-executor.ts)

  /** Applies lifecycle rules to one object under its lock, from a fresh quorum read (see `lifecycle/apply.ts`). */
  async applyLifecycle(bucket: string, key: string, config: LifecycleConfig, now: number): Promise<LifecycleOutcome> {
    const meta = await this.getBucketInfo(bucket);
    return applyLifecycle({ pools: this.#pools, locker: this.#locker, governance: this.governance, logger: this.#log, postCommit: this.#hooks.current }, bucket, key, config, meta.versioning, now);
  }

  /** The multipart uploads one erasure set holds (every bucket). */
  uploadsInSet(pool: number, set: number): Promise<MultipartUploadInfo[]> {
    const p = this.#pools.list[pool];
    const s = p?.sets[set];
    if (!p || !s) throw new SvcError('InvalidArgument', `no set ${pool}/${set}`);
    return this.#multipart.uploadsInSet(p, s);
  }

  // ---- operations

  capacity(): Promise<PoolCapacity[]> {
    return Promise.all(this.#pools.list.map(poolCapacity));
  }

  health(): StorageHealth {
    return storageHealth(this.#pools.list);
  }

  async close(): Promise<void> {
    await this.driveProbe.stop();
    await this.bucketSync.worker.stop();
    this.#buckets.clear();
  }
}

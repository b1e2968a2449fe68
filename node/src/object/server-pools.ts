/**
 * The object layer over pools → sets → drives (`ObjectLayer`): object
 * reads, writes, deletes and metadata updates live here; buckets
 * (`buckets.ts`), listings (`listing.ts`), multipart uploads
 * (`multipart.ts`), capacity and health (`capacity.ts`) and the `.svc.sys`
 * records (`sys-records.ts`) are composed in. Quorum-bound drive work is
 * delegated to `ErasureSet`; the pools and placement to `Pools`.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BLOCK_SIZE } from '../erasure/index.ts';
import type { Kms } from '../crypto/kms.ts';
import type { FileVersion } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { BucketSync } from './bucket-sync.ts';
import { Buckets } from './buckets.ts';
import { type DriveIssueReport, poolCapacity, probeDrives, storageHealth, writeBlockedSets } from './capacity.ts';
import type { ErasureSet, StagedShards } from './erasure-set.ts';
import type { ListQuorum } from './list-merge.ts';
import { applyLifecycle, type LifecycleOutcome } from './lifecycle/apply.ts';
import type { LifecycleConfig } from './lifecycle/rules.ts';
import { Listing } from './listing.ts';
import { MrfQueue } from './mrf.ts';
import { Multipart } from './multipart.ts';
import { ObjectMover } from './object-move.ts';
import { LocalNamespaceLocker, type NamespaceLocker } from './ns-lock.ts';
import { type Change, type ChangeOrigin, combineHooks, createdChange, type PostCommitHook, withPostCommit } from './post-commit.ts';
import { replicaMeta, type TargetStatus, withTargetStatus } from './replication-status.ts';
import { Governance } from './governance.ts';
import { checkReadPreconditions, checkWritePreconditions, newDeleteMarker, storedHeaders, toObjectInfo, withAcl } from './object-info.ts';
import { assertRemovable, checkRetentionChange, lockOf, newVersionLock, withLock } from './object-lock.ts';
import { hashOrder, rankPools } from './placement.ts';
import { type Located, pickNewest, type Pool, type PoolAdmission, type PoolLookup, type PoolSpec, Pools } from './pools.ts';
import { resolveRange } from './range.ts';
import { decryptRange, effectiveSse, encryptPart, type ObjectKey, openObjectKey, sealNewKey, sseEtag, storedSize } from './sse.ts';
import { SysRecords } from './sys-records.ts';
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

/** What the data-movement workers (`object/movement/`) use of the layer. */
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

const DRIVE_PROBE_MS = 5_000;
const FREE_SPACE_TTL_MS = 1_000;
const DEFAULT_INLINE_TOTAL = 256 * 1024;
const MAX_INLINE_SHARD = 128 * 1024;

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
  /** Object lock, default encryption and the key store, shared by the write paths. */
  readonly governance: Governance;
  readonly #inlineBlock: number | undefined;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #locker: NamespaceLocker;
  readonly #stopProbe: () => void;
  readonly #free = new Map<number, { at: number; free: number }>();
  #probing = false;
  #driveIssues: readonly DriveIssueReport[] = [];
  #blockedSets = new Set<string>();
  #postCommit: PostCommitHook | undefined;
  /** The post-commit consumers by slot, asked in `POST_COMMIT_SLOTS` order. */
  readonly #hooks = new Map<PostCommitSlot, PostCommitHook>();

  constructor(opts: ObjectLayerOptions) {
    this.mrf = opts.mrf ?? new MrfQueue();
    this.#pools = new Pools({ deploymentId: opts.deploymentId, pools: opts.pools, logger: opts.logger, mrf: this.mrf });
    this.#inlineBlock = opts.inlineBlock;
    this.#log = opts.logger;
    this.#clock = opts.clock;
    this.#locker = opts.locker ?? new LocalNamespaceLocker();
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
    this.#multipart = new Multipart({
      pools: this.#pools,
      clock: opts.clock,
      locker: this.#locker,
      governance: this.governance,
      bucketInfo: (bucket) => this.getBucketInfo(bucket),
      placement: (bucket, key) => this.#placement(bucket, key),
      reserve: (pool, bytes) => this.#reserve(pool, bytes),
      postCommit: () => this.#postCommit,
    });
    const mover = new ObjectMover({
      pools: this.#pools,
      locker: this.#locker,
      logger: opts.logger,
      inlineBudget: (k, versioned) => this.#inlineBudget(k, versioned),
      versioned: async (bucket) => (await this.getBucketInfo(bucket)).versioning !== 'Unversioned',
      ensureBucket: (bucket, pool) => this.bucketSync.ensure(bucket, pool),
    });
    this.movement = { pools: this.#pools, mover, openUploads: (pool) => this.#multipart.openUploads(pool) };
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
      const drives = this.#pools.list.flatMap((p) => p.sets.flatMap((s) => s.drives.map((d) => ({ d, pool: p.index, set: s.index }))));
      const infos = await probeDrives(
        drives.map((x) => x.d),
        this.#log,
      );
      this.#driveIssues = drives.flatMap((x, i) => {
        const issues = infos[i]?.online === true ? (infos[i]?.issues ?? []) : [];
        return issues.length > 0 ? [{ endpoint: x.d.endpoint, pool: x.pool, set: x.set, issues }] : [];
      });
      // A set that can no longer take writes (its drives full or read-only) is an alert, and so is its recovery.
      const blocked = new Map(this.writeBlockedSets().map((b) => [`${b.pool}/${b.set}`, b]));
      for (const [k, b] of blocked) {
        if (!this.#blockedSets.has(k)) this.#log.error({ event: 'storage_set_write_blocked', pool: b.pool, set: b.set, reason: b.why }, `pool ${b.pool} set ${b.set} cannot take writes: ${b.why}`);
      }
      for (const k of this.#blockedSets) {
        if (!blocked.has(k)) this.#log.info({ event: 'storage_set_writable', set: k }, `set ${k} takes writes again`);
      }
      this.#blockedSets = new Set(blocked.keys());
    } finally {
      this.#probing = false;
    }
  }

  /** Drives with problems their nodes reported at the last probe (every 5 s). */
  driveIssues(): readonly DriveIssueReport[] {
    return this.#driveIssues;
  }

  /** Sets whose full or read-only drives leave them short of write quorum (from the last probe). */
  writeBlockedSets(): { pool: number; set: number; why: string; full: boolean }[] {
    return writeBlockedSets(this.#pools.list, this.#driveIssues);
  }

  // ---- placement

  /** Per-shard inline budget: 256 KiB / K capped at 128 KiB, /8 on versioned buckets; a configured block replaces it. */
  #inlineBudget(k: number, versioned: boolean): number {
    if (this.#inlineBlock !== undefined) return this.#inlineBlock;
    const b = Math.min(Math.floor(DEFAULT_INLINE_TOTAL / k), MAX_INLINE_SHARD);
    return versioned ? Math.floor(b / 8) : b;
  }

  /**
   * Pool for a new object of `bucket`: the admitting pool with the most free
   * space that holds the bucket. A pool seen lacking the bucket's volume
   * (`found`: the lookup of the key on every pool, or the bucket sync's last
   * pass) gets it first (`BucketSync.ensure`); when that fails the next pool
   * is tried, and with none left the first pool's `XSvcBucketNotOnPool`
   * names the pool and why.
   */
  async #poolForNew(bucket: string, found?: readonly PoolLookup[]): Promise<Pool> {
    const open = this.#pools.list.filter((p) => this.#pools.admits(p.index));
    if (open.length === 0) throw new SvcError('SlowDown', 'no pool takes new objects; retry later');
    let ranked = open;
    if (open.length > 1) {
      const caps = await Promise.all(open.map((p) => this.#freeOf(p)));
      ranked = rankPools(
        caps,
        caps.map(() => true),
      ).map((i) => open[i]!);
    }
    let first: unknown;
    for (const pool of ranked) {
      const lacking = found?.find((f) => f.pool === pool)?.metas.some((m) => !m.ok && m.noVolume) || this.bucketSync.knownShort(pool.index, bucket);
      if (!lacking) return pool;
      try {
        await this.bucketSync.ensure(bucket, pool);
        return pool;
      } catch (err) {
        if (!hasCode(err, 'XSvcBucketNotOnPool')) throw err;
        this.#log.warn({ event: 'bucket_not_on_pool', bucket, pool: pool.index, err: (err as Error).message }, 'pool skipped for a new object');
        first ??= err;
      }
    }
    throw first;
  }

  /**
   * Usable free bytes of a pool for placement, measured at most once per
   * `FREE_SPACE_TTL_MS` (a drive statfs each, over RPC for remote drives:
   * too much to repeat for every new object).
   */
  async #freeOf(pool: Pool): Promise<number> {
    const c = this.#free.get(pool.index);
    if (c && this.#clock.now() - c.at < FREE_SPACE_TTL_MS) return c.free;
    const free = (await poolCapacity(pool)).usableFree;
    this.#free.set(pool.index, { at: this.#clock.now(), free });
    return free;
  }

  /**
   * Counts bytes about to be written to a pool against its sampled free
   * space until the next sample. Without it every new object of a burst
   * inside one sample period goes to the same pool (measured: 108 of 120
   * quick PUTs on one of two equal pools); with it the pools take turns as
   * their remaining free space crosses. Unknown sizes (-1) count nothing.
   */
  #reserve(pool: number, bytes: number): void {
    const c = this.#free.get(pool);
    if (c !== undefined && bytes > 0) c.free -= bytes;
  }

  /**
   * Pool a new version of `bucket/key` goes to: the pool already holding the
   * key (`SlowDown` when that pool is closed to new writes), else a pool for
   * new objects.
   */
  async #placement(bucket: string, key: string): Promise<Pool> {
    if (this.#pools.count === 1) return this.#poolForNew(bucket);
    const found = await this.#pools.lookup(bucket, key);
    const existing = pickNewest(found, bucket, key);
    if (existing) {
      this.#pools.checkAdmits(existing.pool);
      return existing.pool;
    }
    return this.#poolForNew(bucket, found);
  }

  /**
   * Installs the post-commit hook (`post-commit.ts`): told of every new
   * version, delete marker and removed version, under the key's lock,
   * before the commit and after it.
   */
  setPostCommitHook(hook: PostCommitHook | undefined, slot: PostCommitSlot = 'events'): void {
    if (hook) this.#hooks.set(slot, hook);
    else this.#hooks.delete(slot);
    this.#postCommit = combineHooks(POST_COMMIT_SLOTS.flatMap((s) => this.#hooks.get(s) ?? []));
  }

  /** The installed post-commit hook (lifecycle execution reports through it). */
  get postCommit(): PostCommitHook | undefined {
    return this.#postCommit;
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

  async putObject(bucket: string, key: string, data: PutData, opts: PutObjectOptions): Promise<ObjectInfo> {
    const meta = await this.getBucketInfo(bucket);
    const path = objectPath(key);
    const [lockCfg, encryption] = await Promise.all([this.governance.lockConfig(bucket), this.governance.encryption(bucket)]);
    const lock = newVersionLock(lockCfg, opts.lock, opts.modTime?.getTime() ?? this.#clock.now());
    const sse = effectiveSse(opts.sse, encryption);
    // The erasure layer sees only ciphertext: an encrypted body goes in as its package stream.
    const sealed = sse ? sealNewKey(sse, this.governance.kms, bucket, key) : undefined;
    if (opts.preconditions) {
      // Early check saves streaming a body that cannot commit; re-checked under the lock.
      const cur = await this.#pools.locate(bucket, key);
      checkWritePreconditions(opts.preconditions, cur?.group.version);
    }
    const pool = await this.#placement(bucket, key);
    const set = this.#pools.setOf(pool, key);
    // Drives known full (the last probe, 5 s old at most): refused before the body is read.
    const blocked = this.writeBlockedSets().find((b) => b.pool === pool.index && b.set === set.index && b.full);
    if (blocked !== undefined) throw new SvcError('XSvcStorageFull', `pool ${pool.index} set ${set.index}: ${blocked.why}`, { pool: pool.index, set: set.index });
    this.#reserve(pool.index, data.size);
    const sc = opts.storageClass ?? 'STANDARD';
    const parity = this.#pools.parity(pool, sc);
    const k = set.width - parity;
    const dist = hashOrder(`${bucket}/${key}`, set.width);
    const versioned = meta.versioning !== 'Unversioned';
    const versionId = opts.versionId ?? (meta.versioning === 'Enabled' ? randomUUID() : 'null');
    const stream = sealed ? encryptPart(sealed.objectKey, 1, data.stream) : data.stream;
    const staged = await set.stageShards(stream, sealed ? storedSize(data.size) : data.size, {
      data: k,
      parity,
      distribution: dist,
      inlineBudget: this.#inlineBudget(k, versioned),
      partNumber: 1,
      dataDir: randomUUID(),
    });
    const modTime = opts.modTime?.getTime() ?? this.#clock.now();
    const etag = sseEtag(sealed?.objectKey, data.md5Hex());
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
      sysMeta: withLock({ ...(opts.acl ? { acl: opts.acl } : {}), ...sealed?.sysMeta, ...(opts.replica ? replicaMeta(this.#clock.now()) : {}) }, lock),
      storageClass: sc,
      tags: opts.tags ?? '',
      inline: staged.inline,
    };
    if (checksum) version.checksum = { ...checksum };
    const info = toObjectInfo(bucket, key, version, true);
    const change = createdChange(info, 'request', opts.origin);
    if (opts.replica) change.replica = true;
    await this.#commitLocked(set, staged, version, bucket, key, path, opts.preconditions, lockCfg !== undefined, change);
    return info;
  }

  async #commitLocked(
    set: ErasureSet,
    staged: StagedShards,
    version: FileVersion,
    bucket: string,
    key: string,
    path: string,
    pre: Preconditions | undefined,
    lockEnabled: boolean,
    change: Change,
  ): Promise<void> {
    const unlock = await this.#locker.lock(bucket, key);
    try {
      // The pool may have closed to new writes while this PUT was staged.
      this.#pools.checkAdmits(this.#pools.list[set.pool]!);
      if (this.#pools.fenced && this.#pools.count > 1) {
        // While data moves, the key may have moved to another pool since
        // this PUT chose where to stage: committing here would split its
        // versions over two pools. The client retries and lands there.
        const now = await this.#pools.locate(bucket, key);
        if (now !== undefined && now.pool.index !== set.pool) {
          throw new SvcError('SlowDown', `${bucket}/${key} moved to pool ${now.pool.index} while this write was staged; retry`, { pool: now.pool.index });
        }
      }
      await this.governance.guardNullReplace(set, bucket, path, version.versionId, lockEnabled ? { enabled: true } : undefined);
      if (pre) {
        const { res } = await set.resolve(bucket, path);
        if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
        checkWritePreconditions(pre, res.kind === 'found' ? res.group.version : undefined);
      }
      await withPostCommit(this.#postCommit, change, (extra) => set.commit(staged, withSysMeta(version, extra), bucket, path, bucket, key));
    } catch (err) {
      // The staging belongs to this PUT: after a refused precondition or a
      // commit below quorum (already undone on the drives) it is discarded.
      await set.discardStage(staged.stagePath);
      throw err;
    } finally {
      unlock();
    }
  }

  /** The version a read serves (the caller holds the key's read lock). */
  async #locateForRead(bucket: string, key: string, opts: GetObjectOptions): Promise<Located> {
    const loc = await this.#pools.locate(bucket, key, opts.versionId);
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

  async #getLocated(bucket: string, key: string, opts: GetObjectOptions): Promise<Located> {
    await this.getBucketInfo(bucket);
    const unlock = await this.#locker.rlock(bucket, key);
    try {
      return await this.#locateForRead(bucket, key, opts);
    } finally {
      unlock();
    }
  }

  async getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo> {
    const loc = await this.#getLocated(bucket, key, opts);
    // A client key is checked when given (HEAD of an SSE-C object); the edge decides where one is required.
    if (opts.sseCustomerKey !== undefined) openObjectKey(loc.group.version.sysMeta, this.governance.kms, opts.sseCustomerKey, bucket, key);
    const info = toObjectInfo(bucket, key, loc.group.version, await this.#isLatest(loc, bucket, key, opts));
    checkReadPreconditions(opts.preconditions, info);
    return info;
  }

  async #isLatest(loc: Located, bucket: string, key: string, opts: GetObjectOptions): Promise<boolean> {
    if (opts.versionId === undefined) return true;
    const latest = await this.#pools.locate(bucket, key).catch(() => undefined);
    return latest?.group.version.versionId === loc.group.version.versionId;
  }

  /**
   * Streams a version. The key's read lock is held until the body closes
   * (ended, failed or destroyed), so nothing that takes the write lock (an
   * overwrite, a delete, data movement) removes the data under a reader.
   */
  async getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult> {
    await this.getBucketInfo(bucket);
    const unlock = await this.#locker.rlock(bucket, key);
    let handedOver = false;
    try {
      const loc = await this.#locateForRead(bucket, key, opts);
      const v = loc.group.version;
      const objectKey = openObjectKey(v.sysMeta, this.governance.kms, opts.sseCustomerKey, bucket, key);
      const info = toObjectInfo(bucket, key, v, await this.#isLatest(loc, bucket, key, opts));
      checkReadPreconditions(opts.preconditions, info);
      // Ranges are in plaintext bytes (`info` sizes); an encrypted version maps them onto its packages.
      let start = 0;
      let end = info.size - 1;
      let ranged = false;
      if (opts.partNumber !== undefined) {
        const idx = info.parts.findIndex((p) => p.number === opts.partNumber);
        if (idx < 0) throw new SvcError('InvalidRange', 'no such part', { partNumber: opts.partNumber });
        start = info.parts.slice(0, idx).reduce((a, p) => a + p.size, 0);
        end = start + info.parts[idx]!.size - 1;
        ranged = true;
      }
      if (opts.range) {
        const r = resolveRange(opts.range, info.size);
        start = r.start;
        end = r.end;
        ranged = true;
      }
      const length = Math.max(0, end - start + 1);
      const path = objectPath(key);
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        unlock();
      };
      const reuse = opts.reuseBuffers === true && !loc.group.version.inline;
      const range = objectKey ? this.#decrypted(loc, path, objectKey, start, length, bucket, key, reuse) : loc.set.readRange(bucket, path, loc.group, start, length, bucket, key, { reuse });
      // The first block is read (K shards verified, decoded if need be) before
      // the caller sees the result: a read below quorum fails here, while the
      // S3 edge can still answer with a status instead of a cut connection.
      const src = await primed(range);
      // The S3 GET reads `chunks` for inline versions too: one write of the inline bytes instead of
      // a Readable and a stream pipeline (its AbortController and end-of-stream listeners) per request.
      if (opts.reuseBuffers === true) {
        // The caller reads `chunks`; `body` only cancels (an unstarted generator runs no finally).
        const chunks = (async function* () {
          try {
            yield* src;
          } finally {
            release();
          }
        })();
        const body = new Readable({ read() {} });
        body.once('close', () => {
          release();
          void chunks.return(undefined);
        });
        handedOver = true;
        return { info, ...(ranged ? { range: { start, end } } : {}), body, chunks };
      }
      const body = Readable.from(src, { objectMode: false });
      body.once('close', release);
      handedOver = true;
      return ranged ? { info, range: { start, end }, body } : { info, body };
    } finally {
      if (!handedOver) unlock();
    }
  }

  /** Plaintext bytes [start, start+length) of an encrypted version: only the packages covering them are read. */
  #decrypted(loc: Located, path: string, k: ObjectKey, start: number, length: number, bucket: string, key: string, reuse: boolean): AsyncGenerator<Uint8Array> {
    const v = loc.group.version;
    const partStarts: number[] = [];
    let at = 0;
    for (const p of v.parts) {
      partStarts.push(at);
      at += p.size;
    }
    // Shard-file reads hand out chunks that are this read's own (fresh, or
    // with `reuse` its reused buffers, each done with before the next is
    // read), decrypted where they lie; inline data is a view of the
    // version's metadata and is left alone.
    return decryptRange(k, v, start, length, (i, off, len) => loc.set.readRange(bucket, path, loc.group, partStarts[i]! + off, len, bucket, key, { reuse }), !v.inline);
  }

  async deleteObject(bucket: string, key: string, opts: DeleteObjectOptions): Promise<DeleteObjectResult> {
    const meta = await this.getBucketInfo(bucket);
    const path = objectPath(key);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const found = await this.#pools.lookup(bucket, key, opts.versionId);
      let loc: Located | undefined;
      try {
        loc = pickNewest(found, bucket, key);
      } catch (err) {
        // A delete needs only majority: an object whose data lost read quorum
        // (EC:0 with a drive offline) can still be deleted — unless the bucket
        // has object lock, where a version whose lock cannot be read stays.
        if (!hasCode(err, 'ErasureReadQuorum') || (await this.governance.lockConfig(bucket))) throw err;
      }
      if (opts.preconditions?.ifMatch !== undefined) checkWritePreconditions(opts.preconditions, loc?.group.version);
      if (opts.versionId !== undefined || meta.versioning === 'Unversioned') {
        const vid = opts.versionId ?? 'null';
        // A permanent delete: refused while the version is locked (`object-lock.ts`).
        if (loc && loc.group.version.type === 'object') assertRemovable(loc.group.version.sysMeta, this.governance.lockClock(), { bypassGovernance: opts.bypassGovernance === true });
        const pools = loc ? [loc.pool] : this.#pools.list;
        // Only a version that was there makes an event (deleting nothing succeeds quietly, as S3 does).
        const change = loc ? removedChange(bucket, key, vid, this.#clock.now(), opts.origin) : undefined;
        if (change && opts.replica) change.replica = true;
        await withPostCommit(this.#postCommit, change, async () => {
          for (const pool of pools) await this.#pools.setOf(pool, key).deleteVersion(bucket, path, vid, bucket, key, loc?.metas);
        });
        return { versionId: vid, deleteMarker: loc?.group.version.type === 'delete' };
      }
      if (loc) this.#pools.checkAdmits(loc.pool);
      const pool = loc?.pool ?? (await this.#poolForNew(bucket, found));
      const set = this.#pools.setOf(pool, key);
      const versionId = opts.replica?.markerVersionId ?? (meta.versioning === 'Enabled' ? randomUUID() : 'null');
      // A suspended bucket's null marker replaces the null version: not a locked one.
      await this.governance.guardNullReplace(set, bucket, path, versionId, await this.governance.lockConfig(bucket));
      const marker = newDeleteMarker(versionId, opts.replica?.modTime ?? this.#clock.now());
      if (opts.replica) Object.assign(marker.sysMeta, replicaMeta(this.#clock.now()));
      const change: Change = { kind: 'delete-marker', cause: 'request', bucket, key, versionId, time: marker.modTime, ...(opts.origin ? { origin: opts.origin } : {}), ...(opts.replica ? { replica: true } : {}) };
      await withPostCommit(this.#postCommit, change, (extra) => set.writeMarker(bucket, path, withSysMeta(marker, extra), bucket, key));
      return { versionId, deleteMarker: true };
    } finally {
      unlock();
    }
  }

  async updateObjectMetadata(
    bucket: string,
    key: string,
    opts: { versionId?: string; userMeta?: Record<string, string>; contentHeaders?: ContentHeaders; tags?: string; acl?: string },
  ): Promise<ObjectInfo> {
    await this.getBucketInfo(bucket);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#pools.locate(bucket, key, opts.versionId);
      if (!loc) throw new SvcError(opts.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
      const cur = loc.group.version;
      if (cur.type === 'delete') throw new SvcError(opts.versionId !== undefined ? 'MethodNotAllowed' : 'NoSuchKey');
      const next: FileVersion = {
        ...cur,
        userMeta: opts.userMeta ?? cur.userMeta,
        contentHeaders: opts.contentHeaders ? storedHeaders(opts.contentHeaders) : cur.contentHeaders,
        tags: opts.tags ?? cur.tags,
        sysMeta: opts.acl === undefined ? cur.sysMeta : withAcl(cur.sysMeta, opts.acl),
      };
      delete next.inlineData;
      await loc.set.updateMetadata(bucket, objectPath(key), next, bucket, key);
      return toObjectInfo(bucket, key, next, opts.versionId === undefined);
    } finally {
      unlock();
    }
  }

  async setObjectLock(bucket: string, key: string, change: ObjectLockChange): Promise<ObjectInfo> {
    await this.getBucketInfo(bucket);
    await this.governance.requireLock(bucket);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#pools.locate(bucket, key, change.versionId);
      if (!loc) throw new SvcError(change.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
      const cur = loc.group.version;
      if (cur.type === 'delete') throw new SvcError('MethodNotAllowed', 'A delete marker has no retention or legal hold.');
      const lock = lockOf(cur.sysMeta);
      if (change.retention !== undefined) {
        checkRetentionChange(lock, change.retention ?? undefined, this.governance.lockClock(), change.bypassGovernance === true);
        if (change.retention === null) {
          delete lock.mode;
          delete lock.retainUntil;
        } else {
          lock.mode = change.retention.mode;
          lock.retainUntil = change.retention.retainUntil;
        }
      }
      if (change.legalHold !== undefined) lock.legalHold = change.legalHold;
      const next: FileVersion = { ...cur, sysMeta: withLock(cur.sysMeta, lock) };
      delete next.inlineData;
      await loc.set.updateMetadata(bucket, objectPath(key), next, bucket, key);
      return toObjectInfo(bucket, key, next, change.versionId === undefined);
    } finally {
      unlock();
    }
  }

  /**
   * Records one destination's replication status on a version or delete
   * marker (in place, under the key's lock; its mod time is kept). False
   * when the version is gone (removed before it was replicated).
   */
  async setReplicationStatus(bucket: string, key: string, versionId: string, arn: string, status: TargetStatus, remoteVersionId?: string): Promise<boolean> {
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#pools.locate(bucket, key, versionId);
      if (!loc) return false;
      const cur = loc.group.version;
      const next: FileVersion = { ...cur, sysMeta: withTargetStatus(cur.sysMeta, arn, status, remoteVersionId) };
      delete next.inlineData;
      await loc.set.updateMetadata(bucket, objectPath(key), next, bucket, key);
      return true;
    } finally {
      unlock();
    }
  }

  /** A version's internal metadata, undefined when absent; the caller holds the key's lock (post-commit consumers). */
  async versionMeta(bucket: string, key: string, versionId: string): Promise<Record<string, string> | undefined> {
    return (await this.#pools.locate(bucket, key, versionId))?.group.version.sysMeta;
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

  // ---- lifecycle (executed by the scanner: lifecycle/executor.ts)

  /** Applies lifecycle rules to one object under its lock, from a fresh quorum read (see `lifecycle/apply.ts`). */
  async applyLifecycle(bucket: string, key: string, config: LifecycleConfig, now: number): Promise<LifecycleOutcome> {
    const meta = await this.getBucketInfo(bucket);
    return applyLifecycle({ pools: this.#pools, locker: this.#locker, governance: this.governance, logger: this.#log, postCommit: this.#postCommit }, bucket, key, config, meta.versioning, now);
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
    this.#stopProbe();
    await this.bucketSync.worker.stop();
    this.#buckets.clear();
  }
}

/** Which post-commit consumer a hook is; they are asked in this order. */
export const POST_COMMIT_SLOTS = ['replication', 'events'] as const;
export type PostCommitSlot = (typeof POST_COMMIT_SLOTS)[number];

/** A version with the post-commit consumers' metadata added (itself when there is none). */
function withSysMeta(v: FileVersion, extra: Readonly<Record<string, string>>): FileVersion {
  return Object.keys(extra).length === 0 ? v : { ...v, sysMeta: { ...v.sysMeta, ...extra } };
}

function removedChange(bucket: string, key: string, versionId: string, time: number, origin: ChangeOrigin | undefined): Change {
  return { kind: 'version-removed', cause: 'request', bucket, key, versionId, time, ...(origin ? { origin } : {}) };
}

/**
 * Pulls the first chunk of `src` now (its errors throw here) and returns a
 * generator that yields it, then the rest. The chunk is held, not copied:
 * with reused read buffers it stays valid until the next pull, which comes
 * after it was handed out.
 */
async function primed(src: AsyncGenerator<Uint8Array>): Promise<AsyncGenerator<Uint8Array>> {
  let first: IteratorResult<Uint8Array>;
  try {
    first = await src.next();
  } catch (err) {
    await src.return(undefined).catch(() => undefined);
    throw err;
  }
  return (async function* () {
    try {
      if (first.done === true) return;
      yield first.value;
      yield* src;
    } finally {
      await src.return(undefined);
    }
  })();
}

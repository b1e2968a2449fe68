/**
 * Object writes under the key's write lock: PUT (stage the shards, then
 * commit) and DELETE (a version removed for good, or a delete marker), each
 * reported through the post-commit hook; and in-place metadata changes of a
 * stored version (its data and mod time kept: user metadata, headers, tags
 * and ACL; retention and legal hold; one destination's replication status),
 * each a fresh quorum read and a metadata rewrite.
 */
import { randomUUID } from 'node:crypto';
import { BLOCK_SIZE } from '../erasure/index.ts';
import type { FileVersion } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { ErasureSet, StagedShards } from './erasure-set.ts';
import type { Governance } from './governance.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { newDeleteMarker, storedHeaders, toObjectInfo, withAcl } from './object-info.ts';
import { checkWritePreconditions } from './preconditions.ts';
import { assertRemovable, checkRetentionChange, lockOf, newVersionLock, withLock } from './object-lock.ts';
import { hashOrder } from './placement.ts';
import type { PoolChoice } from './pool-choice.ts';
import { type Located, pickNewest, type Pools } from './pools.ts';
import { type Change, type ChangeOrigin, createdChange, type PostCommitHook, withPostCommit } from './post-commit.ts';
import { replicaMeta, type TargetStatus, withTargetStatus } from './replication-status.ts';
import { effectiveSse, encryptPart, sealNewKey, sseEtag, storedSize } from './sse.ts';
import { guardNewVersion } from './write-guard.ts';
import type { BucketMetadata, ContentHeaders, DeleteObjectOptions, DeleteObjectResult, ObjectInfo, ObjectLockChange, Preconditions, PutData, PutObjectOptions } from './types.ts';

export interface ObjectWritesOptions {
  pools: Pools;
  clock: Clock;
  locker: NamespaceLocker;
  governance: Governance;
  /** Where new versions go and how much of them is inlined. */
  choice: PoolChoice;
  /** The bucket's metadata (NoSuchBucket when absent). */
  bucketInfo: (bucket: string) => Promise<BucketMetadata>;
  /** Sets the last drive probe found short of write quorum (`DriveProbe.writeBlockedSets`). */
  writeBlockedSets: () => { pool: number; set: number; why: string; full: boolean }[];
  /** The post-commit hook every change is reported through. */
  postCommit: () => PostCommitHook | undefined;
}

export class ObjectWrites {
  readonly #pools: Pools;
  readonly #clock: Clock;
  readonly #locker: NamespaceLocker;
  readonly #gov: Governance;
  readonly #choice: PoolChoice;
  readonly #bucketInfo: ObjectWritesOptions['bucketInfo'];
  readonly #writeBlockedSets: ObjectWritesOptions['writeBlockedSets'];
  readonly #postCommit: ObjectWritesOptions['postCommit'];

  constructor(opts: ObjectWritesOptions) {
    this.#pools = opts.pools;
    this.#clock = opts.clock;
    this.#locker = opts.locker;
    this.#gov = opts.governance;
    this.#choice = opts.choice;
    this.#bucketInfo = opts.bucketInfo;
    this.#writeBlockedSets = opts.writeBlockedSets;
    this.#postCommit = opts.postCommit;
  }

  async putObject(bucket: string, key: string, data: PutData, opts: PutObjectOptions): Promise<ObjectInfo> {
    const meta = await this.#bucketInfo(bucket);
    const path = objectPath(key);
    const [lockCfg, encryption] = await Promise.all([this.#gov.lockConfig(bucket), this.#gov.encryption(bucket)]);
    const lock = newVersionLock(lockCfg, opts.lock, opts.modTime?.getTime() ?? this.#clock.now());
    const sse = effectiveSse(opts.sse, encryption);
    // The erasure layer sees only ciphertext: an encrypted body goes in as its package stream.
    const sealed = sse ? sealNewKey(sse, this.#gov.kms, bucket, key) : undefined;
    if (opts.preconditions) {
      // Early check saves streaming a body that cannot commit; re-checked under the lock.
      const cur = await this.#pools.locate(bucket, key);
      checkWritePreconditions(opts.preconditions, cur?.group.version);
    }
    const pool = await this.#choice.forKey(bucket, key);
    const set = this.#pools.setOf(pool, key);
    // Drives known full (the last probe, 5 s old at most): refused before the body is read.
    const blocked = this.#writeBlockedSets().find((b) => b.pool === pool.index && b.set === set.index && b.full);
    if (blocked !== undefined) throw new SvcError('XSvcStorageFull', `pool ${pool.index} set ${set.index}: ${blocked.why}`, { pool: pool.index, set: set.index });
    this.#choice.reserve(pool.index, data.size);
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
      inlineBudget: this.#choice.inlineBudget(k, versioned),
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
      await guardNewVersion(this.#gov, { set, bucket, path, versionId: version.versionId, preconditions: pre, lock: lockEnabled ? { enabled: true } : undefined });
      await withPostCommit(this.#postCommit(), change, (extra) => set.commit(staged, withSysMeta(version, extra), bucket, path, bucket, key));
    } catch (err) {
      // The staging belongs to this PUT: after a refused precondition or a
      // commit below quorum (already undone on the drives) it is discarded.
      await set.discardStage(staged.stagePath);
      throw err;
    } finally {
      unlock();
    }
  }

  async deleteObject(bucket: string, key: string, opts: DeleteObjectOptions): Promise<DeleteObjectResult> {
    const meta = await this.#bucketInfo(bucket);
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
        if (!hasCode(err, 'ErasureReadQuorum') || (await this.#gov.lockConfig(bucket))) throw err;
      }
      if (opts.preconditions?.ifMatch !== undefined) checkWritePreconditions(opts.preconditions, loc?.group.version);
      if (opts.versionId !== undefined || meta.versioning === 'Unversioned') {
        const vid = opts.versionId ?? 'null';
        // A permanent delete: refused while the version is locked (`object-lock.ts`).
        if (loc && loc.group.version.type === 'object') assertRemovable(loc.group.version.sysMeta, this.#gov.lockClock(), { bypassGovernance: opts.bypassGovernance === true });
        const pools = loc ? [loc.pool] : this.#pools.list;
        // Only a version that was there makes an event (deleting nothing succeeds quietly, as S3 does).
        const change = loc ? removedChange(bucket, key, vid, this.#clock.now(), opts.origin) : undefined;
        if (change && opts.replica) change.replica = true;
        await withPostCommit(this.#postCommit(), change, async () => {
          for (const pool of pools) await this.#pools.setOf(pool, key).deleteVersion(bucket, path, vid, bucket, key, loc?.metas);
        });
        return { versionId: vid, deleteMarker: loc?.group.version.type === 'delete' };
      }
      if (loc) this.#pools.checkAdmits(loc.pool);
      const pool = loc?.pool ?? (await this.#choice.forNew(bucket, found));
      const set = this.#pools.setOf(pool, key);
      const versionId = opts.replica?.markerVersionId ?? (meta.versioning === 'Enabled' ? randomUUID() : 'null');
      // A suspended bucket's null marker replaces the null version: not a locked one.
      await this.#gov.guardNullReplace(set, bucket, path, versionId, await this.#gov.lockConfig(bucket));
      const marker = newDeleteMarker(versionId, opts.replica?.modTime ?? this.#clock.now());
      if (opts.replica) Object.assign(marker.sysMeta, replicaMeta(this.#clock.now()));
      const change: Change = { kind: 'delete-marker', cause: 'request', bucket, key, versionId, time: marker.modTime, ...(opts.origin ? { origin: opts.origin } : {}), ...(opts.replica ? { replica: true } : {}) };
      await withPostCommit(this.#postCommit(), change, (extra) => set.writeMarker(bucket, path, withSysMeta(marker, extra), bucket, key));
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
    await this.#bucketInfo(bucket);
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
    await this.#bucketInfo(bucket);
    await this.#gov.requireLock(bucket);
    const unlock = await this.#locker.lock(bucket, key);
    try {
      const loc = await this.#pools.locate(bucket, key, change.versionId);
      if (!loc) throw new SvcError(change.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
      const cur = loc.group.version;
      if (cur.type === 'delete') throw new SvcError('MethodNotAllowed', 'A delete marker has no retention or legal hold.');
      const lock = lockOf(cur.sysMeta);
      if (change.retention !== undefined) {
        checkRetentionChange(lock, change.retention ?? undefined, this.#gov.lockClock(), change.bypassGovernance === true);
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
}

/** A version with the post-commit consumers' metadata added (itself when there is none). */
function withSysMeta(v: FileVersion, extra: Readonly<Record<string, string>>): FileVersion {
  return Object.keys(extra).length === 0 ? v : { ...v, sysMeta: { ...v.sysMeta, ...extra } };
}

function removedChange(bucket: string, key: string, versionId: string, time: number, origin: ChangeOrigin | undefined): Change {
  return { kind: 'version-removed', cause: 'request', bucket, key, versionId, time, ...(origin ? { origin } : {}) };
}

/**
 * Bucket replication on one node: the remote targets with their persistent
 * queues, clients, health checks and copy workers, and the post-commit hook
 * that queues every change a rule replicates.
 *
 * Life of a copy (`docs/replication.md`):
 *  1. Under the key's write lock, before the commit, `prepare` selects the
 *     rules (per destination, the highest priority whose filter matches) and
 *     puts one entry per destination into that target's queue as
 *     `prepared` (fsync'd): a queue that cannot take it refuses the write.
 *     The version is committed with PENDING for each destination.
 *  2. Committed: the entries become `ready`; a failed commit removes them; a
 *     crash in between leaves them `unsettled`, settled against the
 *     namespace at the next start (is the version there?).
 *  3. The target's worker copies its queue (16 at a time, one key's entries
 *     in order): the version's data read through the object layer, with its
 *     metadata, tags, retention and legal hold, encryption and, for svc
 *     targets, its version id and mod time; multipart versions part by part.
 *     Success: the entry is removed and the version marked COMPLETED. The
 *     target unreachable or overloaded: the entry stays, the queue waits
 *     (1 s doubling to 30 s, or until a health check finds it back). The
 *     target refused the copy: the version is marked FAILED and the entry
 *     moves to the retry queue (1 s doubling to 5 min), kept until it
 *     succeeds.
 * Replicas (writes made by replication from another site) are never queued:
 * two sites replicating to each other do not loop.
 */
import { join } from 'node:path';
import { ParsedConfigCache } from '../object/parsed-config-cache.ts';
import { changeExists, type SettleRef } from '../notify/notification-system.ts';
import { QueueStore } from '../notify/queue-store.ts';
import type { Change, PostCommitHook, PostCommitTicket } from '../object/post-commit.ts';
import { pendingMeta, remoteVersionId, type TargetStatus } from '../object/replication-status.ts';
import type { GetObjectOptions, GetObjectResult, ObjectInfo } from '../object/types.ts';
import { type PeriodicProgress, periodicWorker, sleepUnlessAborted, Worker, type WorkerTask, type WorkResult } from '../util/worker.ts';
import type { ClientTrust } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { replicationTargets, type ReplicationTargetsMessage } from '../util/diagnostics.ts';
import { decodeReplicationConfig, type ReplicationConfig, type ReplicationOp, selectRules } from '../replication/config.ts';
import { decodeTargets, type RemoteTarget, type TargetHealth } from '../replication/targets.ts';
import { REPLICATION_REQUEST_HEADER, SOURCE_MTIME_HEADER, SOURCE_VERSION_HEADER } from '../replication/wire.ts';
import { BandwidthLimit, RemoteClient, RemoteError } from './remote.ts';

/** What the system needs of the object layer (`ServerPools`). */
export interface ReplicationLayer {
  getBucketConfig(bucket: string, kind: string): Promise<Uint8Array | undefined>;
  listBuckets(): Promise<{ name: string }[]>;
  getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo>;
  getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult>;
  setReplicationStatus(bucket: string, key: string, versionId: string, arn: string, status: TargetStatus, remoteVersionId?: string): Promise<boolean>;
  /** A version's internal metadata (the caller holds the key's lock), undefined when absent. */
  versionMeta(bucket: string, key: string, versionId: string): Promise<Record<string, string> | undefined>;
}

/** One queued copy. */
export interface CopyEntry {
  op: ReplicationOp['kind'];
  bucket: string;
  key: string;
  versionId: string;
  /** Unix ms of the change (lag is measured from it). */
  time: number;
  /** Bytes of the version (0 for deletes). */
  size: number;
  /** Storage class the rule asks replicas to have. */
  storageClass?: string;
  /** For a version delete: the version id the remote gave our copy (another S3 service). */
  remoteVersionId?: string;
  /** Entries made before a commit: what to settle them against after a crash. */
  change?: SettleRef;
  /** Retry queue: attempts so far, next attempt (Unix ms), why the last failed. */
  attempts?: number;
  nextAt?: number;
  lastError?: string;
}

export interface TargetReport {
  arn: string;
  bucket: string;
  endpoint: string;
  secure: boolean;
  targetBucket: string;
  online: boolean;
  lastOnline?: number;
  /** Milliseconds offline since this node started watching. */
  downtimeMs: number;
  latencyMs: { curr: number; avg: number; max: number };
  bandwidthLimit: number;
  /** The remote keeps svc's version ids (another svc); undefined until a copy told. */
  svcTarget?: boolean;
  queued: { count: number; bytes: number };
  failed: { count: number; bytes: number };
  /** Since this node started. */
  completed: { count: number; bytes: number };
  failedAttempts: number;
  /** Milliseconds since the oldest change still queued (0: nothing waits). */
  lagMs: number;
  lastError?: string;
  lastErrorAt?: number;
  lastCompletedAt?: number;
}

const BATCH = 64;
const CONCURRENCY = 16;
const OFFLINE_BACKOFF_MIN_MS = 1_000;
const OFFLINE_BACKOFF_MAX_MS = 30_000;
const RETRY_BACKOFF_MIN_MS = 1_000;
const RETRY_BACKOFF_MAX_MS = 5 * 60_000;
export const DEFAULT_REPLICATION_QUEUE_LIMIT = 1_000_000;
const REFRESH_MS = 30_000;
/** How often the targets' numbers go to the metrics. */
const PUBLISH_MS = 10_000;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function arnId(arn: string): string {
  return arn.split(':')[4] ?? arn;
}

/** The headers that carry a version's metadata to the remote. */
export function copyHeaders(info: ObjectInfo, storageClass: string | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  const c = info.contentHeaders;
  if (c.contentType) h['content-type'] = c.contentType;
  if (c.contentEncoding) h['content-encoding'] = c.contentEncoding;
  if (c.contentDisposition) h['content-disposition'] = c.contentDisposition;
  if (c.contentLanguage) h['content-language'] = c.contentLanguage;
  if (c.cacheControl) h['cache-control'] = c.cacheControl;
  if (c.expires) h.expires = c.expires;
  for (const [k, v] of Object.entries(info.userMeta)) h[`x-amz-meta-${k}`] = /[^\x20-\x7e]/.test(v) ? Buffer.from(v, 'utf8').toString('latin1') : v;
  if (info.tags) h['x-amz-tagging'] = info.tags;
  const sc = storageClass ?? (info.storageClass !== 'STANDARD' ? info.storageClass : undefined);
  if (sc) h['x-amz-storage-class'] = sc;
  if (info.lock?.mode !== undefined && info.lock.retainUntil !== undefined) {
    h['x-amz-object-lock-mode'] = info.lock.mode;
    h['x-amz-object-lock-retain-until-date'] = info.lock.retainUntil.toISOString();
  }
  if (info.lock?.legalHold !== undefined) h['x-amz-object-lock-legal-hold'] = info.lock.legalHold;
  if (info.sse?.type === 'SSE-S3') h['x-amz-server-side-encryption'] = 'AES256';
  if (info.sse?.type === 'SSE-KMS') {
    h['x-amz-server-side-encryption'] = 'aws:kms';
    if (info.sse.keyId) h['x-amz-server-side-encryption-aws-kms-key-id'] = info.sse.keyId;
    if (info.sse.context) h['x-amz-server-side-encryption-context'] = info.sse.context;
  }
  return h;
}

/** A queue with the size and time of each entry in memory (counts, bytes, lag). */
class SizedQueue {
  readonly store: QueueStore<CopyEntry>;
  readonly #meta = new Map<string, { size: number; time: number }>();

  constructor(dir: string, limit: number) {
    this.store = new QueueStore<CopyEntry>(dir, limit);
  }

  async open(onCorrupt: (id: string, err: unknown) => void): Promise<void> {
    await this.store.open();
    this.#meta.clear();
    for (const e of await this.store.peek(Number.MAX_SAFE_INTEGER, ['ready', 'prepared', 'unsettled'], onCorrupt)) this.#meta.set(e.id, { size: e.value.size, time: e.value.time });
  }

  async put(e: CopyEntry, state: 'ready' | 'prepared'): Promise<string> {
    const [id] = await this.store.put([e], state);
    this.#meta.set(id!, { size: e.size, time: e.time });
    return id!;
  }

  async remove(ids: readonly string[]): Promise<void> {
    await this.store.remove(ids);
    for (const id of ids) this.#meta.delete(id);
  }

  get count(): number {
    return this.store.length;
  }

  bytes(): number {
    let b = 0;
    for (const m of this.#meta.values()) b += m.size;
    return b;
  }

  oldest(): number | undefined {
    let t: number | undefined;
    for (const m of this.#meta.values()) if (t === undefined || m.time < t) t = m.time;
    return t;
  }
}

type Outcome = 'done' | 'gone';

/** One remote target of one bucket: its queues, client, health and worker. */
class TargetRuntime implements WorkerTask<TargetReport> {
  readonly name: string;
  target: RemoteTarget;
  client: RemoteClient;
  readonly limit: BandwidthLimit;
  readonly queue: SizedQueue;
  readonly retry: SizedQueue;
  readonly worker: Worker<TargetReport>;
  readonly #o: { clock: Clock; logger: Logger; layer: ReplicationLayer; trust: ClientTrust | undefined };
  /** Checks the target (HEAD of its bucket) every `healthCheckSeconds`; runs from `open()` to `close()`, listed with the delivery worker. */
  readonly checker: Worker<PeriodicProgress>;
  #online = false;
  #checked = false;
  #lastOnline: number | undefined;
  #offlineSince: number | undefined;
  #downtimeMs = 0;
  #latency = { curr: 0, avg: 0, max: 0, n: 0 };
  #svc: boolean | undefined;
  #completed = 0;
  #completedBytes = 0;
  #failedAttempts = 0;
  #lastError: string | undefined;
  #lastErrorAt: number | undefined;
  #lastCompletedAt: number | undefined;
  #backoff = 0;
  #retryAt = 0;
  /** Entries found in the queue at start: their copy may have been sent before a crash. */
  readonly #maybeSent = new Set<string>();

  constructor(target: RemoteTarget, dir: string, limit: number, o: { clock: Clock; logger: Logger; layer: ReplicationLayer; trust: ClientTrust | undefined }) {
    this.name = `replication:${target.sourceBucket}:${arnId(target.arn)}`;
    this.target = target;
    this.#o = o;
    this.limit = new BandwidthLimit(target.bandwidthLimit, o.clock);
    this.client = new RemoteClient({ target, trust: o.trust, clock: o.clock, limit: this.limit });
    this.queue = new SizedQueue(join(dir, 'queue'), limit);
    this.retry = new SizedQueue(join(dir, 'retry'), limit);
    this.worker = new Worker(this, { clock: o.clock, logger: o.logger, idleMs: 5_000 });
    this.checker = periodicWorker({
      name: `replication-health:${target.sourceBucket}:${arnId(target.arn)}`,
      everyMs: () => this.target.healthCheckSeconds * 1000,
      clock: o.clock,
      logger: o.logger,
      tick: () => this.check(),
    });
  }

  async open(): Promise<void> {
    const onCorrupt = (id: string, err: unknown) => this.#o.logger.error({ event: 'replication_queue_entry_corrupt', target: this.target.arn, id, err: describe(err) }, 'unreadable replication queue entry removed');
    await this.queue.open(onCorrupt);
    await this.retry.open(onCorrupt);
    for (const e of await this.queue.store.peek(Number.MAX_SAFE_INTEGER, ['ready', 'prepared', 'unsettled'])) this.#maybeSent.add(e.id);
    this.worker.start();
    // Its first round checks the target at once.
    this.checker.start();
  }

  /** Replaces the target's settings (credential, bandwidth, health period); the queue stays. */
  async update(t: RemoteTarget): Promise<void> {
    const old = this.client;
    this.target = t;
    this.limit.rate = t.bandwidthLimit;
    this.client = new RemoteClient({ target: t, trust: this.#o.trust, clock: this.#o.clock, limit: this.limit });
    // A check now, with the new settings; the next one after the new period.
    this.checker.wake();
    await old.close();
  }

  /** Checks the target now (HEAD of its bucket); a target found back wakes the queue. */
  async check(): Promise<void> {
    try {
      const ms = await this.client.check();
      const l = this.#latency;
      l.n++;
      l.curr = ms;
      l.avg += (ms - l.avg) / l.n;
      l.max = Math.max(l.max, ms);
      this.#setOnline(true);
    } catch (err) {
      this.#setOnline(false, err);
    }
    this.#checked = true;
  }

  #setOnline(online: boolean, err?: unknown): void {
    const now = this.#o.clock.now();
    if (online) {
      this.#lastOnline = now;
      if (this.#offlineSince !== undefined) {
        this.#downtimeMs += now - this.#offlineSince;
        this.#offlineSince = undefined;
      }
      if (!this.#online) {
        this.#online = true;
        this.#backoff = 0;
        this.#retryAt = 0;
        this.#o.logger.info({ event: 'replication_target_online', target: this.target.arn, endpoint: this.target.endpoint }, 'replication target reachable');
        this.worker.wake();
      }
      return;
    }
    if (this.#online || !this.#checked) {
      this.#o.logger.warn({ event: 'replication_target_offline', target: this.target.arn, endpoint: this.target.endpoint, err: describe(err) }, 'replication target unreachable; copies wait in the queue');
    }
    this.#online = false;
    this.#offlineSince ??= now;
    this.#lastError = describe(err);
    this.#lastErrorAt = now;
  }

  #offline(err: RemoteError): void {
    this.#setOnline(false, err);
    this.#backoff = this.#backoff === 0 ? OFFLINE_BACKOFF_MIN_MS : Math.min(this.#backoff * 2, OFFLINE_BACKOFF_MAX_MS);
    this.#retryAt = this.#o.clock.now() + this.#backoff;
  }

  async #settle(): Promise<boolean> {
    const stale = await this.queue.store.peek(BATCH, ['unsettled']);
    for (const e of stale) {
      const ref = e.value.change;
      let exists: boolean;
      try {
        exists = ref === undefined ? true : await changeExists(this.#o.layer, ref);
      } catch (err) {
        this.#o.logger.warn({ event: 'replication_settle_failed', target: this.target.arn, err: describe(err) }, 'could not settle a queued copy yet');
        return false;
      }
      if (exists) await this.queue.store.confirm([e.id]);
      else await this.queue.remove([e.id]);
      this.#o.logger.info({ event: 'replication_settled', target: this.target.arn, kept: exists, key: e.value.key, versionId: e.value.versionId }, exists ? 'queued copy of a committed change kept' : 'queued copy of a change that never committed dropped');
    }
    return stale.length > 0;
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    if (this.queue.store.counts().unsettled > 0 && (await this.#settle())) return 'busy';
    const now = this.#o.clock.now();
    if (now < this.#retryAt) return 'idle';
    let did = false;
    const batch = await this.queue.store.peek(BATCH, ['ready']);
    if (batch.length > 0) {
      did = true;
      const offline = await this.#run(batch, this.queue, signal);
      if (offline) return 'idle';
    }
    const due = (await this.retry.store.peek(BATCH, ['ready'])).filter((e) => (e.value.nextAt ?? 0) <= now).slice(0, CONCURRENCY);
    if (due.length > 0) {
      did = true;
      if (await this.#run(due, this.retry, signal)) return 'idle';
    }
    return did ? 'busy' : 'idle';
  }

  /** Copies a batch, one key's entries in order, CONCURRENCY keys at a time. True when the target went offline. */
  async #run(batch: { id: string; value: CopyEntry }[], from: SizedQueue, signal: AbortSignal): Promise<boolean> {
    const byKey = new Map<string, { id: string; value: CopyEntry }[]>();
    for (const e of batch) {
      const k = `${e.value.bucket}/${e.value.key}`;
      const l = byKey.get(k);
      if (l) l.push(e);
      else byKey.set(k, [e]);
    }
    const groups = [...byKey.values()];
    let offline = false;
    let next = 0;
    const lane = async () => {
      for (;;) {
        const g = groups[next++];
        if (g === undefined || offline || signal.aborted) return;
        for (const e of g) {
          if (offline || signal.aborted) return;
          // Only a copy that may have reached the remote before (a retry, or queued before a restart) asks it first.
          const r = await this.#one(e.value, (e.value.attempts ?? 0) > 0 || this.#maybeSent.has(e.id), signal).catch((err: unknown) => err);
          this.#maybeSent.delete(e.id);
          if (r === 'done' || r === 'gone') {
            await from.remove([e.id]);
            if (r === 'done') {
              this.#completed++;
              this.#completedBytes += e.value.size;
              this.#lastCompletedAt = this.#o.clock.now();
            }
            this.#setOnline(true);
            continue;
          }
          if (signal.aborted) return;
          if (r instanceof RemoteError && r.retryable) {
            if (!offline) this.#offline(r);
            offline = true;
            return;
          }
          await this.#failed(e, from, r);
          // Later entries of the key wait behind it (order).
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, groups.length) }, lane));
    return offline;
  }

  /** A copy the target refused: FAILED on the version, the entry to the retry queue with backoff. */
  async #failed(e: { id: string; value: CopyEntry }, from: SizedQueue, err: unknown): Promise<void> {
    const now = this.#o.clock.now();
    this.#failedAttempts++;
    this.#lastError = describe(err);
    this.#lastErrorAt = now;
    const attempts = (e.value.attempts ?? 0) + 1;
    const wait = Math.min(RETRY_BACKOFF_MIN_MS * 2 ** (attempts - 1), RETRY_BACKOFF_MAX_MS);
    const next: CopyEntry = { ...e.value, attempts, nextAt: now + wait, lastError: this.#lastError };
    delete next.change;
    this.#o.logger.warn({ event: 'replication_copy_failed', target: this.target.arn, bucket: e.value.bucket, key: e.value.key, versionId: e.value.versionId, attempts, retryInMs: wait, err: this.#lastError }, 'replication copy failed; retrying later');
    if (e.value.op !== 'delete-version') await this.#status(e.value, 'FAILED').catch(() => undefined);
    if (from === this.retry) {
      await this.retry.remove([e.id]);
      await this.retry.put(next, 'ready');
    } else {
      await this.retry.put(next, 'ready');
      await this.queue.remove([e.id]);
    }
  }

  #status(e: CopyEntry, status: TargetStatus, remoteVersionId?: string): Promise<boolean> {
    return this.#o.layer.setReplicationStatus(e.bucket, e.key, e.versionId, this.target.arn, status, remoteVersionId);
  }

  #replicaHeaders(e: CopyEntry): Record<string, string> {
    return { [REPLICATION_REQUEST_HEADER]: 'true', [SOURCE_VERSION_HEADER]: e.versionId, [SOURCE_MTIME_HEADER]: String(e.time) };
  }

  /** Copies one entry. */
  async #one(e: CopyEntry, maybeSent: boolean, signal: AbortSignal): Promise<Outcome> {
    const layer = this.#o.layer;
    const c = this.client;
    if (e.op === 'delete-marker') {
      const r = await c.deleteObject(e.key, undefined, this.#replicaHeaders(e));
      await this.#status(e, 'COMPLETED', r.replica ? undefined : r.versionId || undefined);
      return 'done';
    }
    if (e.op === 'delete-version') {
      const vid = e.remoteVersionId ?? e.versionId;
      try {
        await c.deleteObject(e.key, vid, { [REPLICATION_REQUEST_HEADER]: 'true' });
      } catch (err) {
        // Already gone there (or never there: another store's ids differ) is done.
        if (!(err instanceof RemoteError && (err.status === 404 || (err.status === 400 && this.#svc !== true)))) throw err;
      }
      return 'done';
    }
    let info: ObjectInfo;
    try {
      info = await layer.getObjectInfo(e.bucket, e.key, { versionId: e.versionId });
    } catch (err) {
      // Removed before it was copied: nothing to copy (a replicated delete follows if the rules say so).
      if (hasCode(err, 'NoSuchVersion') || hasCode(err, 'NoSuchKey') || hasCode(err, 'NoSuchBucket') || (err instanceof SvcError && err.details?.['deleteMarker'] === true)) return 'gone';
      throw err;
    }
    if (info.sse?.type === 'SSE-C') throw new SvcError('NotImplemented', 'an SSE-C version is not replicated: svc does not keep the client key it would need to read it');
    if (maybeSent && this.#svc !== false) {
      // A retried copy (the status update lost to a crash) that the remote already holds is done.
      const there = await c.headVersion(e.key, e.versionId);
      if (there !== undefined && !there.deleteMarker && (info.sse !== undefined || there.etag === info.etag)) {
        this.#svc = true;
        await this.#status(e, 'COMPLETED');
        return 'done';
      }
    }
    const headers = { ...copyHeaders(info, e.storageClass ?? this.target.storageClass), ...this.#replicaHeaders(e) };
    let result: { versionId: string; replica: boolean };
    if (info.parts.length > 1) {
      const uploadId = await c.createUpload(e.key, headers);
      try {
        const parts: { number: number; etag: string }[] = [];
        for (const p of info.parts) {
          const got = await layer.getObject(e.bucket, e.key, { versionId: e.versionId, partNumber: p.number });
          try {
            parts.push({ number: p.number, etag: await c.uploadPart(e.key, uploadId, p.number, { stream: got.body, size: p.size }, signal) });
          } finally {
            got.body.destroy();
          }
        }
        result = await c.completeUpload(e.key, uploadId, parts);
        // A svc target kept the version id; the null version is answered without one.
        result.replica = result.versionId === (e.versionId === 'null' ? '' : e.versionId);
      } catch (err) {
        await c.abortUpload(e.key, uploadId);
        throw err;
      }
    } else {
      const got = await layer.getObject(e.bucket, e.key, { versionId: e.versionId });
      try {
        result = await c.putObject(e.key, headers, { stream: got.body, size: info.size }, signal);
      } finally {
        got.body.destroy();
      }
    }
    this.#svc = result.replica;
    await this.#status(e, 'COMPLETED', result.replica || result.versionId === '' ? undefined : result.versionId);
    return 'done';
  }

  async waitForWork(signal: AbortSignal): Promise<void> {
    const now = this.#o.clock.now();
    const wait = this.#retryAt > now ? this.#retryAt - now : 5_000;
    await sleepUnlessAborted(this.#o.clock, Math.max(wait, 10), signal);
  }

  health(): TargetHealth {
    return { online: this.#online, ...(this.#lastOnline !== undefined ? { lastOnline: this.#lastOnline } : {}), downtimeMs: this.#downtimeMs + (this.#offlineSince !== undefined ? this.#o.clock.now() - this.#offlineSince : 0), latency: { curr: this.#latency.curr, avg: this.#latency.avg, max: this.#latency.max } };
  }

  progress(): TargetReport {
    const t = this.target;
    const h = this.health();
    const oldest = [this.queue.oldest(), this.retry.oldest()].filter((x): x is number => x !== undefined);
    const r: TargetReport = {
      arn: t.arn,
      bucket: t.sourceBucket,
      endpoint: t.endpoint,
      secure: t.secure,
      targetBucket: t.targetBucket,
      online: h.online,
      downtimeMs: h.downtimeMs,
      latencyMs: { curr: Math.round(h.latency.curr * 10) / 10, avg: Math.round(h.latency.avg * 10) / 10, max: Math.round(h.latency.max * 10) / 10 },
      bandwidthLimit: t.bandwidthLimit,
      queued: { count: this.queue.count, bytes: this.queue.bytes() },
      failed: { count: this.retry.count, bytes: this.retry.bytes() },
      completed: { count: this.#completed, bytes: this.#completedBytes },
      failedAttempts: this.#failedAttempts,
      lagMs: oldest.length === 0 ? 0 : Math.max(0, this.#o.clock.now() - Math.min(...oldest)),
    };
    if (h.lastOnline !== undefined) r.lastOnline = h.lastOnline;
    if (this.#svc !== undefined) r.svcTarget = this.#svc;
    if (this.#lastError !== undefined) r.lastError = this.#lastError;
    if (this.#lastErrorAt !== undefined) r.lastErrorAt = this.#lastErrorAt;
    if (this.#lastCompletedAt !== undefined) r.lastCompletedAt = this.#lastCompletedAt;
    return r;
  }

  async close(): Promise<void> {
    await this.checker.stop();
    await this.worker.stop();
    await this.client.close();
  }
}

export interface ReplicationSystemOptions {
  layer: ReplicationLayer;
  /** Directory holding every target's queues (below the node's first local drive). */
  dir: string;
  queueLimit?: number;
  trust: ClientTrust | undefined;
  clock: Clock;
  logger: Logger;
}

export class ReplicationSystem implements PostCommitHook {
  readonly #o: ReplicationSystemOptions;
  readonly #targets = new Map<string, TargetRuntime>();
  readonly #parsed = new ParsedConfigCache<ReplicationConfig>((raw) => decodeReplicationConfig(raw)!);
  #loading = new Map<string, Promise<void>>();
  /** Re-reads the buckets' targets every `REFRESH_MS`; started by `start()`. */
  readonly refresher: Worker<PeriodicProgress>;
  /** Publishes the targets' numbers every `PUBLISH_MS`; started by `start()`. */
  readonly publisher: Worker<PeriodicProgress>;
  #closed = false;

  constructor(o: ReplicationSystemOptions) {
    this.#o = o;
    this.refresher = periodicWorker({
      name: 'replication-refresh',
      everyMs: REFRESH_MS,
      atStart: false,
      tick: () => this.refresh().catch((err: unknown) => o.logger.warn({ event: 'replication_refresh_failed', err: describe(err) }, 'could not re-read the replication targets')),
      clock: o.clock,
      logger: o.logger,
    });
    this.publisher = periodicWorker({ name: 'replication-metrics', everyMs: PUBLISH_MS, atStart: false, tick: () => this.publish(), clock: o.clock, logger: o.logger });
  }

  /** Starts the periodic re-read and the metrics publication. */
  start(): void {
    if (!this.refresher.active) this.refresher.start();
    if (!this.publisher.active) this.publisher.start();
  }

  /** The periodic loops and every target's delivery worker and health check. */
  workers(): Worker<unknown>[] {
    return [this.refresher, this.publisher, ...[...this.#targets.values()].flatMap((t) => [t.worker, t.checker])];
  }

  /** The targets' numbers to the metrics (`svc_replication_*`), when someone listens. */
  publish(): void {
    if (!replicationTargets.hasSubscribers) return;
    const targets = this.status().map((t) => ({
      bucket: t.bucket,
      arn: t.arn,
      online: t.online,
      queuedCount: t.queued.count,
      queuedBytes: t.queued.bytes,
      failedCount: t.failed.count,
      failedBytes: t.failed.bytes,
      completedCount: t.completed.count,
      completedBytes: t.completed.bytes,
      lagSeconds: t.lagMs / 1000,
    }));
    replicationTargets.publish({ targets } satisfies ReplicationTargetsMessage);
  }

  /** Loads every bucket's targets (start-up; then every 30 s and on demand). */
  async refresh(): Promise<void> {
    const buckets = await this.#o.layer.listBuckets();
    const seen = new Set<string>();
    for (const b of buckets) {
      for (const t of await this.#bucketTargets(b.name)) {
        seen.add(t.arn);
        await this.#apply(t);
      }
    }
    for (const [arn, rt] of [...this.#targets]) {
      // A target removed (or its bucket gone) stops; its queue directory stays on disk.
      if (!seen.has(arn) && rt.queue.count === 0 && rt.retry.count === 0) {
        this.#targets.delete(arn);
        await rt.close();
      }
    }
  }

  async #bucketTargets(bucket: string): Promise<RemoteTarget[]> {
    try {
      return decodeTargets(await this.#o.layer.getBucketConfig(bucket, 'replication-targets')).targets;
    } catch (err) {
      if (hasCode(err, 'NoSuchBucket')) return [];
      throw err;
    }
  }

  /** Adds a target or updates its settings. */
  async #apply(t: RemoteTarget): Promise<TargetRuntime> {
    const cur = this.#targets.get(t.arn);
    if (cur) {
      if (JSON.stringify(cur.target) !== JSON.stringify(t)) await cur.update(t);
      return cur;
    }
    const pending = this.#loading.get(t.arn);
    if (pending) {
      await pending;
      return this.#targets.get(t.arn)!;
    }
    const load = (async () => {
      const rt = new TargetRuntime(t, join(this.#o.dir, t.sourceBucket, arnId(t.arn)), this.#o.queueLimit ?? DEFAULT_REPLICATION_QUEUE_LIMIT, { clock: this.#o.clock, logger: this.#o.logger, layer: this.#o.layer, trust: this.#o.trust });
      await rt.open();
      this.#targets.set(t.arn, rt);
      this.#o.logger.info({ event: 'replication_target_ready', target: t.arn, bucket: t.sourceBucket, endpoint: t.endpoint, queued: rt.queue.count, failed: rt.retry.count }, `replication target ${t.arn} ready`);
    })();
    this.#loading.set(t.arn, load);
    try {
      await load;
    } finally {
      this.#loading.delete(t.arn);
    }
    return this.#targets.get(t.arn)!;
  }

  /** A target's runtime, loaded from its bucket's record when this node does not run it yet. */
  async runtime(bucket: string, arn: string): Promise<TargetRuntime | undefined> {
    const rt = this.#targets.get(arn);
    if (rt) return rt;
    const t = (await this.#bucketTargets(bucket)).find((x) => x.arn === arn);
    return t ? this.#apply(t) : undefined;
  }

  /** Re-reads one bucket's targets now (after a change through the admin API on this node or a peer). */
  async reloadBucket(bucket: string): Promise<void> {
    const want = await this.#bucketTargets(bucket);
    for (const t of want) await this.#apply(t);
    for (const [arn, rt] of [...this.#targets]) {
      if (rt.target.sourceBucket === bucket && !want.some((t) => t.arn === arn)) {
        this.#targets.delete(arn);
        await rt.close();
      }
    }
  }

  async config(bucket: string): Promise<ReplicationConfig | undefined> {
    let raw: Uint8Array | undefined;
    try {
      raw = await this.#o.layer.getBucketConfig(bucket, 'replication');
    } catch (err) {
      if (hasCode(err, 'NoSuchBucket')) return undefined;
      throw err;
    }
    return this.#parsed.get(bucket, raw);
  }

  /** Queues a copy of an existing version (resync), ready at once. False when its target is unknown here. */
  async enqueue(arn: string, e: CopyEntry): Promise<boolean> {
    const rt = await this.runtime(e.bucket, arn);
    if (!rt) return false;
    await rt.queue.put(e, 'ready');
    rt.worker.wake();
    return true;
  }

  /** Entries a target's queue holds (resync paces itself on it). */
  queued(arn: string): number {
    return this.#targets.get(arn)?.queue.count ?? 0;
  }

  // ---- the post-commit hook

  async prepare(change: Change): Promise<PostCommitTicket | undefined> {
    if (change.replica === true || this.#closed) return undefined;
    const cfg = await this.config(change.bucket);
    if (!cfg) return undefined;
    const op: ReplicationOp =
      change.kind === 'created' ? { kind: 'object', key: change.key, tags: change.tags ?? '' } : change.kind === 'delete-marker' ? { kind: 'delete-marker', key: change.key } : { kind: 'delete-version', key: change.key };
    const rules = selectRules(cfg, op);
    if (rules.length === 0) return undefined;
    const ref: SettleRef = { kind: change.kind, bucket: change.bucket, key: change.key, versionId: change.versionId };
    const meta = op.kind === 'delete-version' ? await this.#o.layer.versionMeta(change.bucket, change.key, change.versionId) : undefined;
    const put: { rt: TargetRuntime; id: string }[] = [];
    try {
      for (const r of rules) {
        const rt = await this.runtime(change.bucket, r.destination);
        if (!rt) {
          this.#o.logger.warn({ event: 'replication_target_missing', bucket: change.bucket, target: r.destination }, 'a replication rule names a target the bucket no longer has');
          continue;
        }
        const e: CopyEntry = { op: op.kind, bucket: change.bucket, key: change.key, versionId: change.versionId, time: change.time, size: change.kind === 'created' ? (change.size ?? 0) : 0, change: ref };
        if (r.storageClass) e.storageClass = r.storageClass;
        const remoteVid = meta ? remoteVersionId(meta, rt.target.arn) : undefined;
        if (remoteVid) e.remoteVersionId = remoteVid;
        put.push({ rt, id: await rt.queue.put(e, 'prepared') });
      }
    } catch (err) {
      await Promise.all(put.map((p) => p.rt.queue.remove([p.id])));
      if (hasCode(err, 'XSvcNotifyQueueFull')) {
        this.#o.logger.error({ event: 'replication_queue_full', bucket: change.bucket, key: change.key }, 'a replication queue is full: write refused');
        throw new SvcError('XSvcReplicationQueueFull', undefined, { bucket: change.bucket });
      }
      throw err instanceof SvcError ? err : new SvcError('InternalError', `replication queue: ${describe(err)}`, undefined, { cause: err });
    }
    if (put.length === 0) return undefined;
    const ticket: PostCommitTicket = {
      ...(op.kind !== 'delete-version' ? { sysMeta: pendingMeta(put.map((p) => p.rt.target.arn)) } : {}),
      committed: async () => {
        for (const p of put) {
          try {
            await p.rt.queue.store.confirm([p.id]);
          } catch (err) {
            // The entry stays prepared on disk and is settled like one a crash left.
            this.#o.logger.error({ event: 'replication_confirm_failed', target: p.rt.target.arn, err: describe(err) }, 'queued copy could not be marked ready');
          }
          p.rt.worker.wake();
        }
      },
      abandoned: async () => {
        await Promise.all(put.map((p) => p.rt.queue.remove([p.id])));
      },
    };
    return ticket;
  }

  /** Every target of this node (optionally of one bucket) with its status. */
  status(bucket?: string): TargetReport[] {
    return [...this.#targets.values()].filter((t) => bucket === undefined || t.target.sourceBucket === bucket).map((t) => t.progress());
  }

  health(arn: string): TargetHealth | undefined {
    return this.#targets.get(arn)?.health();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.refresher.stop();
    await this.publisher.stop();
    for (const rt of this.#targets.values()) await rt.close();
    this.#targets.clear();
  }
}

/**
 * Bucket notifications on one node: the targets with their queues and
 * delivery workers, the bucket configurations (read through the object
 * layer's cached bucket record), the post-commit hook that turns the
 * namespace's changes into events, and the live listeners
 * (`ListenBucketNotification`).
 *
 * Life of an event (`docs/notifications.md`):
 *  1. Under the key's write lock, before the commit, `prepare` matches the
 *     change against the bucket's configuration and puts one entry per
 *     selected target into that target's queue as `prepared` (fsync'd): a
 *     queue that cannot take it refuses the write.
 *  2. The commit reaches write quorum: the entries become `ready`
 *     (`committed`) before the client is answered; a failed commit removes
 *     them (`abandoned`). After a crash in between, the entries come back
 *     `unsettled` and are settled against the namespace (is the version
 *     there?) before they are delivered or dropped.
 *  3. Each target's worker delivers its queue in order, removing an entry
 *     once the target acknowledged it, retrying with backoff (1 s doubling
 *     to 60 s) while it fails: at least once, per target in queue order.
 */
import { ParsedConfigCache } from '../object/parsed-config-cache.ts';
import { join } from 'node:path';
import type { NotifyTargetReport } from '../object/admin/services.ts';
import type { Change, ChangeKind, PostCommitHook, PostCommitTicket } from '../object/post-commit.ts';
import { sleepUnlessAborted, Worker, type WorkerTask, type WorkResult } from '../util/worker.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { decodeNotificationConfig, matchRules, type NotificationConfig, type TargetArn, targetArn, targetKey } from './bucket-config.ts';
import { type EventName, type EventSourceInfo, eventMessage, type ObjectEvent, patternMatches, Sequencer } from './event.ts';
import { QueueStore } from './queue-store.ts';
import type { Target, TargetMessage } from './targets/target.ts';

/** What the system needs of the object layer. */
export interface NotifyLayer {
  getBucketConfig(bucket: string, kind: 'notification'): Promise<Uint8Array | undefined>;
  /** Settles an entry left unsettled by a crash: does the change it describes exist? */
  changeExists(change: SettleRef): Promise<boolean>;
}

/** The change an entry describes, for settling it after a crash. */
export interface SettleRef {
  kind: ChangeKind;
  bucket: string;
  key: string;
  versionId: string;
}

/** A queue entry: the message and, for entries made before a commit, what to settle them against. */
export interface QueuedMessage extends TargetMessage {
  change?: SettleRef;
}

/** A target's status (the admin API's report less where it was configured). */
export type TargetStatus = Omit<NotifyTargetReport, 'source'>;

/** A live listener (`ListenBucketNotification`): gets every event of a bucket (or every bucket) matching its filter. */
export interface Listener {
  bucket?: string;
  prefix?: string;
  suffix?: string;
  events: readonly string[];
  send(record: Record<string, unknown>): void;
  /** Ends the listener's response (the node is shutting down: the client reconnects elsewhere). */
  end?(): void;
}

const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
const BATCH = 64;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function eventNameOf(c: Change): EventName {
  if (c.kind === 'created') {
    if (c.cause === 'multipart') return 'ObjectCreated:CompleteMultipartUpload';
    if (c.origin?.via === 'post') return 'ObjectCreated:Post';
    if (c.origin?.via === 'copy') return 'ObjectCreated:Copy';
    return 'ObjectCreated:Put';
  }
  if (c.kind === 'delete-marker') return c.cause === 'lifecycle' ? 'LifecycleExpiration:DeleteMarkerCreated' : 'ObjectRemoved:DeleteMarkerCreated';
  return c.cause === 'lifecycle' ? 'LifecycleExpiration:Delete' : 'ObjectRemoved:Delete';
}

/** The origin lifecycle events carry (S3 names its own service). */
const LIFECYCLE_ORIGIN = { principalId: 'svc:lifecycle', sourceIp: '', requestId: '', hostId: '' };

/** One target: its queue and the worker task delivering it. */
class TargetRuntime implements WorkerTask<TargetStatus> {
  readonly name: string;
  readonly target: Target;
  readonly store: QueueStore<QueuedMessage>;
  readonly worker: Worker<TargetStatus>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #layer: NotifyLayer;
  #online = false;
  #delivered = 0;
  #failed = 0;
  #lastError: string | undefined;
  #lastErrorAt: number | undefined;
  #lastDeliveredAt: number | undefined;
  #backoff = 0;
  #retryAt = 0;

  constructor(target: Target, store: QueueStore<QueuedMessage>, o: { clock: Clock; logger: Logger; layer: NotifyLayer }) {
    this.name = `notify:${target.key}`;
    this.target = target;
    this.store = store;
    this.#clock = o.clock;
    this.#log = o.logger;
    this.#layer = o.layer;
    this.worker = new Worker(this, { clock: o.clock, logger: o.logger, idleMs: 5_000 });
  }

  #fail(err: unknown): void {
    this.#online = false;
    this.#failed++;
    this.#lastError = describe(err);
    this.#lastErrorAt = this.#clock.now();
    this.#backoff = this.#backoff === 0 ? BACKOFF_MIN_MS : Math.min(this.#backoff * 2, BACKOFF_MAX_MS);
    this.#retryAt = this.#clock.now() + this.#backoff;
    this.#log.warn({ event: 'notify_delivery_failed', target: this.target.key, err: this.#lastError, retryInMs: this.#backoff, queued: this.store.length }, 'notification target did not take an event; retrying');
  }

  async #settle(): Promise<boolean> {
    const stale = await this.store.peek(BATCH, ['unsettled']);
    for (const e of stale) {
      const ref = e.value.change;
      let exists: boolean;
      try {
        exists = ref === undefined ? true : await this.#layer.changeExists(ref);
      } catch (err) {
        // Not decidable now (below quorum): tried again at the next step.
        this.#log.warn({ event: 'notify_settle_failed', target: this.target.key, err: describe(err) }, 'could not settle a queued event yet');
        return false;
      }
      if (exists) await this.store.confirm([e.id]);
      else await this.store.remove([e.id]);
      this.#log.info({ event: 'notify_settled', target: this.target.key, kept: exists, key: e.value.key }, exists ? 'queued event of a committed change kept' : 'queued event of a change that never committed dropped');
    }
    return stale.length > 0;
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    if (this.store.counts().unsettled > 0 && (await this.#settle())) return 'busy';
    if (this.#clock.now() < this.#retryAt) return 'idle';
    const batch = await this.store.peek(BATCH, ['ready'], (id, err) => {
      this.#log.error({ event: 'notify_queue_entry_corrupt', target: this.target.key, id, err: describe(err) }, 'unreadable queued event removed');
    });
    if (batch.length === 0) return 'idle';
    for (const e of batch) {
      if (signal.aborted) return 'busy';
      try {
        await this.target.send(e.value);
      } catch (err) {
        this.#fail(err);
        return 'idle';
      }
      await this.store.remove([e.id]);
      this.#delivered++;
      this.#online = true;
      this.#backoff = 0;
      this.#retryAt = 0;
      this.#lastDeliveredAt = this.#clock.now();
    }
    return 'busy';
  }

  async waitForWork(signal: AbortSignal): Promise<void> {
    const wait = this.#retryAt > this.#clock.now() ? this.#retryAt - this.#clock.now() : 5_000;
    await sleepUnlessAborted(this.#clock, wait, signal);
  }

  /** Checks the target when nothing was delivered lately (status pages). */
  async check(): Promise<void> {
    try {
      await this.target.ping();
      this.#online = true;
    } catch (err) {
      this.#online = false;
      this.#lastError = describe(err);
      this.#lastErrorAt = this.#clock.now();
    }
  }

  progress(): TargetStatus {
    const s: TargetStatus = {
      arn: targetArn(this.target.id, this.target.type),
      id: this.target.id,
      type: this.target.type,
      online: this.#online,
      queued: this.store.length,
      queueDir: this.store.dir,
      queueLimit: this.store.limit,
      delivered: this.#delivered,
      failedAttempts: this.#failed,
    };
    if (this.#lastError !== undefined) s.lastError = this.#lastError;
    if (this.#lastErrorAt !== undefined) s.lastErrorAt = this.#lastErrorAt;
    if (this.#lastDeliveredAt !== undefined) s.lastDeliveredAt = this.#lastDeliveredAt;
    return s;
  }
}

export interface NotificationSystemOptions {
  layer: NotifyLayer;
  clock: Clock;
  logger: Logger;
  region: string;
  /** Canonical id of the buckets' owner (`s3.bucket.ownerIdentity`). */
  ownerId: () => string;
}

export class NotificationSystem implements PostCommitHook {
  readonly #layer: NotifyLayer;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #region: string;
  readonly #ownerId: () => string;
  readonly #targets = new Map<string, TargetRuntime>();
  readonly #seq = new Sequencer();
  readonly #listeners = new Set<Listener>();
  /** Each bucket's last parsed configuration with its bytes. */
  readonly #parsed = new ParsedConfigCache<NotificationConfig>((raw) => decodeNotificationConfig(raw)!);

  constructor(o: NotificationSystemOptions) {
    this.#layer = o.layer;
    this.#clock = o.clock;
    this.#log = o.logger;
    this.#region = o.region;
    this.#ownerId = o.ownerId;
  }

  get region(): string {
    return this.#region;
  }

  #source(): EventSourceInfo {
    return { region: this.#region, ownerId: this.#ownerId() };
  }

  /** Adds a target (replacing one with the same key) and starts delivering its queue. */
  async addTarget(target: Target, queue: { dir: string; limit: number }): Promise<void> {
    const store = new QueueStore<QueuedMessage>(queue.dir, queue.limit);
    await store.open();
    await this.removeTarget(target.key);
    const rt = new TargetRuntime(target, store, { clock: this.#clock, logger: this.#log, layer: this.#layer });
    this.#targets.set(target.key, rt);
    rt.worker.start();
    const c = store.counts();
    this.#log.info({ event: 'notify_target_added', target: target.key, queueDir: queue.dir, queued: store.length, unsettled: c.unsettled }, `notification target ${target.key} ready`);
  }

  /** Stops a target's delivery and closes its client; its queue directory stays (a later target with the key delivers it). */
  async removeTarget(key: string): Promise<boolean> {
    const rt = this.#targets.get(key);
    if (!rt) return false;
    this.#targets.delete(key);
    await rt.worker.stop();
    await rt.target.close().catch(() => undefined);
    return true;
  }

  /** Whether an ARN names a target of this node (bucket configurations are checked against it). */
  /** Every target's delivery worker. */
  workers(): Worker<TargetStatus>[] {
    return [...this.#targets.values()].map((t) => t.worker);
  }

  knownTarget(arn: TargetArn): boolean {
    return this.#targets.has(targetKey(arn));
  }

  /** ARNs of the targets (`sqsARN` of server info). */
  arns(): string[] {
    return [...this.#targets.values()].map((t) => targetArn(t.target.id, t.target.type, this.#region));
  }

  status(): TargetStatus[] {
    return [...this.#targets.values()].map((t) => t.progress());
  }

  /** Checks every target's reachability (ping) and returns the status. */
  async checkedStatus(): Promise<TargetStatus[]> {
    await Promise.all([...this.#targets.values()].map((t) => t.check()));
    return this.status();
  }

  async #config(bucket: string): Promise<NotificationConfig | undefined> {
    const raw = await this.#layer.getBucketConfig(bucket, 'notification');
    return this.#parsed.get(bucket, raw);
  }

  #event(name: EventName, c: Pick<Change, 'bucket' | 'key' | 'versionId' | 'time' | 'size' | 'etag' | 'contentType' | 'userMeta' | 'origin'>): ObjectEvent {
    const e: ObjectEvent = {
      name,
      bucket: c.bucket,
      key: c.key,
      time: c.time,
      versionId: c.versionId,
      sequencer: this.#seq.next(c.bucket, c.key, c.time),
      origin: c.origin ?? LIFECYCLE_ORIGIN,
    };
    if (c.size !== undefined) e.size = c.size;
    if (c.etag !== undefined) e.etag = c.etag;
    if (c.contentType !== undefined) e.contentType = c.contentType;
    if (c.userMeta !== undefined) e.userMetadata = c.userMeta;
    return e;
  }

  /** Listeners that want an event. */
  #listenersFor(e: ObjectEvent): Listener[] {
    const out: Listener[] = [];
    for (const l of this.#listeners) {
      if (l.bucket !== undefined && l.bucket !== e.bucket) continue;
      if (l.prefix !== undefined && !e.key.startsWith(l.prefix)) continue;
      if (l.suffix !== undefined && !e.key.endsWith(l.suffix)) continue;
      if (!l.events.some((p) => patternMatches(p, e.name))) continue;
      out.push(l);
    }
    return out;
  }

  #tellListeners(e: ObjectEvent): void {
    if (this.#listeners.size === 0) return;
    const ls = this.#listenersFor(e);
    if (ls.length === 0) return;
    const record = eventMessage(e, '', this.#source()).Records[0]!;
    for (const l of ls) {
      try {
        l.send(record);
      } catch (err) {
        this.#log.warn({ event: 'notify_listener_failed', err: describe(err) }, 'a listener could not take an event');
      }
    }
  }

  /** Messages for the targets the bucket's configuration selects (targets this node lacks are logged and skipped). */
  #messages(cfg: NotificationConfig | undefined, e: ObjectEvent, change?: SettleRef): Map<TargetRuntime, QueuedMessage> {
    const out = new Map<TargetRuntime, QueuedMessage>();
    if (!cfg) return out;
    for (const m of matchRules(cfg, e.name, e.key)) {
      const rt = this.#targets.get(m.target);
      if (!rt) {
        this.#log.warn({ event: 'notify_target_missing', bucket: e.bucket, target: m.target }, 'a bucket configuration names a target this node does not have');
        continue;
      }
      if (out.has(rt)) continue;
      out.set(rt, {
        eventName: `s3:${e.name}`,
        key: `${e.bucket}/${e.key}`,
        time: e.time,
        removal: !e.name.startsWith('ObjectCreated') && !e.name.startsWith('ObjectAccessed') && !e.name.startsWith('ObjectTagging') && !e.name.startsWith('ObjectAcl'),
        message: eventMessage(e, m.id, this.#source()),
        ...(change ? { change } : {}),
      });
    }
    return out;
  }

  /** Whether an event of this name and key concerns anyone (a configured rule or a listener): nothing is built otherwise. */
  #wanted(cfg: NotificationConfig | undefined, name: EventName, c: Pick<Change, 'bucket' | 'key'>): boolean {
    if (cfg !== undefined && matchRules(cfg, name, c.key).length > 0) return true;
    for (const l of this.#listeners) {
      if ((l.bucket === undefined || l.bucket === c.bucket) && l.events.some((p) => patternMatches(p, name))) return true;
    }
    return false;
  }

  // ---- the post-commit hook

  async prepare(change: Change): Promise<PostCommitTicket | undefined> {
    const name = eventNameOf(change);
    const cfg = await this.#config(change.bucket);
    if (!this.#wanted(cfg, name, change)) return undefined;
    const e = this.#event(name, change);
    const ref: SettleRef = { kind: change.kind, bucket: change.bucket, key: change.key, versionId: change.versionId };
    const msgs = this.#messages(cfg, e, ref);
    const put: { rt: TargetRuntime; ids: string[] }[] = [];
    try {
      for (const [rt, m] of msgs) put.push({ rt, ids: await rt.store.put([m], 'prepared') });
    } catch (err) {
      await Promise.all(put.map((p) => p.rt.store.remove(p.ids)));
      if (hasCode(err, 'XSvcNotifyQueueFull')) this.#log.error({ event: 'notify_queue_full', bucket: change.bucket, key: change.key, err: describe(err) }, 'a notification queue is full: write refused');
      throw err instanceof SvcError ? err : new SvcError('InternalError', `notification queue: ${describe(err)}`, undefined, { cause: err });
    }
    return {
      committed: async () => {
        for (const p of put) {
          try {
            await p.rt.store.confirm(p.ids);
          } catch (err) {
            // The entry stays prepared on disk and is settled like one a crash left.
            this.#log.error({ event: 'notify_confirm_failed', target: p.rt.target.key, err: describe(err) }, 'queued event could not be marked ready');
          }
          p.rt.worker.wake();
        }
        this.#tellListeners(e);
      },
      abandoned: async () => {
        await Promise.all(put.map((p) => p.rt.store.remove(p.ids)));
      },
    };
  }

  /**
   * Events that change nothing durable (`ObjectAccessed:*`) or follow an
   * in-place metadata change (`ObjectTagging:*`, `ObjectAcl:Put`): queued
   * ready once the request succeeded.
   */
  async publish(name: EventName, c: Pick<Change, 'bucket' | 'key' | 'versionId' | 'time' | 'size' | 'etag' | 'contentType' | 'userMeta' | 'origin'>): Promise<void> {
    const cfg = await this.#config(c.bucket);
    if (!this.#wanted(cfg, name, c)) return;
    const e = this.#event(name, c);
    const msgs = this.#messages(cfg, e);
    for (const [rt, m] of msgs) {
      await rt.store.put([m]);
      rt.worker.wake();
    }
    this.#tellListeners(e);
  }

  /** Adds a live listener; returns its removal. */
  listen(l: Listener): () => void {
    this.#listeners.add(l);
    return () => {
      this.#listeners.delete(l);
    };
  }

  /** A graceful stop began: every live listener's response ends now rather than at the drain deadline. */
  endListeners(): void {
    for (const l of [...this.#listeners]) l.end?.();
  }

  async close(): Promise<void> {
    for (const key of [...this.#targets.keys()]) await this.removeTarget(key);
    this.#listeners.clear();
  }
}

/** Default queue directory of a target below a node's first local drive. */
export function defaultQueueDir(driveRoot: string, type: string, id: string): string {
  return join(driveRoot, '.svc.sys', 'notify', 'queue', `${type}-${id}`);
}

/**
 * Settles a change against the namespace: a new version or delete marker
 * exists with its version id, a removed version no longer does.
 */
export async function changeExists(
  layer: { getObjectInfo(bucket: string, key: string, opts: { versionId?: string }): Promise<unknown> },
  ref: SettleRef,
): Promise<boolean> {
  try {
    await layer.getObjectInfo(ref.bucket, ref.key, { versionId: ref.versionId });
    return ref.kind === 'created';
  } catch (err) {
    if (err instanceof SvcError && err.code === 'MethodNotAllowed' && err.details?.['deleteMarker'] === true) return ref.kind === 'delete-marker';
    if (hasCode(err, 'NoSuchVersion') || hasCode(err, 'NoSuchKey') || hasCode(err, 'NoSuchBucket')) return ref.kind === 'version-removed';
    throw err;
  }
}

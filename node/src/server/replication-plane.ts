/**
 * Composes bucket replication on a node: the replication system (targets,
 * queues below the node's first local drive, copy workers) as the object
 * layer's post-commit hook, the remote targets set through the admin API
 * (`set-remote-target`, `list-remote-targets`, `remove-remote-target`:
 * what `mc admin bucket remote` and `mc replicate` call), the replication
 * status, and resync workers (start, status, cancel).
 *
 * Targets live in the bucket's record (`replication-targets`
 * configuration), so every node sees them (peers drop their cached record
 * on change and load a target on the first write that needs it; every node
 * re-reads all targets every 30 s). A target is checked before it is
 * stored: reachable with its credential, and its bucket versioned.
 */
import { join } from 'node:path';
import { decryptData } from '../iam/madmin-crypto.ts';
import type { ReplicationAdmin } from '../object/admin/services.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { Worker } from '../util/worker.ts';
import { destinations } from '../replication/config.ts';
import { BandwidthLimit, RemoteClient, RemoteError } from '../replicator/remote.ts';
import { ReplicationSystem, type TargetReport } from '../replicator/replication-system.ts';
import { type ResyncRecord, resyncRecordPath, ResyncTask } from '../replicator/resync.ts';
import { decodeTargets, encodeTargets, newTargetArn, normaliseArn, parseBucketTarget, type RemoteTarget, toWire } from '../replication/targets.ts';
import { type ClientTrust, tlsFailureReason } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';

export interface ReplicationPlaneOptions {
  layer: ServerPools;
  /** Roots of this node's local drives (the first holds the queues). */
  drives: readonly string[];
  trust: ClientTrust | undefined;
  /** This node's id (`host:port`): resyncs it started resume here after a restart. */
  selfId: string;
  clock: Clock;
  logger: Logger;
}

export interface BucketReplicationStatus {
  bucket: string;
  targets: TargetReport[];
  resync: ResyncRecord[];
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class ReplicationPlane implements ReplicationAdmin {
  readonly system: ReplicationSystem;
  readonly #o: ReplicationPlaneOptions;
  readonly #resyncs = new Map<string, { task: ResyncTask; worker: Worker<ResyncRecord> }>();

  private constructor(o: ReplicationPlaneOptions, dir: string) {
    this.#o = o;
    this.system = new ReplicationSystem({ layer: o.layer, dir, trust: o.trust, clock: o.clock, logger: o.logger });
  }

  static async start(o: ReplicationPlaneOptions): Promise<ReplicationPlane> {
    const first = o.drives[0];
    if (first === undefined) throw new Error('replication needs a local drive for its queues');
    const plane = new ReplicationPlane(o, join(first, '.svc.sys', 'replication'));
    o.layer.setPostCommitHook(plane.system, 'replication');
    // Targets with their queues (a restart resumes what was queued); the periodic refresh catches up when storage is not readable yet.
    await plane.system.refresh().catch((err: unknown) => o.logger.warn({ event: 'replication_refresh_failed', err: describe(err) }, 'could not read the replication targets yet'));
    await plane.#resumeResyncs().catch((err: unknown) => o.logger.warn({ event: 'replication_resync_resume_failed', err: describe(err) }, 'could not resume replication resyncs'));
    return plane;
  }

  async #targets(bucket: string): Promise<RemoteTarget[]> {
    return decodeTargets(await this.#o.layer.getBucketConfig(bucket, 'replication-targets')).targets;
  }

  // ---- remote targets

  async setTarget(bucket: string, body: Buffer, secretKey: string | undefined, update: boolean): Promise<string> {
    const info = await this.#o.layer.getBucketInfo(bucket);
    if (info.versioning !== 'Enabled') throw new SvcError('InvalidRequest', `versioning must be enabled on the bucket ${bucket} before it replicates`);
    let doc: unknown;
    const text = body.toString('utf8').trim();
    if (text.startsWith('{')) doc = JSON.parse(text);
    else {
      if (secretKey === undefined) throw new SvcError('XSvcAdminConfigBadJson', 'the body is encrypted but the caller has no secret key to decrypt it');
      try {
        doc = JSON.parse((await decryptData(secretKey, body)).toString('utf8'));
      } catch {
        throw new SvcError('XSvcAdminConfigBadJson', 'the body could not be decrypted with the caller\'s secret key (madmin EncryptData) or is not JSON');
      }
    }
    const current = await this.#targets(bucket);
    const bodyArn = typeof (doc as { arn?: unknown }).arn === 'string' ? normaliseArn((doc as { arn: string }).arn) : undefined;
    const parsedFirst = parseBucketTarget(doc, bucket);
    const existing = current.find((t) => (bodyArn !== undefined && t.arn === bodyArn) || (t.endpoint === parsedFirst.endpoint && t.targetBucket === parsedFirst.targetBucket));
    if (update && existing === undefined) throw new SvcError('XSvcReplicationNoSuchTarget', `no remote target of ${bucket} to update (arn ${bodyArn ?? 'not given'})`);
    const parsed = parseBucketTarget(doc, bucket, existing);
    const target: RemoteTarget = { ...parsed, arn: existing?.arn ?? newTargetArn(parsed.targetBucket), created: existing?.created ?? this.#o.clock.now() };
    await this.#check(target);
    await this.#o.layer.setBucketConfig(bucket, 'replication-targets', encodeTargets({ targets: [...current.filter((t) => t.arn !== target.arn), target] }));
    await this.system.reloadBucket(bucket);
    this.#o.logger.info({ event: 'replication_target_set', bucket, target: target.arn, endpoint: target.endpoint, targetBucket: target.targetBucket, updated: existing !== undefined }, `remote target ${target.arn} set`);
    return target.arn;
  }

  /** A target must answer with its credential and have versioning on. */
  async #check(t: RemoteTarget): Promise<void> {
    const client = new RemoteClient({ target: t, trust: this.#o.trust, clock: this.#o.clock, limit: new BandwidthLimit(0, this.#o.clock) });
    try {
      let versioning: string;
      try {
        await client.check();
        versioning = await client.versioning();
      } catch (err) {
        const why = err instanceof RemoteError ? err.message : describe(err);
        // A refused certificate has one remedy, on this side: trust the CA that signed it.
        const remedy = tlsFailureReason(err) !== undefined ? "; trust the target's CA by adding it to the CAs/ folder of every node's certificate directory" : '';
        throw new SvcError('XSvcReplicationTargetUnreachable', `the remote bucket ${t.targetBucket} at ${t.secure ? 'https' : 'http'}://${t.endpoint} could not be used: ${why}${remedy}`);
      }
      if (versioning !== 'Enabled') throw new SvcError('XSvcReplicationTargetNotVersioned', `the remote bucket ${t.targetBucket} at ${t.endpoint} has versioning ${versioning === '' ? 'never enabled' : versioning}: enable it there first`);
    } finally {
      await client.close();
    }
  }

  async listTargets(bucket: string | undefined): Promise<unknown[]> {
    const buckets = bucket !== undefined ? [bucket] : (await this.#o.layer.listBuckets()).map((b) => b.name);
    const out: unknown[] = [];
    for (const b of buckets) for (const t of await this.#targets(b)) out.push(toWire(t, this.system.health(t.arn)));
    return out;
  }

  async removeTarget(bucket: string, arn: string): Promise<void> {
    const want = normaliseArn(arn);
    const current = await this.#targets(bucket);
    if (!current.some((t) => t.arn === want)) throw new SvcError('XSvcReplicationNoSuchTarget', `the bucket ${bucket} has no remote target ${arn}`);
    if (destinations(await this.system.config(bucket)).includes(want)) throw new SvcError('XSvcReplicationTargetInUse', `a replication rule of ${bucket} sends to ${arn}; remove the rule (svc replicate rm) first`);
    await this.#o.layer.setBucketConfig(bucket, 'replication-targets', encodeTargets({ targets: current.filter((t) => t.arn !== want) }));
    await this.system.reloadBucket(bucket);
    this.#o.logger.info({ event: 'replication_target_removed', bucket, target: want }, `remote target ${want} removed`);
  }

  // ---- status

  async status(bucket: string | undefined): Promise<BucketReplicationStatus[]> {
    const buckets = bucket !== undefined ? [bucket] : (await this.#o.layer.listBuckets()).map((b) => b.name);
    const out: BucketReplicationStatus[] = [];
    for (const b of buckets) {
      await this.#o.layer.getBucketInfo(b);
      const arns = (await this.#targets(b)).map((t) => t.arn);
      if (bucket === undefined && arns.length === 0) continue;
      for (const arn of arns) await this.system.runtime(b, arn);
      const resync: ResyncRecord[] = [];
      for (const arn of arns) {
        const r = await this.#resyncRecord(b, arn);
        if (r) resync.push(r);
      }
      out.push({ bucket: b, targets: this.system.status(b), resync });
    }
    return out;
  }

  // ---- resync

  async #resyncRecord(bucket: string, arn: string): Promise<ResyncRecord | undefined> {
    const live = this.#resyncs.get(arn);
    if (live) return live.task.progress();
    const raw = await this.#o.layer.sysRecords.read(resyncRecordPath(bucket, arn));
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as ResyncRecord) : undefined;
  }

  async #saveResync(r: ResyncRecord): Promise<void> {
    await this.#o.layer.sysRecords.write(resyncRecordPath(r.bucket, r.arn), Buffer.from(JSON.stringify(r)));
  }

  #runResync(record: ResyncRecord): void {
    const task = new ResyncTask(
      record,
      {
        listVersions: (b, opts) => this.#o.layer.listObjectVersions(b, opts),
        config: (b) => this.system.config(b),
        enqueue: (arn, e) => this.system.enqueue(arn, e),
        queued: (arn) => this.system.queued(arn),
        clock: this.#o.clock,
      },
      (r) => this.#saveResync(r),
    );
    const worker = new Worker(task, { clock: this.#o.clock, logger: this.#o.logger, persistEveryMs: 5_000 });
    this.#resyncs.set(record.arn, { task, worker });
    worker.start();
    void worker.done().then(() => {
      if (this.#resyncs.get(record.arn)?.worker === worker) this.#resyncs.delete(record.arn);
    });
  }

  /** The targets a resync call names: `arn`, or every target of the bucket. */
  async #resyncTargets(bucket: string, arn: string | undefined): Promise<string[]> {
    const cfg = await this.system.config(bucket);
    if (!cfg) throw new SvcError('XSvcReplicationResyncInvalid', `the bucket ${bucket} has no replication configuration`);
    const all = destinations(cfg);
    if (arn === undefined) return all;
    const want = normaliseArn(arn);
    if (!all.includes(want)) throw new SvcError('XSvcReplicationResyncInvalid', `no enabled replication rule of ${bucket} sends to ${arn}`);
    return [want];
  }

  async resyncStart(bucket: string, arn: string | undefined): Promise<ResyncRecord[]> {
    await this.#o.layer.getBucketInfo(bucket);
    const arns = await this.#resyncTargets(bucket, arn);
    const cfg = await this.system.config(bucket);
    if (!cfg?.rules.some((r) => r.status === 'Enabled' && r.existingObjects && arns.includes(r.destination))) {
      throw new SvcError('XSvcReplicationResyncInvalid', `no rule of ${bucket} has ExistingObjectReplication enabled for the target; add one (svc replicate add --replicate existing-objects)`);
    }
    const out: ResyncRecord[] = [];
    for (const a of arns) {
      const cur = await this.#resyncRecord(bucket, a);
      if (cur?.state === 'running') throw new SvcError('XSvcReplicationResyncInvalid', `a resync of ${bucket} to ${a} is already running on ${cur.node}; cancel it first`);
      const rec: ResyncRecord = { id: `${this.#o.clock.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, bucket, arn: a, state: 'running', node: this.#o.selfId, startedAt: this.#o.clock.now(), scanned: 0, queued: 0, queuedBytes: 0 };
      await this.#saveResync(rec);
      this.#runResync(rec);
      out.push(rec);
    }
    this.#o.logger.info({ event: 'replication_resync_started', bucket, targets: arns }, `replication resync of ${bucket} started`);
    return out;
  }

  async resyncStatus(bucket: string): Promise<ResyncRecord[]> {
    await this.#o.layer.getBucketInfo(bucket);
    const out: ResyncRecord[] = [];
    for (const t of await this.#targets(bucket)) {
      const r = await this.#resyncRecord(bucket, t.arn);
      if (r) out.push(r);
    }
    return out;
  }

  async resyncCancel(bucket: string, arn: string | undefined): Promise<ResyncRecord[]> {
    await this.#o.layer.getBucketInfo(bucket);
    const arns = arn === undefined ? (await this.#targets(bucket)).map((t) => t.arn) : [normaliseArn(arn)];
    const out: ResyncRecord[] = [];
    for (const a of arns) {
      const live = this.#resyncs.get(a);
      if (live) {
        live.task.record.state = 'canceled';
        await live.worker.stop();
        out.push(live.task.progress());
        continue;
      }
      const r = await this.#resyncRecord(bucket, a);
      if (r?.state === 'running') {
        // Running on another node (or one that stopped): the record says canceled; that node's worker stops at its next persist check.
        r.state = 'canceled';
        r.endedAt = this.#o.clock.now();
        await this.#saveResync(r);
        out.push(r);
      }
    }
    if (out.length === 0) throw new SvcError('XSvcReplicationResyncInvalid', `no resync of ${bucket} is running`);
    return out;
  }

  /** Resyncs this node was running when it stopped continue from their cursor. */
  async #resumeResyncs(): Promise<void> {
    for (const b of await this.#o.layer.listBuckets()) {
      for (const t of await this.#targets(b.name).catch((err: unknown) => (hasCode(err, 'NoSuchBucket') ? [] : Promise.reject(err)))) {
        const r = await this.#resyncRecord(b.name, t.arn);
        if (r?.state === 'running' && r.node === this.#o.selfId && !this.#resyncs.has(t.arn)) {
          this.#o.logger.info({ event: 'replication_resync_resumed', bucket: b.name, target: t.arn, scanned: r.scanned }, 'replication resync resumed');
          this.#runResync(r);
        }
      }
    }
  }

  /** The replication loops, every target's worker and the resyncs this node runs. */
  workers(): Worker<unknown>[] {
    return [...this.system.workers(), ...[...this.#resyncs.values()].map((r) => r.worker)];
  }

  async close(): Promise<void> {
    for (const r of this.#resyncs.values()) await r.worker.stop();
    this.#o.layer.setPostCommitHook(undefined, 'replication');
    await this.system.close();
  }
}

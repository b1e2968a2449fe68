/**
 * Resync: replicates the versions a bucket already holds to one of its
 * remote targets (versions written before a rule existed, or after a target
 * lost its data). A `WorkerTask` like decommission and rebalance: it walks
 * the bucket's versions in listing order, one page per step, and queues
 * every version and delete marker that a rule with
 * ExistingObjectReplication sends to the target and that is not COMPLETED
 * (nor a replica) into the target's replication queue, where the copy
 * workers take them. It pauses while that queue is long, persists its
 * cursor and counts (`.svc.sys` record `replication/resync/<bucket>/<id>.json`)
 * so a restarted node resumes where it was, and can be canceled.
 */
import type { ListVersionsOptions, ListVersionsResult } from '../object/types.ts';
import type { WorkerStatus, WorkerTask, WorkResult } from '../util/worker.ts';
import { sleepUnlessAborted } from '../util/worker.ts';
import type { Clock } from '../util/clock.ts';
import { type ReplicationConfig, selectRules } from '../replication/config.ts';
import type { CopyEntry } from './replication-system.ts';

export type ResyncState = 'running' | 'completed' | 'canceled' | 'failed';

export interface ResyncRecord {
  id: string;
  bucket: string;
  arn: string;
  state: ResyncState;
  /** The node running it (`host:port`). */
  node: string;
  startedAt: number;
  endedAt?: number;
  keyMarker?: string;
  versionIdMarker?: string;
  /** Versions and delete markers looked at. */
  scanned: number;
  /** Queued for copy. */
  queued: number;
  queuedBytes: number;
  lastError?: string;
}

export interface ResyncDeps {
  listVersions(bucket: string, opts: ListVersionsOptions): Promise<ListVersionsResult>;
  config(bucket: string): Promise<ReplicationConfig | undefined>;
  enqueue(arn: string, e: CopyEntry): Promise<boolean>;
  queued(arn: string): number;
  clock: Clock;
}

/** Queue length above which the walk waits for the copies to catch up. */
export const RESYNC_HIGH_WATER = 10_000;
const PAGE = 500;

export function resyncRecordPath(bucket: string, arn: string): string {
  return `replication/resync/${bucket}/${arn.split(':')[4] ?? 'target'}.json`;
}

export class ResyncTask implements WorkerTask<ResyncRecord> {
  readonly name: string;
  readonly record: ResyncRecord;
  readonly #d: ResyncDeps;
  readonly #save: (r: ResyncRecord) => Promise<void>;

  constructor(record: ResyncRecord, deps: ResyncDeps, save: (r: ResyncRecord) => Promise<void>) {
    this.name = `replication-resync:${record.bucket}`;
    this.record = record;
    this.#d = deps;
    this.#save = save;
  }

  async work(signal: AbortSignal): Promise<WorkResult> {
    const r = this.record;
    if (this.#d.queued(r.arn) > RESYNC_HIGH_WATER) return 'idle';
    const cfg = await this.#d.config(r.bucket);
    if (!cfg) throw new Error(`the bucket ${r.bucket} has no replication configuration any more`);
    const page = await this.#d.listVersions(r.bucket, { maxKeys: PAGE, ...(r.keyMarker !== undefined ? { keyMarker: r.keyMarker } : {}), ...(r.versionIdMarker !== undefined ? { versionIdMarker: r.versionIdMarker } : {}) });
    for (const v of page.versions) {
      if (signal.aborted) return 'busy';
      r.scanned++;
      if (v.replicationStatus === 'REPLICA' || v.replicationStatus === 'COMPLETED') continue;
      const rules = v.deleteMarker ? selectRules(cfg, { kind: 'delete-marker', key: v.name }).filter((x) => x.existingObjects) : selectRules(cfg, { kind: 'object', key: v.name, tags: v.tags, existing: true });
      const rule = rules.find((x) => x.destination === r.arn);
      if (!rule) continue;
      const e: CopyEntry = { op: v.deleteMarker ? 'delete-marker' : 'object', bucket: r.bucket, key: v.name, versionId: v.versionId, time: v.modTime.getTime(), size: v.deleteMarker ? 0 : v.size };
      if (rule.storageClass) e.storageClass = rule.storageClass;
      if (await this.#d.enqueue(r.arn, e)) {
        r.queued++;
        r.queuedBytes += e.size;
      }
    }
    if (!page.isTruncated) return 'done';
    if (page.nextKeyMarker !== undefined) r.keyMarker = page.nextKeyMarker;
    if (page.nextVersionIdMarker !== undefined) r.versionIdMarker = page.nextVersionIdMarker;
    else delete r.versionIdMarker;
    return 'busy';
  }

  async waitForWork(signal: AbortSignal): Promise<void> {
    await sleepUnlessAborted(this.#d.clock, 1_000, signal);
  }

  progress(): ResyncRecord {
    return { ...this.record };
  }

  async persist(status: WorkerStatus<ResyncRecord>): Promise<void> {
    const r = this.record;
    if (status.state === 'completed') r.state = 'completed';
    else if (status.state === 'failed') {
      r.state = 'failed';
      if (status.lastError !== undefined) r.lastError = status.lastError;
    }
    if (r.state !== 'running') r.endedAt ??= this.#d.clock.now();
    await this.#save(r);
  }
}

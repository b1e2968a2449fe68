/**
 * The seams between the admin API and what runs behind it. The admin router
 * (`api/admin/`) calls these typed services only; the composition root
 * (`server/admin-services.ts`) builds them over the object layer and the
 * cluster. Long-running work (decommission, rebalance, heal) sits behind the
 * worker ports at the bottom: a service validates a request completely (SPEC
 * Admin API rules 1-6, state tables), then hands it to its worker; status
 * routes always answer from the persisted records (`pool.bin`, `rebalance.bin`), so an idle cluster
 * shows idle records.
 *
 * Pool arguments arrive resolved to zero-based indices of the configured
 * pool list (the router's one parameter validator does that).
 */
import type {
  BgHealState,
  ClusterSnapshot,
  DecommissionStatusReport,
  HealOpts,
  MetricsHistoryReport,
  BackgroundJobsReport,
  PoolStatus,
  RebalanceStatus,
  ReplacementRecoveryStatus,
  RuntimeCapabilities,
  ServerInfoMessage,
} from './types.ts';
import type { BucketGovernanceReport, KmsStatusReport } from './governance-admin.ts';

export interface PoolAdmin {
  /** Every configured pool (`pools/list`). */
  list(): Promise<PoolStatus[]>;
  /** One pool (`pools/status`). */
  status(pool: number): Promise<PoolStatus>;
  /** Every pool or one (`decommission/status`); each entry carries `decommissionInfo`. */
  decommissionStatus(pool?: number): Promise<DecommissionStatusReport>;
  /** Validates the batch as a whole, then queues it (`pools/decommission`). */
  startDecommission(pools: readonly number[]): Promise<void>;
  cancelDecommission(pool: number): Promise<void>;
  /** Removes a failed or canceled entry; a pool without an entry is left as it is. */
  clearDecommission(pool: number): Promise<void>;
}

export interface RebalanceAdmin {
  status(): Promise<RebalanceStatus>;
  start(): Promise<{ id: string }>;
  /** Stops a running rebalance; with none running there is nothing to stop and nothing changes. */
  stop(): Promise<void>;
}

/** One call of the heal route, after rule 5's checks. */
export type HealCall =
  | { readonly kind: 'start'; readonly bucket: string; readonly prefix: string; readonly opts: HealOpts; readonly forceStart: boolean; readonly clientAddress: string }
  /** `bucket`/`prefix`: the path the status or stop was sent to ('' at the root: any sequence). */
  | { readonly kind: 'status'; readonly clientToken: string; readonly bucket: string; readonly prefix: string }
  | { readonly kind: 'stop'; readonly clientToken: string; readonly bucket: string; readonly prefix: string };

export interface HealAdmin {
  /** Start: `HealStartSuccess`; status: `HealTaskStatus`; stop: `HealStopSuccess`. */
  heal(call: HealCall): Promise<unknown>;
}

export interface BackgroundHealAdmin {
  status(): Promise<BgHealState>;
}

export interface ReplacementRecoveryAdmin {
  status(): Promise<ReplacementRecoveryStatus>;
}

export interface ClusterAdmin {
  snapshot(): Promise<ClusterSnapshot>;
  info(): Promise<ServerInfoMessage>;
  capabilities(): RuntimeCapabilities;
  /** Every node's measurements of the last `minutes`, added together. */
  history(minutes: number): Promise<MetricsHistoryReport>;
  /** Every node's background jobs, as its supervisor lists them. */
  jobs(): Promise<BackgroundJobsReport>;
}

/** Data governance settings (object lock, encryption, lifecycle) and the key store. */
export interface GovernanceAdmin {
  buckets(bucket?: string): Promise<BucketGovernanceReport>;
  kms(): KmsStatusReport;
}

/** madmin's `BucketQuota` as `get-bucket-quota` answers it, plus what counts against it now. */
export interface BucketQuotaReport {
  /** madmin's older name for `size`. */
  quota: number;
  size: number;
  rate: number;
  requests: number;
  quotatype: 'hard';
  bucket: string;
  /** Bytes counted against the quota on the answering node (scanner usage + writes in flight + writes not yet scanned). */
  usage: number;
}

/** Bucket quotas (`mc quota`, `svc admin bucket quota`). */
export interface QuotaAdmin {
  get(bucket: string): Promise<BucketQuotaReport>;
  /** Sets, or with `undefined` clears, a bucket's quota. */
  set(bucket: string, quota: { size: number } | undefined): Promise<void>;
}

export interface AdminServices {
  readonly pools: PoolAdmin;
  readonly rebalance: RebalanceAdmin;
  readonly heal: HealAdmin;
  readonly backgroundHeal: BackgroundHealAdmin;
  readonly replacement: ReplacementRecoveryAdmin;
  readonly cluster: ClusterAdmin;
  readonly governance: GovernanceAdmin;
  readonly quota: QuotaAdmin;
  readonly notify: NotifyAdmin;
  readonly replication: ReplicationAdmin;
}

/** Bucket replication (`docs/replication.md`): remote targets (madmin's routes), status, resync. */
export interface ReplicationAdmin {
  /** Adds (or with `update` changes) a remote target from madmin's `BucketTarget` (encrypted with the caller's secret key, or plain JSON); its ARN. */
  setTarget(bucket: string, body: Buffer, secretKey: string | undefined, update: boolean): Promise<string>;
  /** madmin `BucketTarget`s of one bucket or of every bucket (no secrets). */
  listTargets(bucket: string | undefined): Promise<unknown[]>;
  removeTarget(bucket: string, arn: string): Promise<void>;
  /** Per bucket: each target's queue, failures, lag, health, and resyncs. */
  status(bucket: string | undefined): Promise<unknown>;
  resyncStart(bucket: string, arn: string | undefined): Promise<unknown>;
  resyncStatus(bucket: string): Promise<unknown>;
  resyncCancel(bucket: string, arn: string | undefined): Promise<unknown>;
}

/** Bucket notification targets (`docs/notifications.md`): status, and targets set without a restart. */
export interface NotifyAdmin {
  targets(): Promise<NotifyTargetReport[]>;
  set(type: string, id: string, settings: Record<string, string>): Promise<void>;
  remove(type: string, id: string): Promise<void>;
}

/** One target as the admin API reports it (this node's queue and delivery). */
export interface NotifyTargetReport {
  arn: string;
  id: string;
  type: string;
  /** `env`: SVC_NOTIFY_* variables; `admin`: set through the admin API. */
  source: 'env' | 'admin';
  /** The last delivery or check reached the target. */
  online: boolean;
  /** Events waiting in this node's queue (ready, prepared and unsettled). */
  queued: number;
  queueDir: string;
  queueLimit: number;
  delivered: number;
  failedAttempts: number;
  lastError?: string;
  /** Unix ms. */
  lastErrorAt?: number;
  /** Unix ms. */
  lastDeliveredAt?: number;
}

// ---- worker ports (implemented by the data-movement and heal workers)

/**
 * The decommission worker. `start` receives a batch that passed every check
 * of `checkDecommissionStart`; it persists the `queued` entries in pool.bin
 * (re-checking under the record's lock) and drains one pool at a time.
 */
export interface DecommissionWorker {
  /** `stored`: object bytes per pool as the scanner counted them (the capacity check prefers them to the drives' used space). */
  start(pools: readonly number[], stored?: readonly (number | undefined)[]): Promise<void>;
  /** A `queued` or `active` entry → `canceled`. */
  cancel(pool: number): Promise<void>;
  /** The service removed a failed or canceled entry (`pools/clear`): the pool reopens on every node. */
  cleared?(pool: number): Promise<void>;
}

/** The rebalance worker: `start` after `checkRebalanceStart`; `stop` of a running rebalance. */
export interface RebalanceWorker {
  start(): Promise<{ id: string }>;
  stop(): Promise<void>;
}

/** The heal engine behind the heal route (token bookkeeping included). */
export interface HealWorker {
  heal(call: HealCall): Promise<unknown>;
}

/** Drives the background heal is rebuilding right now (endpoint strings); empty while none. */
export interface HealingDrives {
  healing(): ReadonlySet<string>;
}

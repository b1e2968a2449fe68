/**
 * The JSON the admin API answers with: the shapes of
 * `../shared/reference/admin-api-shapes.md` (what MinIO's mc/madmin and
 * RustFS tooling decode), plus svc's own fields where SPEC.md leaves the
 * body to us. Pure types; the services produce them, the HTTP edge
 * serialises them as they are.
 *
 * Wire conventions (one rule for every route):
 * - times are RFC 3339 strings in UTC; an unset time is
 *   `"0001-01-01T00:00:00Z"` (Go's zero time, which mc tests with IsZero);
 * - durations are integer nanoseconds (Go's time.Duration);
 * - byte counts are JSON numbers;
 * - objects clients dereference (`decommissionInfo`, `progress`) are always
 *   present, never null.
 */

import type { HistoryWindow } from '../../telemetry/history.ts';

/** An RFC 3339 time; `ZERO_TIME` when unset. */
export type Rfc3339 = string;
/** An integer number of nanoseconds. */
export type Nanos = number;

export const ZERO_TIME: Rfc3339 = '0001-01-01T00:00:00Z';

/** Unix ms → RFC 3339 (0 → the zero time). */
export function rfc3339(ms: number): Rfc3339 {
  return ms > 0 ? new Date(ms).toISOString() : ZERO_TIME;
}

/** Milliseconds → integer nanoseconds. */
export function nanos(ms: number): Nanos {
  return Math.max(0, Math.round(ms)) * 1_000_000;
}

// ---- pools and decommission (shapes §2.2)

/** RustFS `decommissionStatus`. */
export type DecommissionStatusName = 'none' | 'queued' | 'running' | 'complete' | 'failed' | 'canceled';
/** RustFS pool lifecycle `status`; `blocked`: a failed or canceled decommission not cleared yet (the pool takes no new writes). */
export type PoolLifecycle = 'active' | 'blocked' | 'decommissioning' | 'decommissioned' | 'rebalancing';
/** RustFS `rebalanceStatus`. */
export type PoolRebalanceName = 'none' | 'started' | 'stopping' | 'completed' | 'stopped' | 'failed';

export interface DecommissionInfo {
  startTime: Rfc3339;
  startSize: number;
  totalSize: number;
  currentSize: number;
  complete: boolean;
  failed: boolean;
  canceled: boolean;
  objectsDecommissioned: number;
  objectsDecommissionedFailed: number;
  bytesDecommissioned: number;
  bytesDecommissionedFailed: number;
  // RustFS extras
  queued: boolean;
  queuedBuckets: string[];
  decommissionedBuckets: string[];
  bucket: string;
  prefix: string;
  object: string;
  stage: DecommissionStatusName;
  waitingReason: 'queued' | null;
  // svc
  lastError: string | null;
  /** Seconds the drain has been moving data (to its end once terminal); 0 before it starts (madmin v4's `elapsedSeconds`). */
  elapsedSeconds: number;
}

/** madmin `PoolStatus` plus the RustFS and svc extras (top level). */
export interface PoolStatus {
  id: number;
  cmdline: string;
  lastUpdate: Rfc3339;
  decommissionInfo: DecommissionInfo;
  totalSize: number;
  currentSize: number;
  usedSize: number;
  /** Used fraction 0..1. */
  used: number;
  status: PoolLifecycle;
  decommissionStatus: DecommissionStatusName;
  rebalanceStatus: PoolRebalanceName;
  /** `host:port` of the node that leads the pool (owner of its first endpoint), or `local`. */
  leader: string;
  setCount: number;
  setDriveCount: number;
  standardParity: number;
  rrsParity: number;
  drives: number;
  drivesOnline: number;
}

export interface DecommissionStatusEntry {
  id: number;
  cmdline: string;
  status: DecommissionStatusName;
  poolStatus: PoolLifecycle;
  decommissionInfo: DecommissionInfo;
}

export interface DecommissionStatusReport {
  pools: DecommissionStatusEntry[];
}

// ---- rebalance (shapes §2.3)

/**
 * A pool's rebalance status in SPEC's words: `active` while it moves data,
 * `stopping` until a stop took effect, then `stopped`; `completed`, `failed`,
 * or `none` for a pool that never took part. (MinIO writes `Started`,
 * `Completed`…; madmin decodes any string.)
 */
export type RebalanceWireStatus = 'none' | 'active' | 'stopping' | 'stopped' | 'completed' | 'failed';

export interface RebalancePoolStatus {
  id: number;
  cmdline: string;
  status: RebalanceWireStatus;
  stopping: boolean;
  participating: boolean;
  used: number;
  lastError: string | null;
  cleanupWarnings: {
    count: number;
    lastMsg: string | null;
    lastBucket: string | null;
    lastObject: string | null;
    lastAt: Rfc3339;
    entries: { bucket: string; object: string; message: string; timestamp: Rfc3339 }[];
  };
  progress: {
    objects: number;
    versions: number;
    bytes: number;
    remainingBuckets: number;
    bucket: string;
    object: string;
    elapsed: Nanos;
    eta: Nanos;
  };
}

export interface RebalanceStatus {
  /** Empty when no rebalance was ever started. */
  id: string;
  /** svc summary: `idle`, `running`, `stopping`, `stopped`, `completed`, `failed`. */
  status: 'idle' | 'running' | 'stopping' | 'stopped' | 'completed' | 'failed';
  pools: RebalancePoolStatus[];
  stoppedAt: Rfc3339;
  stopPropagation: {
    lastAttemptAt: Rfc3339;
    failedPeers: string[];
    terminalReloadAttemptAt: Rfc3339;
    terminalReloadFailedPeers: string[];
    pendingTerminalReload: boolean;
  };
}

// ---- drives (madmin.Disk, the keys svc fills)

export type DriveState = 'ok' | 'offline' | 'unformatted' | 'corrupt' | 'faulty';

export interface AdminDisk {
  endpoint: string;
  rootDisk: boolean;
  path: string;
  healing: boolean;
  scanning: boolean;
  state: DriveState;
  uuid: string;
  totalspace: number;
  usedspace: number;
  availspace: number;
  pool_index: number;
  set_index: number;
  disk_index: number;
  local: boolean;
  /** Why the drive is not `ok`, or what its node saw go wrong with it lately (svc extension). */
  detail?: string;
  /** The drive's recent problems (`DiskInfo.issues`; svc extension): full, read-only, faulty, healing. */
  issues?: { kind: 'healing' | 'full' | 'read-only' | 'faulty'; detail: string; since: number }[];
}

// ---- heal (shapes §2.4, §2.5)

/** madmin `HealOpts`; `scanMode` 1 = normal, 2 = deep. */
export interface HealOpts {
  recursive: boolean;
  dryRun: boolean;
  remove: boolean;
  recreate: boolean;
  scanMode: 1 | 2;
  updateParity: boolean;
  /** Always false: admin heals take the namespace lock (SPEC rule 5). */
  nolock: false;
  pool?: number;
  set?: number;
}

export interface HealStartSuccess {
  clientToken: string;
  clientAddress: string;
  startTime: Rfc3339;
}

/** madmin `HealDriveInfo`. */
export interface HealDriveInfo {
  uuid: string;
  endpoint: string;
  state: 'ok' | 'offline' | 'corrupt' | 'missing';
}

/** madmin `HealResultItem` plus svc's `outcome`, `pool`, `set` and byte counts. */
export interface HealResultItem {
  resultId: number;
  type: 'metadata' | 'bucket' | 'bucket-metadata' | 'object';
  bucket: string;
  object: string;
  versionId: string;
  detail: string;
  parityBlocks: number;
  dataBlocks: number;
  diskCount: number;
  setCount: number;
  before: { drives: HealDriveInfo[] };
  after: { drives: HealDriveInfo[] };
  objectSize: number;
  /** svc: `ok`, `healed`, `would-heal`, `refused`, `dangling`, `removed`, `absent`, `failed`. */
  outcome: string;
  /** svc: pool and set of the object (-1 for buckets). */
  pool: number;
  set: number;
  bytesHealed: number;
}

/** svc: counters of a heal sequence so far. */
export interface HealProgress {
  objectsScanned: number;
  objectsHealed: number;
  objectsFailed: number;
  objectsRefused: number;
  objectsDangling: number;
  bucketsScanned: number;
  bytesHealed: number;
  currentBucket: string;
  currentObject: string;
  /** Items waiting for a status call (at most 1000; the heal pauses while full). */
  itemsQueued: number;
  elapsed: Nanos;
}

/**
 * `HealTaskStatus` as MinIO's server emits it (capitalised keys; madmin
 * decodes case-insensitively): the items since the previous status call.
 */
export interface HealTaskStatus {
  Summary: 'not started' | 'running' | 'stopped' | 'finished' | 'failed';
  /** Why it stopped or failed; empty otherwise. */
  Detail: string;
  StartTime: Rfc3339;
  Settings: HealOpts;
  Items: HealResultItem[] | null;
  /** svc */
  ClientToken: string;
  Path: string;
  Progress: HealProgress;
}

export interface BgHealSet {
  id: string;
  pool_index: number;
  set_index: number;
  heal_status: '' | 'Healing';
  heal_priority: '' | 'high';
  /** Objects in the set at the scanner's last scan of it (0 before the first). */
  total_objects: number;
  disks: AdminDisk[];
}

export interface BgHealState {
  offline_nodes: string[];
  /** Objects the scanners visited (every node, since each started). */
  ScannedItemsCount: number;
  HealDisks: string[];
  sets: BgHealSet[];
  mrf: Record<string, { bytes_healed: number; items_healed: number }>;
  sc_parity: { STANDARD: number; REDUCED_REDUNDANCY: number };
  // RustFS operational keys
  state: 'disabled' | 'idle' | 'active' | 'degraded';
  healQueueLength: number;
  healActiveTasks: number;
  // svc
  /** Tasks waiting for a retry (drives still offline, heal failed). */
  healRetryingTasks: number;
  itemsHealed: number;
  bytesHealed: number;
  /** Objects the background heal gave up on (the scanner finds them again). */
  itemsFailed: number;
  /** Read-repair entries dropped because the queue was full (the scanner finds them again). */
  mrfDropped: number;
  scanner: {
    cycles: number;
    cyclesByResult: { success: number; partial: number; error: number };
    lastCycleResult: '' | 'success' | 'partial' | 'error';
    lastCycleAt: Rfc3339;
    lastCycleDuration: Nanos;
    healsQueued: number;
  };
  /** Nodes that answered (their background heal and scanner are counted). */
  nodes: string[];
  /** Why `state` is what it is, for people. */
  detail: string;
}

/** SPEC "Drive replacement": one replaced drive's recovery. */
export interface ReplacementInstance {
  /** `<pool>-<set>-<slot>`. */
  id: string;
  endpoint: string;
  pool: number;
  set: number;
  slot: number;
  /** `pending` (detected, waiting for the set heal), `healing`, `completed`, `failed`. */
  state: 'pending' | 'healing' | 'completed' | 'failed';
  reason: string;
  detectedAt: Rfc3339;
  updatedAt: Rfc3339;
  /** When the rebuild finished (zero time while it runs). */
  finishedAt: Rfc3339;
  /** Client token of the set heal rebuilding it ('' while pending). */
  healer: string;
  /** Objects of the set the rebuild went through, and those it had to heal. */
  objectsScanned: number;
  objectsHealed: number;
  bytesHealed: number;
  lastError: string | null;
}

export interface ReplacementRecoveryStatus {
  /** `idle` (nothing to recover: no instance, or every one `completed`), `pending`, `healing`, `failed`. */
  state: 'idle' | 'pending' | 'healing' | 'failed';
  /** Whether this build rebuilds replaced drives by itself. */
  healerAvailable: boolean;
  checkedAt: Rfc3339;
  instances: ReplacementInstance[];
}

// ---- cluster snapshot (v4) and server info (v3/info)

export type SnapshotDriveState = 'online' | 'offline' | 'healing';

export interface SnapshotDrive {
  endpoint: string;
  node: string;
  local: boolean;
  state: SnapshotDriveState;
  /** Why a drive is not online (offline, unformatted replacement, corrupt format), or its recent problems. */
  detail: string | null;
  /** Problems the drive's node reports for it while online: full, read-only, faulty, healing (a recreated bucket folder). */
  issues?: { kind: 'healing' | 'full' | 'read-only' | 'faulty'; detail: string; since: number }[];
  uuid: string;
  /** `<node>#<device>` of the file system the drive is on (drives sharing one report its size each); absent when unknown. */
  filesystem?: string;
  /** The drive's format slot: its set and index in the set matrix of format.json. */
  slot: { pool: number; set: number; index: number };
  total: number;
  used: number;
  free: number;
}

export interface SnapshotSet {
  id: number;
  drives: SnapshotDrive[];
  drivesOnline: number;
  readQuorum: number;
  writeQuorum: number;
  /** Online drives ≥ read quorum. */
  readable: boolean;
  writable: boolean;
}

export interface SnapshotPool {
  id: number;
  cmdline: string;
  leader: string;
  setCount: number;
  setDriveCount: number;
  standardParity: number;
  rrsParity: number;
  /** From the pool records; `unknown` while they cannot be read (before format quorum). */
  status: PoolLifecycle | 'unknown';
  decommissionStatus: DecommissionStatusName | 'unknown';
  rebalanceStatus: PoolRebalanceName | 'unknown';
  rawTotal: number;
  rawUsed: number;
  rawFree: number;
  usableTotal: number;
  usableFree: number;
  sets: SnapshotSet[];
}

export interface SnapshotNode {
  id: string;
  state: 'online' | 'offline';
  /** The node that answered this request. */
  self: boolean;
  /** Pools this node leads (pool mutations run there). */
  leaderOfPools: number[];
  drives: number;
  /** The node's clock against the answering node's, as its internode calls show it (ms, + behind); null for itself or before a call. */
  clockSkewMs?: number | null;
}

export interface ClusterSnapshot {
  generatedAt: Rfc3339;
  deploymentId: string;
  node: string;
  readiness: { ready: boolean; status: string; degradedReasons: string[] };
  summary: {
    nodes: number;
    nodesOnline: number;
    pools: number;
    sets: number;
    drives: number;
    drivesOnline: number;
    drivesOffline: number;
    drivesHealing: number;
    rawTotal: number;
    rawUsed: number;
    rawFree: number;
    usableTotal: number;
    usableFree: number;
  };
  nodes: SnapshotNode[];
  pools: SnapshotPool[];
  runtimeCapabilitiesPath: string;
}

/** madmin `ServerProperties` (the keys svc fills). */
export interface ServerProperties {
  state: 'online' | 'offline';
  endpoint: string;
  scheme: string;
  /** Seconds since the process started. */
  uptime: number;
  version: string;
  commitID: string;
  network: Record<string, 'online' | 'offline'>;
  drives: AdminDisk[];
  poolNumber: number;
  poolNumbers: number[];
  mem_stats: { alloc: number; total_alloc: number; heap_alloc: number; rss: number };
  num_cpu: number;
  runtime_version: string;
}

/** madmin `InfoMessage` (the keys svc fills). */
export interface ServerInfoMessage {
  mode: 'online' | 'initializing';
  deploymentID: string;
  region: string;
  buckets: { count: number; error?: string };
  /** Counts from the scanner: 0 with `error` saying why while not measured. */
  objects: { count: number; error?: string };
  versions: { count: number; error?: string };
  /** madmin's key is `deletemarkers`. */
  deletemarkers: { count: number; error?: string };
  usage: { size: number; error?: string };
  /** svc: what the scanners accounted, per bucket and pool (absent until a cycle finished). */
  dataUsage?: {
    lastUpdate: Rfc3339;
    /** Bytes on the drives (shards and parity). */
    rawSize: number;
    buckets: { name: string; objects: number; versions: number; deleteMarkers: number; size: number }[];
    pools: { id: number; objects: number; versions: number; size: number; rawSize: number }[];
  };
  backend: {
    backendType: 'Erasure';
    onlineDisks: number;
    offlineDisks: number;
    standardSCParity: number;
    rrSCParity: number;
    totalSets: number[];
    totalDrivesPerSet: number[];
  };
  servers: ServerProperties[];
  /** madmin: pool index → set index → the set's usage and capacity (JSON object keys are the indices). */
  pools: Record<string, Record<string, ErasureSetInfo>>;
  /** svc: usable and raw capacity per pool. */
  poolCapacity: { id: number; cmdline: string; rawTotal: number; rawFree: number; usableTotal: number; usableFree: number; usableUsed: number }[];
}

/** madmin `ErasureSetInfo`: usage from the scanner's last scan of the set, capacity from its drives. */
export interface ErasureSetInfo {
  id: number;
  /** Bytes the set's versions take on its drives (shards and parity). */
  rawUsage: number;
  /** Total bytes of the set's drives. */
  rawCapacity: number;
  /** Object bytes of every version in the set. */
  usage: number;
  objectsCount: number;
  versionsCount: number;
  deleteMarkersCount: number;
  /** Drives of the set being rebuilt. */
  healDisks: number;
}

export interface RuntimeCapabilities {
  version: string;
  adminApi: { versions: string[]; prefixes: string[] };
  layout: { pools: number; nodes: number; ellipsis: boolean; singleDrive: boolean };
  decommission: { possible: boolean; implemented: boolean; reason: string | null };
  rebalance: { possible: boolean; implemented: boolean; reason: string | null };
  heal: { adminHeal: boolean; backgroundHeal: boolean; scanner: boolean; replacementDetection: boolean; replacementRecovery: boolean };
  telemetry: { otlpExport: boolean; signals: { metrics: boolean; traces: boolean; logs: boolean } };
  forwarding: { poolLeader: 'first-endpoint'; internodeRpc: boolean };
}

// ---- data governance (GET v3/bucket/governance; built in governance-admin.ts)

export interface BucketGovernance {
  name: string;
  versioning: 'Enabled' | 'Suspended' | 'Unversioned';
  objectLock: { enabled: boolean; defaultRetention?: { mode: 'GOVERNANCE' | 'COMPLIANCE'; days?: number; years?: number } };
  /** Default encryption of new versions; absent: none. */
  encryption?: { algorithm: 'AES256' | 'aws:kms'; kmsKeyId?: string };
  /** Lifecycle rules as configured (dates RFC 3339); absent: none. */
  lifecycle?: { rules: LifecycleRuleView[] };
}

export interface LifecycleRuleView {
  id: string;
  status: 'Enabled' | 'Disabled';
  filter: { prefix?: string; tags?: { key: string; value: string }[]; sizeGreaterThan?: number; sizeLessThan?: number };
  expiration?: { days?: number; date?: string; expiredObjectDeleteMarker?: boolean };
  noncurrentVersionExpiration?: { noncurrentDays: number; newerNoncurrentVersions?: number };
  abortIncompleteMultipartUpload?: { daysAfterInitiation: number };
}

export interface BucketGovernanceReport {
  buckets: BucketGovernance[];
}

/** `metrics/history`: every node's points added together (telemetry/history.ts), and which nodes answered. */
export interface MetricsHistoryReport extends HistoryWindow {
  nodes: { node: string; answered: boolean }[];
}

/** One background job as a node's supervisor reports it (`background/supervisor.ts`). */
export interface BackgroundJobReport {
  name: string;
  description: string;
  /** Jobs started before it and stopped after it. */
  after: string[];
  /** `not started`, or its workers' state (`running`, `idle`, `paused`, `stopping`, `stopped`, `completed`, `failed`). */
  state: string;
  /** Its workers now: name, state, steps, throttling, progress. */
  workers: { name: string; state: string; steps: number; startedAt?: number; lastError?: string; progress: unknown }[];
  lastError?: string;
}

/** `GET /svc/admin/v4/background/jobs`: every node's jobs; a node that did not answer is named with none. */
export interface BackgroundJobsReport {
  nodes: { node: string; answered: boolean; jobs: BackgroundJobReport[] }[];
}

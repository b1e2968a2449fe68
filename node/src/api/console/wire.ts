/**
 * The console API's JSON (`/svc/console/api/...`), shared by the server and
 * the browser code (`node/console-ui/`, which imports these types only, so
 * nothing here reaches the browser at run time). Pure types.
 *
 * Wire conventions: times are RFC 3339 strings in UTC (the page shows them in
 * the user's zone), sizes are bytes, durations seconds, fractions 0..1.
 * Errors are `{code, message, action}` (`ConsoleErrorBody`).
 */
import type {
  BackgroundJobsReport,
  BgHealState,
  DecommissionInfo,
  PoolStatus,
  RebalanceStatus,
  ReplacementRecoveryStatus,
  RuntimeCapabilities,
  SnapshotPool,
} from '../../object/admin/types.ts';

export type { ConsoleErrorBody } from './console-errors.ts';
/** `GET buckets/:bucket/governance`: object lock, default encryption and lifecycle rules, as the admin API gives them. */
export type { BucketGovernance, LifecycleRuleView } from '../../object/admin/types.ts';

// ---- session

export interface SessionInfo {
  readonly accessKey: string;
  /** Sent back as `x-csrf-token` on every call that changes something. */
  readonly csrfToken: string;
  /** When the session ends at the latest (sign-in + 12 h). */
  readonly expiresAt: string;
  /** Idle time after which the session ends. */
  readonly idleTimeoutSeconds: number;
  /** The user may read the cluster (admin:ServerInfo); false for plain S3 users. */
  readonly admin: boolean;
  /** Actions (`s3:DeleteObject`, `admin:CreateUser`, ...) the identity's policies allow on any bucket; pages hide or disable the rest. */
  readonly permissions: Readonly<Record<string, boolean>>;
  readonly version: string;
}

/** Keys, or (with an LDAP server configured) an LDAP user name and password. */
export type SignInRequest = { readonly accessKey: string; readonly secretKey: string } | { readonly ldapUsername: string; readonly ldapPassword: string };

/** `GET api/sso`, asked before signing in: the other ways to sign in this node offers. */
export interface SignInOptions {
  /** An OpenID provider is configured: "Sign in with SSO". */
  readonly enabled: boolean;
  /** Its display name. */
  readonly name?: string;
  /** An LDAP server is configured: LDAP user name and password. */
  readonly ldap: boolean;
}

// ---- cluster

/** `healthy`: everything online; `degraded`: serving with drives or nodes missing; `not-ready`: readiness lost. */
export type HealthState = 'healthy' | 'degraded' | 'not-ready';

export interface NodeHealth {
  readonly state: HealthState;
  /** One line for people. */
  readonly summary: string;
  /** Each thing that is wrong, most serious first. */
  readonly problems: readonly string[];
}

export interface ReadinessView {
  readonly ready: boolean;
  readonly status: string;
  /** The start-up stage blocking readiness. */
  readonly pending: string | null;
  readonly degradedReasons: readonly { readonly reason: string; readonly meaning: string }[];
  readonly details: Readonly<Record<string, { readonly status: string; readonly ready: boolean; readonly detail?: string }>>;
}

export type AlertState = 'ok' | 'pending' | 'firing' | 'unavailable';

/** One of SPEC.md's suggested alert conditions, evaluated for this console. */
export interface AlertView {
  readonly id: 'readiness' | 'restarts' | 'heal-queue' | 'scanner' | 'capacity' | 'certificates' | 'clock-skew';
  readonly title: string;
  /** The condition as SPEC.md suggests it. */
  readonly rule: string;
  readonly state: AlertState;
  /** What was measured, and why the state is what it is. */
  readonly detail: string;
  /** What to do while it fires. */
  readonly action: string;
}

export interface NodeView {
  readonly id: string;
  readonly state: 'online' | 'offline';
  readonly self: boolean;
  readonly leaderOfPools: readonly number[];
  readonly drives: number;
  readonly drivesOffline: number;
  readonly uptimeSeconds: number | null;
  readonly version: string | null;
}

export interface CapacityView {
  readonly rawTotal: number;
  readonly rawUsed: number;
  readonly rawFree: number;
  readonly usableTotal: number;
  readonly usableFree: number;
  readonly usableUsed: number;
  /** Raw used fraction above which the capacity alert fires. */
  readonly alertFraction: number;
  readonly pools: readonly { readonly id: number; readonly cmdline: string; readonly usableTotal: number; readonly usableFree: number; readonly usableUsed: number }[];
  /** Raw capacity with each file system counted once (drives that share one are counted once together). */
  readonly rawTotalDistinct: number;
  /** File systems that hold more than one drive: raw capacity counts them once per drive. */
  readonly sharedFilesystems: readonly { readonly node: string; readonly drives: readonly string[]; readonly total: number }[];
}

export interface OverviewResponse {
  readonly generatedAt: string;
  readonly node: string;
  readonly deploymentId: string;
  readonly version: string;
  readonly health: NodeHealth;
  readonly readiness: ReadinessView;
  readonly nodes: readonly NodeView[];
  readonly drives: { readonly total: number; readonly online: number; readonly offline: number; readonly healing: number };
  readonly capacity: CapacityView;
  readonly alerts: readonly AlertView[];
  readonly capabilities: RuntimeCapabilities;
  /** This node's bucket notification targets (`docs/notifications.md`); undefined when the admin API could not say. */
  readonly notifications?: readonly NotifyTargetView[];
}

/** One bucket notification target as the overview shows it. */
export interface NotifyTargetView {
  readonly arn: string;
  readonly online: boolean;
  readonly queued: number;
  readonly queueLimit: number;
  readonly delivered: number;
  readonly lastError?: string;
}

/** A drain's progress, measured from its record. */
export interface DrainProgress {
  /** Bytes the drain has to move (used when it started). */
  readonly totalBytes: number;
  readonly movedBytes: number;
  /** 0..1 */
  readonly fraction: number;
  readonly bytesPerSecond: number | null;
  readonly objectsPerSecond: number | null;
  /** Seconds left at the average rate; null when unknown or not running. */
  readonly etaSeconds: number | null;
  readonly elapsedSeconds: number;
}

export interface PoolView {
  /** Layout, state and every drive (cluster snapshot). */
  readonly layout: SnapshotPool;
  /** Usage and decommission record (`pools/list`); null when the records cannot be read yet. */
  readonly status: PoolStatus | null;
  readonly drain: DrainProgress | null;
  /** What the console offers for this pool now. */
  readonly actions: { readonly decommission: boolean; readonly cancel: boolean; readonly clear: boolean };
  /** Object bytes and counts the scanner last counted on this pool; null before its first cycle. */
  readonly stored: { readonly objects: number; readonly versions: number; readonly size: number; readonly countedAt: number } | null;
}

export interface PoolsResponse {
  readonly generatedAt: string;
  readonly pools: readonly PoolView[];
  /** Why the pool records could not be read (node not ready), else null. */
  readonly recordsError: string | null;
  readonly rebalance: RebalanceStatus | null;
  /** `reason`: why a rebalance cannot be started now (null when it can, or when one runs). */
  readonly rebalanceActions: { readonly start: boolean; readonly stop: boolean; readonly reason: string | null };
  readonly capabilities: RuntimeCapabilities;
}

export type { DecommissionInfo };

/** The scanner as background-heal status reports it, once the build has one. */
export interface ScannerView {
  readonly cycles: number;
  readonly cyclesByResult?: { readonly success: number; readonly partial: number; readonly error: number };
  readonly lastCycleResult: string;
  readonly lastCycleAt: string;
  /** Nanoseconds. */
  readonly lastCycleDuration: number;
  readonly healsQueued?: number;
}

export type BackgroundHealView = BgHealState & {
  readonly scanner?: ScannerView;
  readonly itemsHealed?: number;
  readonly bytesHealed?: number;
  readonly itemsFailed?: number;
  readonly healRetryingTasks?: number;
};

export interface HealingResponse {
  readonly generatedAt: string;
  readonly background: BackgroundHealView | null;
  readonly backgroundError: string | null;
  readonly replacement: ReplacementRecoveryStatus | null;
  readonly replacementError: string | null;
  readonly capabilities: RuntimeCapabilities;
  /** Pools and set counts, for a set heal. */
  readonly layout: readonly { readonly pool: number; readonly sets: number }[];
  /** Every node's background jobs as its supervisor lists them (`background/jobs`). */
  readonly jobs: BackgroundJobsReport | null;
  readonly jobsError: string | null;
}

export interface HealStartRequest {
  readonly bucket: string;
  readonly prefix: string;
  readonly recursive: boolean;
  readonly dryRun: boolean;
  readonly remove: boolean;
  readonly recreate: boolean;
  readonly deep: boolean;
  /** A set heal: both given. */
  readonly pool?: number;
  readonly set?: number;
}

/** A heal sequence as the admin API reports it (HealStartSuccess / HealTaskStatus), passed through. */
export interface HealCallResult {
  readonly clientToken: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly result: unknown;
}

// ---- buckets and objects

export interface BucketEntry {
  readonly name: string;
  readonly created: string;
}

export interface BucketDetails {
  readonly name: string;
  readonly versioning: 'Enabled' | 'Suspended' | 'Unversioned';
}

/** A bucket's replication as the bucket page shows it: each remote target's queue on the node asked (`docs/replication.md`). */
export interface BucketReplicationView {
  readonly bucket: string;
  readonly targets: readonly ReplicationTargetView[];
  readonly resync: readonly { readonly arn: string; readonly state: string; readonly scanned: number; readonly queued: number }[];
}

export interface ReplicationTargetView {
  readonly arn: string;
  readonly endpoint: string;
  readonly secure: boolean;
  readonly targetBucket: string;
  readonly online: boolean;
  readonly queued: { readonly count: number; readonly bytes: number };
  readonly failed: { readonly count: number; readonly bytes: number };
  readonly completed: { readonly count: number; readonly bytes: number };
  /** Age of the oldest change still waiting (0: nothing waits). */
  readonly lagMs: number;
  readonly lastError?: string;
}

/** A bucket's hard quota (`size` null: none) and the bytes counted against it (null without a quota). */
export interface BucketQuotaView {
  readonly bucket: string;
  readonly size: number | null;
  readonly usage: number | null;
}

export interface ObjectEntry {
  readonly key: string;
  readonly size: number;
  readonly lastModified: string;
  readonly etag: string;
  readonly storageClass: string;
}

export interface ObjectListing {
  readonly bucket: string;
  readonly prefix: string;
  /** Folders directly under `prefix` (each ends with `/`). */
  readonly prefixes: readonly string[];
  readonly objects: readonly ObjectEntry[];
  readonly truncated: boolean;
  /** Pass back as `token` for the next page. */
  readonly nextToken: string;
}

export interface ObjectVersion {
  readonly key: string;
  readonly versionId: string;
  readonly isLatest: boolean;
  readonly lastModified: string;
  readonly deleteMarker: boolean;
  readonly size: number;
  readonly etag: string;
}

/** A page of versions; pass the markers back (`keyMarker`, `versionIdMarker`) for the next one. */
interface VersionPage {
  readonly bucket: string;
  readonly versions: readonly ObjectVersion[];
  readonly truncated: boolean;
  readonly nextKeyMarker: string;
  readonly nextVersionIdMarker: string;
}

/** `GET buckets/:b/versions?key`: the versions of one key. */
export interface VersionListing extends VersionPage {
  readonly key: string;
}

export interface ObjectDetails {
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  readonly contentType: string;
  readonly etag: string;
  readonly lastModified: string;
  readonly versionId: string;
  readonly storageClass: string;
  readonly cacheControl: string;
  readonly contentDisposition: string;
  readonly contentEncoding: string;
  /** User metadata (`x-amz-meta-*`), names without the prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Stored checksums by algorithm (`crc32`, `sha256`, …). */
  readonly checksums: Readonly<Record<string, string>>;
  /** Object lock retention of this version (null: none). */
  readonly retention: { readonly mode: 'GOVERNANCE' | 'COMPLIANCE'; readonly until: string } | null;
  /** A legal hold keeps this version until it is removed. */
  readonly legalHold: boolean;
}

/** `GET buckets/:b/all-versions?prefix`: every version and delete marker at one folder level, a page at a time. */
export interface VersionsPage extends VersionPage {
  readonly prefix: string;
  readonly prefixes: readonly string[];
}

/** `GET buckets/:b/object-lock`: object lock on or off, and the default retention new versions get. */
export interface ObjectLockView {
  readonly enabled: boolean;
  readonly rule: { readonly mode: 'GOVERNANCE' | 'COMPLIANCE'; readonly days?: number; readonly years?: number } | null;
}

export interface ShareRequest {
  readonly key: string;
  readonly versionId?: string;
  readonly expiresSeconds: number;
}

/** `POST buckets/:bucket/zip`: a one-time ticket for `GET buckets/:bucket/zip/:ticket`, and what the archive holds. */
export interface ZipTicket {
  readonly ticket: string;
  /** The archive's file name. */
  readonly name: string;
  readonly objects: number;
  /** For a folder: the bytes of the objects listed under it. */
  readonly bytes?: number;
}

export interface ShareLink {
  readonly url: string;
  readonly expiresAt: string;
  /** The S3 origin the link was signed for. */
  readonly endpoint: string;
  /** The access key that signed it: the link works only while that key does. */
  readonly accessKey: string;
  /** That key is the root credential. */
  readonly root: boolean;
}

export interface UploadResult {
  readonly etag: string;
  readonly versionId: string;
}

/** `POST buckets/:b/delete-objects`: up to 1000 keys or versions at once. */
export interface BulkDeleteResult {
  readonly deleted: readonly { readonly key: string; readonly versionId: string; readonly deleteMarker: boolean }[];
  readonly errors: readonly { readonly key: string; readonly versionId: string; readonly code: string; readonly message: string }[];
}

/** `GET|PUT buckets/:b/settings/:kind`: lifecycle, cors, tagging, encryption, object-lock (AWS-CLI-shaped JSON) or policy (its JSON text); null when unset. */
export interface BucketSetting {
  readonly kind: 'lifecycle' | 'cors' | 'tagging' | 'encryption' | 'object-lock' | 'policy';
  readonly value: unknown;
}

export interface ObjectTag {
  readonly key: string;
  readonly value: string;
}

/** `GET bucket-usage`: objects and bytes per bucket as the scanner last counted them (admin identities; `lastUpdate` '' before its first cycle). */
export interface BucketUsageView {
  readonly lastUpdate: string;
  readonly buckets: Readonly<Record<string, { readonly objects: number; readonly versions: number; readonly deleteMarkers: number; readonly size: number }>>;
}

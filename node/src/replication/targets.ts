/**
 * Remote targets of a bucket, pure: where a bucket replicates to (endpoint,
 * TLS, credential, remote bucket, region, bandwidth limit, health check
 * period), in the shape madmin-go's `BucketTarget` has on the wire
 * (`mc admin bucket remote add`, `mc replicate add` send it to
 * `set-remote-target`), and the form svc stores in the bucket's record
 * (`replication-targets` configuration).
 *
 * A target's ARN is `arn:svc:replication::<id>:<remote bucket>` (MinIO writes
 * `arn:minio:replication:…`; both are accepted where an ARN is read).
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../util/errors.ts';

export interface RemoteTarget {
  arn: string;
  sourceBucket: string;
  /** `host:port` (no scheme). */
  endpoint: string;
  /** https. */
  secure: boolean;
  targetBucket: string;
  accessKey: string;
  secretKey: string;
  region: string;
  /** Bytes per second the copies may send; 0 = no limit. */
  bandwidthLimit: number;
  /** Seconds between health checks. */
  healthCheckSeconds: number;
  /** Storage class replicas are written with (a rule's storage class wins). */
  storageClass?: string;
  /** Node id of the node that added it, for the record. */
  created: number;
}

/** madmin-go's `BucketTarget` JSON (what `list-remote-targets` answers; the secret is never sent back). */
export interface BucketTargetWire {
  sourcebucket: string;
  endpoint: string;
  credentials: { accessKey: string; secretKey?: string; sessionToken?: string; expiration?: string } | null;
  targetbucket: string;
  secure: boolean;
  path?: string;
  api?: string;
  arn?: string;
  type: string;
  region?: string;
  bandwidthlimit?: number;
  replicationSync: boolean;
  storageclass?: string;
  healthCheckDuration?: number;
  disableProxy: boolean;
  totalDowntime: number;
  lastOnline: string;
  isOnline: boolean;
  latency: { curr: number; avg: number; max: number };
  deploymentID?: string;
}

export const DEFAULT_HEALTH_CHECK_SECONDS = 5;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function newTargetArn(targetBucket: string): string {
  return `arn:svc:replication::${randomBytes(8).toString('hex')}:${targetBucket}`;
}

function num(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new SvcError('XSvcReplicationTargetInvalid', `${what} must be a non-negative number`);
  return v;
}

/**
 * Checks a `BucketTarget` body (decrypted) and turns it into a stored
 * target for `bucket`. `existing`: the target this one updates (`update=true`),
 * keeping its ARN.
 */
export function parseBucketTarget(body: unknown, bucket: string, existing?: RemoteTarget): Omit<RemoteTarget, 'arn' | 'created'> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new SvcError('XSvcReplicationTargetInvalid', 'the body must be a BucketTarget JSON object');
  const b = body as Record<string, unknown>;
  const type = b.type ?? 'replication';
  if (type !== 'replication') throw new SvcError('XSvcReplicationTargetInvalid', `unknown target type ${String(type)}: only replication targets exist`);
  if (b.sourcebucket !== undefined && b.sourcebucket !== '' && b.sourcebucket !== bucket) {
    throw new SvcError('XSvcReplicationTargetInvalid', `sourcebucket ${String(b.sourcebucket)} differs from the bucket parameter ${bucket}`);
  }
  const endpoint = typeof b.endpoint === 'string' ? b.endpoint.trim() : '';
  if (!HOST_PORT.test(endpoint)) throw new SvcError('XSvcReplicationTargetInvalid', `endpoint must be host:port without a scheme, got "${endpoint}"`);
  const targetBucket = typeof b.targetbucket === 'string' ? b.targetbucket : '';
  if (!BUCKET.test(targetBucket)) throw new SvcError('XSvcReplicationTargetInvalid', `targetbucket "${targetBucket}" is not a valid bucket name`);
  const creds = b.credentials as Record<string, unknown> | null | undefined;
  const accessKey = typeof creds?.accessKey === 'string' ? creds.accessKey : '';
  let secretKey = typeof creds?.secretKey === 'string' ? creds.secretKey : '';
  if (secretKey === '' && existing && existing.accessKey === accessKey) secretKey = existing.secretKey;
  if (accessKey === '' || secretKey === '') throw new SvcError('XSvcReplicationTargetInvalid', 'credentials.accessKey and credentials.secretKey are required');
  if (b.replicationSync === true) throw new SvcError('XSvcReplicationTargetInvalid', 'synchronous replication is not offered: svc replicates asynchronously, after the write is durable');
  if (typeof b.path === 'string' && b.path !== '' && b.path !== 'auto' && b.path !== 'on') throw new SvcError('XSvcReplicationTargetInvalid', 'path must be auto or on: svc addresses remote buckets path-style');
  const healthNs = num(b.healthCheckDuration, 'healthCheckDuration');
  const t: Omit<RemoteTarget, 'arn' | 'created'> = {
    sourceBucket: bucket,
    endpoint,
    secure: b.secure === true,
    targetBucket,
    accessKey,
    secretKey,
    region: typeof b.region === 'string' && b.region !== '' ? b.region : 'us-east-1',
    bandwidthLimit: num(b.bandwidthlimit, 'bandwidthlimit'),
    healthCheckSeconds: healthNs > 0 ? Math.max(1, Math.round(healthNs / 1e9)) : DEFAULT_HEALTH_CHECK_SECONDS,
  };
  if (typeof b.storageclass === 'string' && b.storageclass !== '') t.storageClass = b.storageclass;
  return t;
}

export interface TargetHealth {
  online: boolean;
  lastOnline?: number;
  /** Milliseconds offline in total since this node started watching. */
  downtimeMs: number;
  latency: { curr: number; avg: number; max: number };
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The wire form of a stored target (no secret). */
export function toWire(t: RemoteTarget, h: TargetHealth | undefined): BucketTargetWire {
  const w: BucketTargetWire = {
    sourcebucket: t.sourceBucket,
    endpoint: t.endpoint,
    credentials: { accessKey: t.accessKey },
    targetbucket: t.targetBucket,
    secure: t.secure,
    path: 'on',
    api: 's3v4',
    arn: t.arn,
    type: 'replication',
    region: t.region,
    replicationSync: false,
    healthCheckDuration: t.healthCheckSeconds * 1e9,
    disableProxy: true,
    totalDowntime: Math.round((h?.downtimeMs ?? 0) * 1e6),
    lastOnline: h?.lastOnline !== undefined ? new Date(h.lastOnline).toISOString() : ZERO_TIME,
    isOnline: h?.online ?? false,
    latency: { curr: Math.round((h?.latency.curr ?? 0) * 1e6), avg: Math.round((h?.latency.avg ?? 0) * 1e6), max: Math.round((h?.latency.max ?? 0) * 1e6) },
  };
  if (t.bandwidthLimit > 0) w.bandwidthlimit = t.bandwidthLimit;
  if (t.storageClass) w.storageclass = t.storageClass;
  return w;
}

export interface StoredTargets {
  targets: RemoteTarget[];
}

export function encodeTargets(s: StoredTargets): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, targets: s.targets }));
}

export function decodeTargets(raw: Uint8Array | undefined): StoredTargets {
  if (raw === undefined) return { targets: [] };
  const doc = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')) as Partial<StoredTargets>;
  return { targets: Array.isArray(doc.targets) ? doc.targets : [] };
}

/** Normalises an ARN written in MinIO's partition to svc's. */
export function normaliseArn(arn: string): string {
  return arn.replace(/^arn:minio:replication:/, 'arn:svc:replication:');
}

/** `http(s)://ACCESS:SECRET@HOST:PORT/BUCKET` (the `--remote-bucket` of `svc replicate add`, as `mc replicate add` takes it). */
export function parseRemoteUrl(url: string): { secure: boolean; endpoint: string; accessKey: string; secretKey: string; bucket: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SvcError('XSvcReplicationTargetInvalid', `--remote-bucket must be http(s)://ACCESS:SECRET@HOST:PORT/BUCKET, got ${url.replace(/:\/\/([^:@/]*):[^@/]*@/, '://$1:*****@')}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SvcError('XSvcReplicationTargetInvalid', 'the remote URL must start with http:// or https://');
  const bucket = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, ''));
  if (!BUCKET.test(bucket)) throw new SvcError('XSvcReplicationTargetInvalid', `the remote URL must end with a bucket name, got "${bucket}"`);
  const accessKey = decodeURIComponent(u.username);
  const secretKey = decodeURIComponent(u.password);
  if (accessKey === '' || secretKey === '') throw new SvcError('XSvcReplicationTargetInvalid', 'the remote URL must carry ACCESS:SECRET@');
  return { secure: u.protocol === 'https:', endpoint: u.host, accessKey, secretKey, bucket };
}

/**
 * Data governance for the admin API (`GET /svc/admin/v3/bucket/governance`,
 * `GET /svc/admin/v3/kms/status`), read by `svc bucket info`, `svc admin
 * kms` and the console: per bucket its versioning, object lock (and default
 * retention), default encryption and lifecycle rules; and the key store's
 * state. Wire types: times RFC 3339, as the rest of the admin API.
 */
import type { KmsStatus } from '../../crypto/kms.ts';
import { hasCode } from '../../util/errors.ts';
import { decodeLifecycle, type LifecycleRule } from '../lifecycle/rules.ts';
import { decodeLockConfig } from '../object-lock.ts';
import { decodeBucketEncryption } from '../sse.ts';
import type { BucketMetadata } from '../types.ts';
import type { BucketGovernance, BucketGovernanceReport, LifecycleRuleView } from './types.ts';

export type { BucketGovernance, BucketGovernanceReport, LifecycleRuleView } from './types.ts';

export interface KmsStatusReport {
  configured: boolean;
  ready?: boolean;
  source?: 'env' | 'file';
  file?: string;
  defaultKeyId?: string;
  keyIds?: string[];
  loadedAt?: string;
  lastError?: string;
}

/** What this needs of the object layer. */
export interface GovernanceSource {
  listBuckets(): Promise<{ name: string }[]>;
  getBucketInfo(bucket: string): Promise<BucketMetadata>;
  getBucketConfig(bucket: string, kind: 'object-lock' | 'encryption' | 'lifecycle'): Promise<Uint8Array | undefined>;
}

function ruleView(r: LifecycleRule): LifecycleRuleView {
  const f = r.filter;
  const out: LifecycleRuleView = {
    id: r.id,
    status: r.enabled ? 'Enabled' : 'Disabled',
    filter: {
      ...(f.prefix !== undefined ? { prefix: f.prefix } : {}),
      ...(f.tags?.length ? { tags: f.tags.map(([key, value]) => ({ key, value })) } : {}),
      ...(f.sizeGreaterThan !== undefined ? { sizeGreaterThan: f.sizeGreaterThan } : {}),
      ...(f.sizeLessThan !== undefined ? { sizeLessThan: f.sizeLessThan } : {}),
    },
  };
  const e = r.expiration;
  if (e) {
    out.expiration = {
      ...(e.days !== undefined ? { days: e.days } : {}),
      ...(e.date !== undefined ? { date: new Date(e.date).toISOString().replace('.000Z', 'Z') } : {}),
      ...(e.expiredObjectDeleteMarker !== undefined ? { expiredObjectDeleteMarker: e.expiredObjectDeleteMarker } : {}),
    };
  }
  if (r.noncurrentExpiration) {
    out.noncurrentVersionExpiration = {
      noncurrentDays: r.noncurrentExpiration.days,
      ...(r.noncurrentExpiration.newerNoncurrentVersions !== undefined ? { newerNoncurrentVersions: r.noncurrentExpiration.newerNoncurrentVersions } : {}),
    };
  }
  if (r.abortIncompleteMultipartUpload) out.abortIncompleteMultipartUpload = { daysAfterInitiation: r.abortIncompleteMultipartUpload.days };
  return out;
}

/** One bucket's governance settings. */
export async function bucketGovernance(src: GovernanceSource, bucket: string): Promise<BucketGovernance> {
  const [info, lock, enc, lc] = await Promise.all([
    src.getBucketInfo(bucket),
    src.getBucketConfig(bucket, 'object-lock'),
    src.getBucketConfig(bucket, 'encryption'),
    src.getBucketConfig(bucket, 'lifecycle'),
  ]);
  const l = decodeLockConfig(lock);
  const e = decodeBucketEncryption(enc);
  const c = decodeLifecycle(lc);
  return {
    name: bucket,
    versioning: info.versioning,
    objectLock: { enabled: l !== undefined, ...(l?.rule ? { defaultRetention: { ...l.rule } } : {}) },
    ...(e ? { encryption: { algorithm: e.algorithm, ...(e.kmsKeyId !== undefined ? { kmsKeyId: e.kmsKeyId } : {}) } } : {}),
    ...(c ? { lifecycle: { rules: c.rules.map(ruleView) } } : {}),
  };
}

/** Every bucket's settings (or the one named). A bucket removed while listing is left out. */
export async function governanceReport(src: GovernanceSource, bucket?: string): Promise<BucketGovernanceReport> {
  if (bucket !== undefined) return { buckets: [await bucketGovernance(src, bucket)] };
  const out: BucketGovernance[] = [];
  for (const b of await src.listBuckets()) {
    try {
      out.push(await bucketGovernance(src, b.name));
    } catch (err) {
      if (!hasCode(err, 'NoSuchBucket')) throw err;
    }
  }
  return { buckets: out };
}

/** The key store's state (no key material, only ids). */
export function kmsReport(s: KmsStatus | undefined): KmsStatusReport {
  if (!s) return { configured: false };
  return {
    configured: true,
    ready: s.ready,
    source: s.source,
    ...(s.file !== undefined ? { file: s.file } : {}),
    ...(s.defaultKeyId !== undefined ? { defaultKeyId: s.defaultKeyId } : {}),
    keyIds: [...s.keyIds],
    ...(s.loadedAt !== undefined ? { loadedAt: new Date(s.loadedAt).toISOString() } : {}),
    ...(s.lastError !== undefined ? { lastError: s.lastError } : {}),
  };
}

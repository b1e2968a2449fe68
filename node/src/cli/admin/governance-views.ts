/**
 * What `svc bucket info` and `svc admin kms` print: per bucket its
 * versioning, object lock, default encryption and lifecycle rules in a few
 * readable lines; the key store's state. Pure.
 */
import type { BucketGovernance, BucketGovernanceReport, KmsStatusReport, LifecycleRuleView } from '../../object/admin/governance-admin.ts';
import { formatBytes, formatTime, keyValues, table } from './format.ts';

function lockText(b: BucketGovernance): string {
  if (!b.objectLock.enabled) return 'off';
  const r = b.objectLock.defaultRetention;
  if (!r) return 'on (no default retention)';
  return `on, default ${r.mode} ${r.days !== undefined ? `${r.days} day(s)` : `${r.years} year(s)`}`;
}

function encryptionText(b: BucketGovernance): string {
  const e = b.encryption;
  if (!e) return 'none';
  return e.algorithm === 'AES256' ? 'SSE-S3 (AES256)' : `SSE-KMS, key ${e.kmsKeyId ?? '(default)'}`;
}

function filterText(f: LifecycleRuleView['filter']): string {
  const parts: string[] = [];
  if (f.prefix !== undefined) parts.push(`prefix "${f.prefix}"`);
  for (const t of f.tags ?? []) parts.push(`tag ${t.key}=${t.value}`);
  if (f.sizeGreaterThan !== undefined) parts.push(`size > ${formatBytes(f.sizeGreaterThan)}`);
  if (f.sizeLessThan !== undefined) parts.push(`size < ${formatBytes(f.sizeLessThan)}`);
  return parts.length === 0 ? 'every object' : parts.join(', ');
}

function actionsText(r: LifecycleRuleView): string {
  const a: string[] = [];
  const e = r.expiration;
  if (e?.days !== undefined) a.push(`expire current after ${e.days}d`);
  if (e?.date !== undefined) a.push(`expire current from ${formatTime(e.date)}`);
  if (e?.expiredObjectDeleteMarker) a.push('remove expired delete markers');
  const n = r.noncurrentVersionExpiration;
  if (n) a.push(`delete noncurrent after ${n.noncurrentDays}d${n.newerNoncurrentVersions !== undefined ? ` (keep ${n.newerNoncurrentVersions} newest)` : ''}`);
  if (r.abortIncompleteMultipartUpload) a.push(`abort uploads after ${r.abortIncompleteMultipartUpload.daysAfterInitiation}d`);
  return a.join('; ');
}

export function bucketGovernanceView(r: BucketGovernanceReport): string {
  if (r.buckets.length === 0) return 'No buckets.';
  return r.buckets
    .map((b) => {
      const head = keyValues([
        ['Bucket', b.name],
        ['Versioning', b.versioning],
        ['Object lock', lockText(b)],
        ['Encryption', encryptionText(b)],
        ['Lifecycle', b.lifecycle ? `${b.lifecycle.rules.length} rule(s)` : 'none'],
      ]);
      if (!b.lifecycle || b.lifecycle.rules.length === 0) return head;
      const rules = table(
        ['RULE', 'STATUS', 'SELECTS', 'ACTIONS'],
        b.lifecycle.rules.map((x) => [x.id, x.status, filterText(x.filter), actionsText(x)]),
      );
      return `${head}\n${rules}`;
    })
    .join('\n\n');
}

export function kmsView(k: KmsStatusReport): string {
  if (!k.configured) return 'No key store configured: SSE-S3 and SSE-KMS are refused (set SVC_KMS_SECRET_KEY or SVC_KMS_SECRET_KEY_FILE); SSE-C works without one.';
  return keyValues([
    ['Key store', k.source === 'file' ? `file ${k.file}` : 'SVC_KMS_SECRET_KEY'],
    ['Ready', k.ready ? 'yes' : 'no (readiness reports kms_not_ready)'],
    ['Default key', k.defaultKeyId ?? '-'],
    ['Keys', (k.keyIds ?? []).join(', ') || '-'],
    ['Loaded', formatTime(k.loadedAt)],
    ...(k.lastError !== undefined ? [['Last error', k.lastError] as const] : []),
  ]);
}

/**
 * Plain-language lines for a bucket's data protection settings (object
 * lock, default encryption, lifecycle rules), as the bucket page shows them.
 * Pure: strings in, strings out.
 */
import type { BucketGovernance, LifecycleRuleView } from '../../src/api/console/wire.ts';
import { formatBytes, plural } from './format.js';

/** "On: new versions kept 30 days (GOVERNANCE)", "On, no default retention" or "Off". */
export function describeObjectLock(lock: BucketGovernance['objectLock']): string {
  if (!lock.enabled) return 'Off';
  const r = lock.defaultRetention;
  if (r === undefined) return 'On, no default retention (each version sets its own)';
  const span = r.years !== undefined ? plural(r.years, 'year') : plural(r.days ?? 0, 'day');
  return `On: new versions kept ${span} (${r.mode})`;
}

/** "SSE-S3 (AES256)", "SSE-KMS, key <id>" or "None". */
export function describeEncryption(enc: BucketGovernance['encryption']): string {
  if (enc === undefined) return 'None';
  if (enc.algorithm === 'AES256') return 'SSE-S3 (AES256)';
  return enc.kmsKeyId !== undefined ? `SSE-KMS, key ${enc.kmsKeyId}` : 'SSE-KMS, the default key';
}

/** What a rule selects: "prefix logs/, tag env=dev, over 1.00 MiB" or "every object". */
export function describeFilter(f: LifecycleRuleView['filter']): string {
  const parts: string[] = [];
  if (f.prefix !== undefined && f.prefix !== '') parts.push(`prefix ${f.prefix}`);
  for (const t of f.tags ?? []) parts.push(`tag ${t.key}=${t.value}`);
  if (f.sizeGreaterThan !== undefined) parts.push(`over ${formatBytes(f.sizeGreaterThan)}`);
  if (f.sizeLessThan !== undefined) parts.push(`under ${formatBytes(f.sizeLessThan)}`);
  return parts.length === 0 ? 'every object' : parts.join(', ');
}

/** What a rule does, one clause per action. */
export function describeActions(r: LifecycleRuleView): string[] {
  const out: string[] = [];
  const e = r.expiration;
  if (e?.days !== undefined) out.push(`expire current versions after ${plural(e.days, 'day')}`);
  if (e?.date !== undefined) out.push(`expire current versions on ${e.date.slice(0, 10)}`);
  if (e?.expiredObjectDeleteMarker === true) out.push('remove delete markers with no versions left');
  const n = r.noncurrentVersionExpiration;
  if (n !== undefined) {
    const keep = n.newerNoncurrentVersions !== undefined ? ` (keeping the newest ${n.newerNoncurrentVersions})` : '';
    out.push(`delete noncurrent versions after ${plural(n.noncurrentDays, 'day')}${keep}`);
  }
  const a = r.abortIncompleteMultipartUpload;
  if (a !== undefined) out.push(`abort unfinished uploads after ${plural(a.daysAfterInitiation, 'day')}`);
  return out;
}

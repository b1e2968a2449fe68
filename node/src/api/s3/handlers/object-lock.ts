/**
 * Object lock at the S3 edge: Get/PutObjectLockConfiguration, Get/Put
 * ObjectRetention, Get/PutObjectLegalHold, the `x-amz-object-lock-*` headers
 * of writes (PUT, copy, CreateMultipartUpload) and reads (GET, HEAD), and
 * `x-amz-bypass-governance-retention`. The rules themselves (what may be
 * removed or changed, and when) live in the object layer
 * (`object/object-lock.ts`), which every path that removes a version asks.
 */
import type { IncomingMessage } from 'node:http';
import { decodeLockConfig, encodeLockConfig, type BucketLockConfig, type DefaultRetention, validateDefaultRetention } from '../../../object/object-lock.ts';
import type { ObjectInfo, ObjectLockRequest, RetentionMode } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { bypassRequested } from '../authz/governance.ts';
import { type S3Context, sendEmpty, sendXml, versionIdParam } from '../context.ts';
import { hdr } from '../headers.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, type XmlNode, xmlList, xmlText } from '../xml.ts';

const MAX_BODY = 64 * 1024;

function parseMode(v: string | undefined, what: string): RetentionMode {
  if (v === 'GOVERNANCE' || v === 'COMPLIANCE') return v;
  throw new SvcError(what === 'header' ? 'InvalidArgument' : 'MalformedXML', `Unknown object lock mode ${v ?? '(none)'}: use GOVERNANCE or COMPLIANCE.`);
}

function parseDate(v: string, what: string): number {
  // ISO 8601 as S3 sends it (2030-01-01T00:00:00Z, with or without fractions)
  const t = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v.trim()) ? Date.parse(v.trim()) : Number.NaN;
  if (!Number.isFinite(t)) throw new SvcError(what === 'header' ? 'InvalidArgument' : 'MalformedXML', `The retain until date must be an ISO 8601 date and time: ${v}.`);
  return t;
}

function parseHold(v: string | undefined, what: string): 'ON' | 'OFF' {
  if (v === 'ON' || v === 'OFF') return v;
  throw new SvcError(what === 'header' ? 'InvalidArgument' : 'MalformedXML', `Legal hold status must be ON or OFF, not ${v ?? '(none)'}.`);
}

export { bypassRequested };

/** The lock a write asks for with `x-amz-object-lock-*` headers; undefined when none. */
export function requestedLock(req: IncomingMessage): ObjectLockRequest | undefined {
  const mode = hdr(req, 'x-amz-object-lock-mode');
  const until = hdr(req, 'x-amz-object-lock-retain-until-date');
  const hold = hdr(req, 'x-amz-object-lock-legal-hold');
  if (mode === undefined && until === undefined && hold === undefined) return undefined;
  if ((mode === undefined) !== (until === undefined)) {
    throw new SvcError('InvalidArgument', 'x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied.');
  }
  const out: ObjectLockRequest = {};
  if (mode !== undefined) {
    out.mode = parseMode(mode, 'header');
    out.retainUntil = parseDate(until!, 'header');
  }
  if (hold !== undefined) out.legalHold = parseHold(hold, 'header');
  return out;
}

/** The `x-amz-object-lock-*` headers of a GET/HEAD answer. */
export function lockResponseHeaders(info: Pick<ObjectInfo, 'lock'>): Record<string, string> {
  const l = info.lock;
  if (!l) return {};
  const h: Record<string, string> = {};
  if (l.mode && l.retainUntil) {
    h['x-amz-object-lock-mode'] = l.mode;
    h['x-amz-object-lock-retain-until-date'] = l.retainUntil.toISOString();
  }
  if (l.legalHold) h['x-amz-object-lock-legal-hold'] = l.legalHold;
  return h;
}

// ============ bucket configuration ============

export async function handleGetObjectLockConfiguration(ctx: S3Context): Promise<void> {
  const cfg = decodeLockConfig(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'object-lock'));
  if (!cfg) throw new SvcError('ObjectLockConfigurationNotFoundError');
  const body: XmlNode = { ObjectLockEnabled: 'Enabled' };
  if (cfg.rule) {
    body.Rule = { DefaultRetention: { Mode: cfg.rule.mode, ...(cfg.rule.days !== undefined ? { Days: cfg.rule.days } : { Years: cfg.rule.years! }) } };
  }
  sendXml(ctx, 200, 'ObjectLockConfiguration', body);
}

export async function handlePutObjectLockConfiguration(ctx: S3Context): Promise<void> {
  const doc = parseXml(await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY), 'ObjectLockConfiguration');
  if (xmlText(doc, 'ObjectLockEnabled') !== 'Enabled') throw new SvcError('MalformedXML', 'ObjectLockEnabled must be Enabled.');
  const cfg: BucketLockConfig = { enabled: true };
  const rules = xmlList(doc, 'Rule');
  if (rules.length > 1) throw new SvcError('MalformedXML', 'An object lock configuration holds at most one Rule.');
  if (rules.length === 1) {
    const d = xmlList(rules[0]!, 'DefaultRetention');
    if (d.length !== 1) throw new SvcError('MalformedXML', 'Rule needs one DefaultRetention.');
    const days = xmlText(d[0]!, 'Days');
    const years = xmlText(d[0]!, 'Years');
    const num = (v: string) => (/^\d{1,6}$/.test(v) ? Number(v) : Number.NaN);
    const rule: DefaultRetention = {
      mode: parseMode(xmlText(d[0]!, 'Mode'), 'xml'),
      ...(days !== undefined ? { days: num(days) } : {}),
      ...(years !== undefined ? { years: num(years) } : {}),
    };
    validateDefaultRetention(rule);
    cfg.rule = rule;
  }
  // The object layer enables it only on a bucket with versioning Enabled, and never lets it go.
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'object-lock', encodeLockConfig(cfg));
  sendEmpty(ctx, 200);
}

// ============ retention and legal hold ============

export async function handleGetObjectRetention(ctx: S3Context): Promise<void> {
  await requireLockBucket(ctx);
  const versionId = versionIdParam(ctx);
  const info = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  if (!info.lock?.mode || !info.lock.retainUntil) throw new SvcError('NoSuchObjectLockConfiguration');
  sendXml(ctx, 200, 'Retention', { Mode: info.lock.mode, RetainUntilDate: info.lock.retainUntil });
}

export async function handlePutObjectRetention(ctx: S3Context): Promise<void> {
  const doc = parseXml(await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY), 'Retention');
  const mode = xmlText(doc, 'Mode');
  const until = xmlText(doc, 'RetainUntilDate');
  if ((mode === undefined) !== (until === undefined)) throw new SvcError('MalformedXML', 'Retention needs both Mode and RetainUntilDate, or neither (to remove it).');
  const versionId = versionIdParam(ctx);
  await ctx.layer.setObjectLock(ctx.ep.bucket, ctx.ep.key, {
    ...(versionId ? { versionId } : {}),
    retention: mode === undefined ? null : { mode: parseMode(mode, 'xml'), retainUntil: parseDate(until!, 'xml') },
    bypassGovernance: bypassRequested(ctx.req),
  });
  sendEmpty(ctx, 200);
}

export async function handleGetObjectLegalHold(ctx: S3Context): Promise<void> {
  await requireLockBucket(ctx);
  const versionId = versionIdParam(ctx);
  const info = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, versionId ? { versionId } : {});
  if (!info.lock?.legalHold) throw new SvcError('NoSuchObjectLockConfiguration', 'The specified object does not have a legal hold configuration.');
  sendXml(ctx, 200, 'LegalHold', { Status: info.lock.legalHold });
}

export async function handlePutObjectLegalHold(ctx: S3Context): Promise<void> {
  const doc = parseXml(await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY), 'LegalHold');
  const versionId = versionIdParam(ctx);
  await ctx.layer.setObjectLock(ctx.ep.bucket, ctx.ep.key, { ...(versionId ? { versionId } : {}), legalHold: parseHold(xmlText(doc, 'Status'), 'xml') });
  sendEmpty(ctx, 200);
}

async function requireLockBucket(ctx: S3Context): Promise<void> {
  if (!decodeLockConfig(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'object-lock'))) {
    throw new SvcError('InvalidRequest', 'Bucket is missing Object Lock Configuration.');
  }
}

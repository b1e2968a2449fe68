/**
 * Bucket lifecycle at the S3 edge: Get/Put/DeleteBucketLifecycleConfiguration
 * (the XML document ⇄ the rules engine's configuration,
 * `object/lifecycle/rules.ts`) and the `x-amz-expiration` header of a current
 * version. The background scanner executes the rules (see
 * `background/lifecycle-executor.ts`).
 */
import { decodeLifecycle, encodeLifecycle, expiryOf, type LifecycleConfig, type LifecycleFilter, type LifecycleRule, validateLifecycle } from '../../../object/lifecycle/rules.ts';
import type { ObjectInfo } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, type XmlNode, xmlList, xmlRawText, xmlText } from '../xml.ts';

const MAX_BODY = 1024 * 1024;

function int(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,16}$/.test(v)) throw new SvcError('InvalidArgument', `${what} must be a non-negative integer.`);
  return Number(v);
}

function tagsOf(node: Record<string, unknown>): [string, string][] {
  return xmlList(node, 'Tag').map((t) => [xmlRawText(t, 'Key') ?? '', xmlRawText(t, 'Value') ?? '']);
}

function filterOf(r: Record<string, unknown>): { filter: LifecycleFilter; form: NonNullable<LifecycleRule['filterForm']> } {
  const legacy = xmlRawText(r, 'Prefix');
  const f = r.Filter;
  if (legacy !== undefined && f !== undefined) throw new SvcError('MalformedXML', 'A Rule takes a Filter or a Prefix, not both.');
  if (legacy !== undefined) return { filter: { prefix: legacy }, form: 'legacy-prefix' };
  if (f === undefined || f === '') return { filter: {}, form: 'empty' };
  if (typeof f !== 'object' || Array.isArray(f)) throw new SvcError('MalformedXML', 'A Rule has at most one Filter.');
  const node = f as Record<string, unknown>;
  const set = ['Prefix', 'Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan', 'And'].filter((k) => node[k] !== undefined);
  if (set.length > 1 || (node.Tag !== undefined && tagsOf(node).length > 1)) {
    throw new SvcError('MalformedXML', 'A Filter holds one condition; combine several with And.');
  }
  const inner = node.And !== undefined ? xmlList(node, 'And') : [node];
  if (inner.length !== 1) throw new SvcError('MalformedXML', 'A Filter holds at most one And.');
  const n = inner[0]!;
  const filter: LifecycleFilter = {};
  const prefix = xmlRawText(n, 'Prefix');
  if (prefix !== undefined) filter.prefix = prefix;
  const tags = tagsOf(n);
  if (tags.length > 0) filter.tags = tags;
  const gt = int(xmlText(n, 'ObjectSizeGreaterThan'), 'ObjectSizeGreaterThan');
  if (gt !== undefined) filter.sizeGreaterThan = gt;
  const lt = int(xmlText(n, 'ObjectSizeLessThan'), 'ObjectSizeLessThan');
  if (lt !== undefined) filter.sizeLessThan = lt;
  return { filter, form: node.And !== undefined ? 'and' : 'single' };
}

function oneChild(r: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const l = xmlList(r, name);
  if (l.length > 1) throw new SvcError('MalformedXML', `A Rule has at most one ${name}.`);
  return l[0];
}

/** Parses a LifecycleConfiguration document into the engine's (validated) configuration. */
export function lifecycleFromXml(doc: Record<string, unknown>): LifecycleConfig {
  const rules = xmlList(doc, 'Rule').map((r): LifecycleRule => {
    if (r.Transition !== undefined || r.NoncurrentVersionTransition !== undefined) {
      throw new SvcError(
        'InvalidArgument',
        'Lifecycle transitions to other storage classes are not supported: svc has no storage tiers. Use Expiration, NoncurrentVersionExpiration or AbortIncompleteMultipartUpload.',
      );
    }
    const status = xmlText(r, 'Status');
    if (status !== 'Enabled' && status !== 'Disabled') throw new SvcError('MalformedXML', 'Rule Status must be Enabled or Disabled.');
    const { filter, form } = filterOf(r);
    const rule: LifecycleRule = { id: xmlRawText(r, 'ID') ?? '', enabled: status === 'Enabled', filter, filterForm: form };
    const e = oneChild(r, 'Expiration');
    if (e) {
      const days = int(xmlText(e, 'Days'), 'Days');
      const date = xmlText(e, 'Date');
      const eodm = xmlText(e, 'ExpiredObjectDeleteMarker');
      if (eodm !== undefined && eodm !== 'true' && eodm !== 'false') throw new SvcError('MalformedXML', 'ExpiredObjectDeleteMarker must be true or false.');
      let dateMs: number | undefined;
      if (date !== undefined) {
        dateMs = Date.parse(date);
        if (!Number.isFinite(dateMs)) throw new SvcError('InvalidArgument', `'Date' must be an ISO 8601 date: ${date}.`);
      }
      rule.expiration = {
        ...(days !== undefined ? { days } : {}),
        ...(dateMs !== undefined ? { date: dateMs } : {}),
        ...(eodm !== undefined ? { expiredObjectDeleteMarker: eodm === 'true' } : {}),
      };
    }
    const n = oneChild(r, 'NoncurrentVersionExpiration');
    if (n) {
      const days = int(xmlText(n, 'NoncurrentDays'), 'NoncurrentDays');
      if (days === undefined) throw new SvcError('MalformedXML', 'NoncurrentVersionExpiration needs NoncurrentDays.');
      const newer = int(xmlText(n, 'NewerNoncurrentVersions'), 'NewerNoncurrentVersions');
      rule.noncurrentExpiration = { days, ...(newer !== undefined ? { newerNoncurrentVersions: newer } : {}) };
    }
    const a = oneChild(r, 'AbortIncompleteMultipartUpload');
    if (a) {
      const days = int(xmlText(a, 'DaysAfterInitiation'), 'DaysAfterInitiation');
      if (days === undefined) throw new SvcError('MalformedXML', 'AbortIncompleteMultipartUpload needs DaysAfterInitiation.');
      rule.abortIncompleteMultipartUpload = { days };
    }
    return rule;
  });
  return validateLifecycle({ rules });
}

function filterXml(r: LifecycleRule): XmlNode {
  const f = r.filter;
  if (r.filterForm === 'legacy-prefix') return { Prefix: f.prefix ?? '' };
  const parts: XmlNode = {};
  if (f.prefix !== undefined) parts.Prefix = f.prefix;
  if (f.tags?.length) parts.Tag = f.tags.map(([Key, Value]) => ({ Key, Value }));
  if (f.sizeGreaterThan !== undefined) parts.ObjectSizeGreaterThan = f.sizeGreaterThan;
  if (f.sizeLessThan !== undefined) parts.ObjectSizeLessThan = f.sizeLessThan;
  return { Filter: r.filterForm === 'and' ? { And: parts } : parts };
}

/** The configuration as a LifecycleConfiguration document body. */
export function lifecycleToXml(c: LifecycleConfig): XmlNode {
  return {
    Rule: c.rules.map((r) => {
      const node: XmlNode = { ID: r.id, ...filterXml(r), Status: r.enabled ? 'Enabled' : 'Disabled' };
      const e = r.expiration;
      if (e) {
        node.Expiration =
          e.days !== undefined ? { Days: e.days } : e.date !== undefined ? { Date: new Date(e.date) } : { ExpiredObjectDeleteMarker: e.expiredObjectDeleteMarker === true };
      }
      if (r.noncurrentExpiration) {
        node.NoncurrentVersionExpiration = {
          NoncurrentDays: r.noncurrentExpiration.days,
          ...(r.noncurrentExpiration.newerNoncurrentVersions !== undefined ? { NewerNoncurrentVersions: r.noncurrentExpiration.newerNoncurrentVersions } : {}),
        };
      }
      if (r.abortIncompleteMultipartUpload) node.AbortIncompleteMultipartUpload = { DaysAfterInitiation: r.abortIncompleteMultipartUpload.days };
      return node;
    }),
  };
}

export async function handleGetBucketLifecycle(ctx: S3Context): Promise<void> {
  const c = decodeLifecycle(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'lifecycle'));
  if (!c) throw new SvcError('NoSuchLifecycleConfiguration');
  sendXml(ctx, 200, 'LifecycleConfiguration', lifecycleToXml(c));
}

export async function handlePutBucketLifecycle(ctx: S3Context): Promise<void> {
  const c = lifecycleFromXml(parseXml(await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, MAX_BODY), 'LifecycleConfiguration'));
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'lifecycle', encodeLifecycle(c));
  sendEmpty(ctx, 200);
}

export async function handleDeleteBucketLifecycle(ctx: S3Context): Promise<void> {
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'lifecycle', undefined);
  sendEmpty(ctx, 204);
}

/** Each bucket's last parsed configuration with its bytes (a GET must not re-parse the document). */
const parsed = new Map<string, { raw: Buffer; c: LifecycleConfig }>();

/** `x-amz-expiration` of a current version (GET, HEAD, PUT answers), when a rule expires it. */
export async function expirationHeader(ctx: S3Context, info: Pick<ObjectInfo, 'name' | 'modTime' | 'size' | 'tags' | 'isLatest' | 'deleteMarker'>): Promise<Record<string, string>> {
  if (!info.isLatest || info.deleteMarker) return {};
  const raw = await ctx.layer.getBucketConfig(ctx.ep.bucket, 'lifecycle').catch(() => undefined);
  if (!raw) return {};
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let hit = parsed.get(ctx.ep.bucket);
  if (hit === undefined || !hit.raw.equals(bytes)) {
    hit = { raw: bytes, c: decodeLifecycle(raw)! };
    if (parsed.size > 256) parsed.clear();
    parsed.set(ctx.ep.bucket, hit);
  }
  const c = hit.c;
  const e = expiryOf(c, info.name, { modTime: info.modTime.getTime(), size: info.size, tags: info.tags });
  if (!e) return {};
  // S3's format: expiry-date="<RFC 1123 date>", rule-id="<id>" (the id URL-encoded)
  return { 'x-amz-expiration': `expiry-date="${new Date(e.date).toUTCString()}", rule-id="${encodeURIComponent(e.ruleId)}"` };
}

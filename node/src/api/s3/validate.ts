/**
 * Request-level validation shared by handlers: bucket names, storage class,
 * user metadata, content headers, tags, preconditions, ranges, listing
 * limits.
 */
import type { IncomingMessage } from 'node:http';
import type { ByteRange, ContentHeaders, Preconditions, StorageClass } from '../../object/types.ts';
import { SvcError } from '../../util/errors.ts';
import { hdr, headerText } from './headers.ts';

export const MAX_USER_META_BYTES = 2048;
export const MAX_PARTS = 10_000;
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_LIST_KEYS = 1000;

/** S3 bucket naming rules (the current, DNS-compatible set). */
export function validateBucketName(name: string): void {
  const ok =
    name.length >= 3 &&
    name.length <= 63 &&
    /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name) &&
    !name.includes('..') &&
    !name.includes('.-') &&
    !name.includes('-.') &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name) &&
    !name.startsWith('xn--') &&
    !name.startsWith('sthree-') &&
    !name.endsWith('-s3alias') &&
    !name.endsWith('--ol-s3') &&
    name !== '.svc.sys';
  if (!ok) throw new SvcError('InvalidBucketName', `The specified bucket is not valid: '${name}'.`);
}

/** `x-amz-storage-class`; undefined when absent. */
export function parseStorageClass(req: IncomingMessage): StorageClass | undefined {
  const v = hdr(req, 'x-amz-storage-class');
  if (v === undefined) return undefined;
  if (v === 'STANDARD' || v === 'REDUCED_REDUNDANCY') return v;
  throw new SvcError('InvalidStorageClass', `The storage class you specified is not valid: '${v}'. Use STANDARD or REDUCED_REDUNDANCY.`);
}

/** `x-amz-meta-*` headers (prefix stripped, lower case), capped at 2 KiB. */
export function parseUserMeta(req: IncomingMessage): Record<string, string> {
  const meta: Record<string, string> = {};
  let total = 0;
  for (const [k, v] of Object.entries(req.headers)) {
    if (!k.startsWith('x-amz-meta-')) continue;
    const name = k.slice('x-amz-meta-'.length);
    // UTF-8 text (boto3 sends non-ASCII values that way) is kept as text, and written back as the same bytes
    const value = headerText(Array.isArray(v) ? v.join(',') : (v ?? ''));
    if (name === '') throw new SvcError('InvalidArgument', 'User metadata keys must not be empty.');
    total += Buffer.byteLength(name) + Buffer.byteLength(value);
    meta[name] = value;
  }
  if (total > MAX_USER_META_BYTES) throw new SvcError('MetadataTooLarge', undefined, { size: total, max: MAX_USER_META_BYTES });
  return meta;
}

export function parseContentHeaders(req: IncomingMessage): ContentHeaders {
  const h: ContentHeaders = {};
  const ct = hdr(req, 'content-type');
  if (ct !== undefined) h.contentType = ct;
  const ce = hdr(req, 'content-encoding');
  if (ce !== undefined) {
    // aws-chunked is a transfer framing, not a property of the stored object; the rest is kept as sent
    const kept = ce
      .split(',')
      .filter((s) => s.trim() !== '' && s.trim().toLowerCase() !== 'aws-chunked')
      .join(',')
      .trim();
    if (kept !== '') h.contentEncoding = kept;
  }
  const cd = hdr(req, 'content-disposition');
  if (cd !== undefined) h.contentDisposition = cd;
  const cl = hdr(req, 'content-language');
  if (cl !== undefined) h.contentLanguage = cl;
  const cc = hdr(req, 'cache-control');
  if (cc !== undefined) h.cacheControl = cc;
  const ex = hdr(req, 'expires');
  if (ex !== undefined) h.expires = ex;
  return h;
}

/** Validates a tag set given as a URL-encoded string and returns it normalised. */
export function normaliseTags(encoded: string, maxTags: number): string {
  if (encoded === '') return '';
  const params = new URLSearchParams(encoded);
  return encodeTags([...params.entries()], maxTags);
}

export function encodeTags(tags: readonly [string, string][], maxTags: number): string {
  if (tags.length > maxTags) throw new SvcError('InvalidTag', `The tag set may hold at most ${maxTags} tags.`);
  const seen = new Set<string>();
  for (const [k, v] of tags) {
    if (k.length === 0 || k.length > 128) throw new SvcError('InvalidTag', 'The TagKey you have provided is invalid.');
    if (v.length > 256) throw new SvcError('InvalidTag', 'The TagValue you have provided is too long.');
    if (k.startsWith('aws:')) throw new SvcError('InvalidTag', 'Your TagKey cannot be prefixed with aws:.');
    if (seen.has(k)) throw new SvcError('InvalidTag', 'Cannot provide multiple Tags with the same key.');
    seen.add(k);
  }
  const p = new URLSearchParams();
  for (const [k, v] of tags) p.append(k, v);
  return p.toString();
}

export function decodeTags(encoded: string): [string, string][] {
  if (!encoded) return [];
  return [...new URLSearchParams(encoded).entries()];
}

function parseHttpDate(v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** If-* headers (or `x-amz-copy-source-if-*` with `prefix`). Unparseable dates are ignored, as HTTP says. */
export function parsePreconditions(req: IncomingMessage, prefix = ''): Preconditions | undefined {
  const p: Preconditions = {};
  const im = hdr(req, `${prefix}if-match`);
  if (im !== undefined) p.ifMatch = im;
  const inm = hdr(req, `${prefix}if-none-match`);
  if (inm !== undefined) p.ifNoneMatch = inm;
  const ims = parseHttpDate(hdr(req, `${prefix}if-modified-since`));
  if (ims) p.ifModifiedSince = ims;
  const ius = parseHttpDate(hdr(req, `${prefix}if-unmodified-since`));
  if (ius) p.ifUnmodifiedSince = ius;
  return Object.keys(p).length > 0 ? p : undefined;
}

export { checkPreconditions } from '../../object/preconditions.ts';

/** Parses a Range header; undefined for absent, multi-range or syntactically invalid (served whole, as S3 does). */
export function parseRange(v: string | undefined): ByteRange | undefined {
  if (v === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(v.trim());
  if (!m) return undefined;
  const [, a, b] = m as unknown as [string, string, string];
  if (a === '' && b === '') return undefined;
  if (a === '') return { suffix: Number(b) };
  if (b === '') return { start: Number(a) };
  if (Number(b) < Number(a)) return undefined;
  return { start: Number(a), end: Number(b) };
}

/** A non-negative integer query parameter, capped; InvalidArgument when malformed. */
export function parseLimit(v: string | undefined, name: string, def: number, cap: number): number {
  if (v === undefined || v === '') return def;
  if (!/^\d{1,10}$/.test(v)) throw new SvcError('InvalidArgument', `Provided ${name} not an integer or within integer range.`);
  return Math.min(Number(v), cap);
}

/**
 * Header and URL helpers shared by every HTTP edge (S3, signing, admin,
 * console): a leaf module, importing nothing of the API above it, so the
 * authorization, signing and routing modules can all use it without a cycle.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { SvcError } from '../../util/errors.ts';

/** A header as one string (repeated headers joined with `,`), or undefined when absent. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

/** A request header as one string. */
export function hdr(req: IncomingMessage, name: string): string | undefined {
  return headerValue(req.headers, name);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as its sender wrote it. node:http hands header bytes over
 * one byte per character (latin1); clients that put non-ASCII text in a
 * header (boto3's `x-amz-meta-*`, a v2 signer's amz headers) send it as UTF-8
 * and sign its UTF-8 text. Bytes that form valid UTF-8 read as that text;
 * anything else stays as it came.
 */
export function headerText(v: string): string {
  if (!/[\x80-\xff]/.test(v)) return v;
  try {
    return strictUtf8.decode(Buffer.from(v, 'latin1'));
  } catch {
    return v;
  }
}

export { uriEncode } from '../../util/uri-encode.ts';

/** Decodes a percent-encoded component; malformed encoding is an S3 InvalidArgument/URI error. */
export function safeDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw new SvcError('InvalidArgument', 'The request URI is not correctly percent-encoded.');
  }
}

/** Splits a raw target into path and raw query. */
export function splitTarget(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** Decoded query pairs in order as sent (`+` kept literally, as AWS signers encode spaces as %20). */
export function parseQuery(raw: string): [string, string][] {
  const out: [string, string][] = [];
  if (!raw) return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    out.push([safeDecode(k), safeDecode(v)]);
  }
  return out;
}

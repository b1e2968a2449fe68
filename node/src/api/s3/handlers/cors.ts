/**
 * Bucket CORS: Put/Get/DeleteBucketCors, the preflight `OPTIONS` answer and
 * the `Access-Control-*` headers every response to an admitted origin gets.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ObjectLayer } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { configStore } from '../authz/endpoint.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { hdr } from '../headers.ts';
import { CONSOLE_RULE, type CorsRule, corsFromXml, corsToXml, decodeCors, encodeCors, matchRule, preflightHeaders, responseCorsHeaders } from '../cors.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml } from '../xml.ts';

export async function handlePutBucketCors(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 64 * 1024);
  const rules = corsFromXml(parseXml(body, 'CORSConfiguration'));
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'cors', encodeCors(rules));
  sendEmpty(ctx, 200);
}

export async function handleGetBucketCors(ctx: S3Context): Promise<void> {
  const rules = decodeCors(await configStore(ctx.layer).getBucketConfig(ctx.ep.bucket, 'cors'));
  if (!rules) throw new SvcError('NoSuchCORSConfiguration');
  sendXml(ctx, 200, 'CORSConfiguration', corsToXml(rules));
}

export async function handleDeleteBucketCors(ctx: S3Context): Promise<void> {
  await configStore(ctx.layer).setBucketConfig(ctx.ep.bucket, 'cors', undefined);
  sendEmpty(ctx, 204);
}

export interface CorsSource {
  layer: ObjectLayer;
  /** Origins svc's own console is served from: allowed on every bucket without a configuration. */
  consoleOrigin: (origin: string) => boolean;
}

/** The rules for `bucket`: its configuration, the console's rule for a bucket without one, else none. */
async function rulesFor(src: CorsSource, bucket: string, origin: string): Promise<CorsRule[] | undefined> {
  // a bucket that does not exist (yet) has no rules of its own
  const stored = bucket === '' ? undefined : decodeCors(await configStore(src.layer).getBucketConfig(bucket, 'cors').catch(() => undefined));
  if (stored) return stored;
  return src.consoleOrigin(origin) ? [CONSOLE_RULE] : undefined;
}

/** Answers `OPTIONS` (a CORS preflight) from the bucket's rules; no authentication, as S3 does. */
export async function handlePreflight(src: CorsSource, req: IncomingMessage, res: ServerResponse, bucket: string): Promise<void> {
  const origin = hdr(req, 'origin');
  const method = hdr(req, 'access-control-request-method');
  if (origin === undefined || method === undefined) {
    throw new SvcError('InvalidRequest', 'Insufficient information. Origin request header needed.');
  }
  const requested = (hdr(req, 'access-control-request-headers') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  const rules = await rulesFor(src, bucket, origin);
  if (!rules) throw new SvcError('AccessForbidden', 'CORSResponse: CORS is not enabled for this bucket.');
  const rule = matchRule(rules, origin, method, requested);
  if (!rule) throw new SvcError('AccessForbidden');
  res.writeHead(200, { ...preflightHeaders(rule, origin, requested), 'content-length': 0 });
  res.end();
}

/** Sets the CORS headers of a real request from an admitted origin (errors included, so pages can read them). */
export async function applyCorsHeaders(src: CorsSource, req: IncomingMessage, res: ServerResponse, bucket: string): Promise<void> {
  const origin = hdr(req, 'origin');
  if (origin === undefined) return;
  const rules = await rulesFor(src, bucket, origin).catch(() => undefined);
  const rule = rules && matchRule(rules, origin, req.method ?? 'GET');
  if (!rule) return;
  for (const [k, v] of Object.entries(responseCorsHeaders(rule, origin))) res.setHeader(k, v);
}

/**
 * Object operations: PutObject (conditional), GetObject (ranges, partNumber,
 * response-* overrides, preconditions), HeadObject, DeleteObject,
 * DeleteObjects, CopyObject, GetObjectAttributes.
 */
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { resolveRange } from '../../../object/range.ts';
import type { GetObjectOptions, GetObjectResult, ObjectChecksum, ObjectInfo, PutObjectOptions } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { writeChunks } from '../../../util/write-chunks.ts';
import { checksumHeaderName, parseChecksumAlgorithm } from '../checksum.ts';
import { quoteEtag, type S3Context, sendEmpty, sendXml, underQuota, versionIdParam } from '../context.ts';
import { hdr } from '../headers.ts';
import { buildPutData, MAX_PUT_SIZE, readSmallBody, streamPutData } from '../put-data.ts';
import { MAX_KEY_BYTES } from '../router.ts';
import {
  checkPreconditions,
  normaliseTags,
  parseContentHeaders,
  parsePreconditions,
  parseRange,
  parseStorageClass,
  parseUserMeta,
} from '../validate.ts';
import { parseXml, type XmlNode, xmlList, xmlRawText, xmlText } from '../xml.ts';
import { requestedObjectAcl } from './acl.ts';
import { parseCopySource } from '../copy-source.ts';
import { authorize } from '../authz/authorize.ts';
import { bucketSecurity, requestFacts } from '../authz/endpoint.ts';
import { type CustomerKey, customerKey, readCustomerKey, requestedSse, requireCustomerKey, sseResponseHeaders } from '../sse-headers.ts';
import { publishAfter } from './events.ts';
import { expirationHeader } from './lifecycle.ts';
import { bypassRequested, lockResponseHeaders, requestedLock } from './object-lock.ts';

export { parseCopySource };
import { MAX_OBJECT_TAGS } from './tagging.ts';
import { REPLICA_ANSWER_HEADER, replicaRequest } from '../replica-headers.ts';

// ============ helpers ============

/** Text as the header bytes that carry it: UTF-8, one byte per character (what node:http writes). */
function headerBytes(v: string): string {
  return /[^\x00-\x7f]/.test(v) ? Buffer.from(v, 'utf8').toString('latin1') : v;
}

function versionHeaders(info: { versionId: string }): Record<string, string> {
  return info.versionId && info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {};
}

function checksumHeaders(c: ObjectChecksum | undefined): Record<string, string> {
  if (!c) return {};
  return { [checksumHeaderName(c.algorithm)]: c.value, 'x-amz-checksum-type': c.type };
}

/** Checksum XML fields (`ChecksumCRC32` …) of a value. */
export function checksumXml(c: ObjectChecksum | undefined, withType = true): XmlNode {
  if (!c) return {};
  const node: XmlNode = { [`Checksum${c.algorithm}`]: c.value };
  if (withType) node.ChecksumType = c.type;
  return node;
}

/** Headers describing an object on GET/HEAD. */
function objectHeaders(ctx: S3Context, info: ObjectInfo): Record<string, string> {
  const h: Record<string, string> = {
    etag: quoteEtag(info.etag),
    'last-modified': info.modTime.toUTCString(),
    'accept-ranges': 'bytes',
    // S3 names the storage class only when it is not STANDARD
    ...(info.storageClass !== 'STANDARD' ? { 'x-amz-storage-class': info.storageClass } : {}),
    ...versionHeaders(info),
  };
  const c = info.contentHeaders;
  h['content-type'] = c.contentType ?? 'binary/octet-stream';
  if (c.contentEncoding) h['content-encoding'] = c.contentEncoding;
  if (c.contentDisposition) h['content-disposition'] = c.contentDisposition;
  if (c.contentLanguage) h['content-language'] = c.contentLanguage;
  if (c.cacheControl) h['cache-control'] = c.cacheControl;
  if (c.expires) h.expires = c.expires;
  for (const [k, v] of Object.entries(info.userMeta)) h[`x-amz-meta-${k}`] = headerBytes(v);
  if (info.tags) h['x-amz-tagging-count'] = String(new URLSearchParams(info.tags).size);
  if (info.replicationStatus) h['x-amz-replication-status'] = info.replicationStatus;
  // S3 gives the parts count only to a request for one part (partNumber) of a multipart object
  if (ctx.ep.query.has('partNumber') && (info.parts.length > 1 || /-\d+$/.test(info.etag))) h['x-amz-mp-parts-count'] = String(info.parts.length);
  // response-* overrides (signed requests only, which every request here is)
  const q = ctx.ep.query;
  const overrides: [string, string][] = [
    ['response-content-type', 'content-type'],
    ['response-content-language', 'content-language'],
    ['response-expires', 'expires'],
    ['response-cache-control', 'cache-control'],
    ['response-content-disposition', 'content-disposition'],
    ['response-content-encoding', 'content-encoding'],
  ];
  for (const [param, name] of overrides) {
    const v = q.get(param);
    if (v === undefined) continue;
    // What an HTTP header may carry (node:http refuses anything else when it writes the head).
    if (/[^\t\x20-\x7e\x80-\xff]/.test(v)) throw new SvcError('InvalidArgument', `${param} holds characters a header cannot carry`, { argumentName: param });
    h[name] = v;
  }
  return h;
}

/**
 * The answer headers a read adds for governance: encryption (with the SSE-C
 * key's MD5), the object lock state the caller may see
 * (`s3:GetObjectRetention`, `s3:GetObjectLegalHold`), `x-amz-expiration`.
 */
async function governanceHeaders(ctx: S3Context, info: ObjectInfo, key: CustomerKey | undefined): Promise<Record<string, string>> {
  const h: Record<string, string> = { ...sseResponseHeaders(info.sse, key), ...(await expirationHeader(ctx, info)) };
  if (info.lock) {
    const lock = lockResponseHeaders(info);
    const facts = requestFacts(ctx);
    const security = await bucketSecurity(ctx);
    const may = (action: string) => authorize({ facts, bucket: ctx.ep.bucket, key: ctx.ep.key, action, security }).then(
      () => true,
      () => false,
    );
    if (!(await may('s3:GetObjectRetention'))) {
      delete lock['x-amz-object-lock-mode'];
      delete lock['x-amz-object-lock-retain-until-date'];
    }
    if (lock['x-amz-object-lock-legal-hold'] !== undefined && !(await may('s3:GetObjectLegalHold'))) delete lock['x-amz-object-lock-legal-hold'];
    Object.assign(h, lock);
  }
  return h;
}

function getOptions(ctx: S3Context): GetObjectOptions {
  const opts: GetObjectOptions = {};
  const key = readCustomerKey(ctx.req);
  if (key) opts.sseCustomerKey = key.key;
  const versionId = versionIdParam(ctx);
  if (versionId) opts.versionId = versionId;
  const pn = ctx.ep.query.get('partNumber');
  if (pn !== undefined) {
    if (!/^\d{1,5}$/.test(pn) || Number(pn) < 1 || Number(pn) > 10000) {
      throw new SvcError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
    }
    opts.partNumber = Number(pn);
  }
  const range = parseRange(hdr(ctx.req, 'range'));
  if (range) {
    if (opts.partNumber !== undefined) throw new SvcError('InvalidRequest', 'Cannot specify both Range header and partNumber query parameter.');
    opts.range = range;
  }
  return opts;
}

/** A part number past the object's parts is InvalidPartNumber (416), as S3 answers. */
function partNumberError(err: unknown, partNumber: number | undefined): unknown {
  if (partNumber !== undefined && err instanceof SvcError && err.code === 'InvalidRange' && err.details?.['partNumber'] !== undefined) {
    return new SvcError('InvalidPartNumber');
  }
  return err;
}

/** 304 Not Modified carries the ETag (and Last-Modified, version id) of what the client already has. */
function sendNotModified(ctx: S3Context, info: ObjectInfo): void {
  ctx.res.writeHead(304, { etag: quoteEtag(info.etag), 'last-modified': info.modTime.toUTCString(), ...versionHeaders(info) });
  ctx.res.end();
}

/** GET/HEAD answer a delete marker with 404/405 and `x-amz-delete-marker: true`. */
async function withDeleteMarkerHeaders<T>(ctx: S3Context, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SvcError && (err.code === 'NoSuchKey' || err.code === 'MethodNotAllowed') && err.details?.['deleteMarker'] === true) {
      ctx.res.setHeader('x-amz-delete-marker', 'true');
      const vid = err.details['versionId'];
      if (typeof vid === 'string') ctx.res.setHeader('x-amz-version-id', vid);
    }
    throw err;
  }
}

// ============ PutObject ============

function putOptions(req: IncomingMessage): PutObjectOptions {
  const opts: PutObjectOptions = {
    contentHeaders: parseContentHeaders(req),
    userMeta: parseUserMeta(req),
  };
  const sc = parseStorageClass(req);
  if (sc) opts.storageClass = sc;
  const tagging = hdr(req, 'x-amz-tagging');
  if (tagging !== undefined) opts.tags = normaliseTags(tagging, MAX_OBJECT_TAGS);
  const sse = requestedSse(req);
  if (sse) opts.sse = sse;
  const lock = requestedLock(req);
  if (lock) opts.lock = lock;
  return opts;
}

function writePreconditions(req: IncomingMessage): PutObjectOptions['preconditions'] {
  const im = hdr(req, 'if-match');
  const inm = hdr(req, 'if-none-match');
  if (inm !== undefined && inm.trim() !== '*') throw new SvcError('NotImplemented', 'If-None-Match on writes supports only "*".');
  if (im === undefined && inm === undefined) return undefined;
  return { ...(im !== undefined ? { ifMatch: im } : {}), ...(inm !== undefined ? { ifNoneMatch: '*' } : {}) };
}

export async function handlePutObject(ctx: S3Context): Promise<void> {
  const opts = putOptions(ctx.req);
  const acl = await requestedObjectAcl(ctx);
  if (acl) opts.acl = acl;
  const pre = writePreconditions(ctx.req);
  if (pre) opts.preconditions = pre;
  const replica = await replicaRequest(ctx, 's3:ReplicateObject');
  if (replica) {
    opts.replica = true;
    if (replica.versionId !== undefined) opts.versionId = replica.versionId;
    if (replica.modTime !== undefined) opts.modTime = new Date(replica.modTime);
  }
  const data = buildPutData(ctx.req.headers, ctx.req, ctx.auth, { maxSize: MAX_PUT_SIZE });
  opts.origin = ctx.origin();
  const info = await underQuota(ctx, ctx.ep.bucket, data.size, () => ctx.layer.putObject(ctx.ep.bucket, ctx.ep.key, data, opts));
  sendEmpty(ctx, 200, {
    ...(replica ? { [REPLICA_ANSWER_HEADER]: 'true' } : {}),
    etag: quoteEtag(info.etag),
    ...versionHeaders(info),
    ...checksumHeaders(info.checksum ?? data.checksum()),
    ...sseResponseHeaders(info.sse, customerKey(ctx.req)),
    ...(await expirationHeader(ctx, info)),
  });
}

// ============ GetObject / HeadObject ============

function checksumModeHeaders(ctx: S3Context, info: ObjectInfo, partNumber: number | undefined, ranged: boolean): Record<string, string> {
  if (hdr(ctx.req, 'x-amz-checksum-mode')?.toUpperCase() !== 'ENABLED' || ranged) return {};
  if (partNumber !== undefined) {
    // a part of a multipart object carries its own checksum
    const part = info.parts.find((p) => p.number === partNumber);
    return info.parts.length > 1 ? checksumHeaders(part?.checksum) : checksumHeaders(info.checksum);
  }
  return checksumHeaders(info.checksum);
}

export async function handleGetObject(ctx: S3Context): Promise<void> {
  const opts = getOptions(ctx);
  // Preconditions are evaluated by the layer's `check`, once the version is known and before any
  // of its data is read (a 304 or 412 reads no shard), here so that a 304 can carry the ETag.
  const pre = parsePreconditions(ctx.req);
  let checked: ObjectInfo | undefined;
  const check =
    pre === undefined
      ? undefined
      : (seen: ObjectInfo): void => {
          checked = seen;
          checkPreconditions(pre, seen.etag, seen.modTime);
        };
  // `reuseBuffers`: the body is written chunk by chunk below, each write completed before the next read.
  let result: GetObjectResult;
  try {
    result = await withDeleteMarkerHeaders(ctx, () => ctx.layer.getObject(ctx.ep.bucket, ctx.ep.key, { ...opts, reuseBuffers: true, ...(check ? { check } : {}) }));
  } catch (err) {
    if (err instanceof SvcError && err.code === 'NotModified' && checked !== undefined) {
      sendNotModified(ctx, checked);
      return;
    }
    throw partNumberError(err, opts.partNumber);
  }
  const { info, body } = result;
  let headers: Record<string, string>;
  try {
    headers = { ...objectHeaders(ctx, info), ...(await governanceHeaders(ctx, info, customerKey(ctx.req))) };
  } catch (err) {
    body.destroy();
    throw err;
  }
  let status = 200;
  let length = info.size;
  const partial = result.range !== undefined && (opts.range !== undefined || opts.partNumber !== undefined);
  if (result.range && partial) {
    status = 206;
    length = result.range.end - result.range.start + 1;
    headers['content-range'] = `bytes ${result.range.start}-${result.range.end}/${info.size}`;
  }
  try {
    Object.assign(headers, checksumModeHeaders(ctx, info, opts.partNumber, opts.range !== undefined));
    headers['content-length'] = String(length);
    ctx.res.writeHead(status, headers);
  } catch (err) {
    // e.g. a response-* override with characters no header may carry: release the read lock.
    body.destroy();
    throw err;
  }
  if (result.chunks) await writeChunks(result.chunks, ctx.res);
  else await pipeline(body, ctx.res);
  await publishAfter(ctx, 'ObjectAccessed:Get', info);
}

export async function handleHeadObject(ctx: S3Context): Promise<void> {
  const opts = getOptions(ctx);
  const { range, ...infoOpts } = opts;
  const info = await withDeleteMarkerHeaders(ctx, () => ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, infoOpts));
  const key = customerKey(ctx.req);
  requireCustomerKey(info, key);
  try {
    checkPreconditions(parsePreconditions(ctx.req), info.etag, info.modTime);
  } catch (err) {
    if (err instanceof SvcError && err.code === 'NotModified') {
      sendNotModified(ctx, info);
      return;
    }
    throw err;
  }
  const headers = objectHeaders(ctx, info);
  let status = 200;
  let length = info.size;
  if (opts.partNumber !== undefined) {
    const parts = info.parts.length > 0 ? info.parts : [];
    const idx = parts.findIndex((p) => p.number === opts.partNumber);
    if (idx < 0 && !(opts.partNumber === 1 && parts.length <= 1)) throw new SvcError('InvalidPartNumber');
    if (idx >= 0 && parts.length > 1) {
      const start = parts.slice(0, idx).reduce((s, p) => s + p.size, 0);
      length = parts[idx]!.size;
      status = 206;
      headers['content-range'] = `bytes ${start}-${start + length - 1}/${info.size}`;
    }
  } else if (range) {
    const r = resolveRange(range, info.size);
    status = 206;
    length = r.end - r.start + 1;
    headers['content-range'] = `bytes ${r.start}-${r.end}/${info.size}`;
  }
  Object.assign(headers, checksumModeHeaders(ctx, info, opts.partNumber, range !== undefined), await governanceHeaders(ctx, info, key));
  headers['content-length'] = String(length);
  ctx.res.writeHead(status, headers);
  ctx.res.end();
  await publishAfter(ctx, 'ObjectAccessed:Head', info);
}

// ============ DeleteObject / DeleteObjects ============

export async function handleDeleteObject(ctx: S3Context): Promise<void> {
  const versionId = versionIdParam(ctx);
  const im = hdr(ctx.req, 'if-match');
  const replica = await replicaRequest(ctx, 's3:ReplicateDelete');
  try {
    const r = await ctx.layer.deleteObject(ctx.ep.bucket, ctx.ep.key, {
      ...(versionId ? { versionId } : {}),
      ...(replica ? { replica: { ...(replica.versionId !== undefined ? { markerVersionId: replica.versionId } : {}), ...(replica.modTime !== undefined ? { modTime: replica.modTime } : {}) } } : {}),
      ...(im !== undefined ? { preconditions: { ifMatch: im } } : {}),
      // the permission for the bypass was checked with the request (authz/governance.ts)
      bypassGovernance: bypassRequested(ctx.req),
      origin: ctx.origin(),
    });
    const h: Record<string, string> = {};
    if (r.versionId && r.versionId !== 'null') h['x-amz-version-id'] = r.versionId;
    else if (r.versionId === 'null' && versionId === 'null') h['x-amz-version-id'] = 'null';
    if (r.deleteMarker) h['x-amz-delete-marker'] = 'true';
    if (replica) h[REPLICA_ANSWER_HEADER] = 'true';
    sendEmpty(ctx, 204, h);
  } catch (err) {
    // deleting what is not there succeeds, as S3 does (the bucket must exist)
    if (err instanceof SvcError && (err.code === 'NoSuchKey' || err.code === 'NoSuchVersion') && im === undefined) {
      sendEmpty(ctx, 204);
      return;
    }
    throw err;
  }
}

const MAX_DELETE_OBJECTS = 1000;

export async function handleDeleteObjects(ctx: S3Context): Promise<void> {
  const body = await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 2 * 1024 * 1024);
  const doc = parseXml(body, 'Delete');
  const quiet = (xmlText(doc, 'Quiet') ?? 'false').toLowerCase() === 'true';
  const objects = xmlList(doc, 'Object');
  if (objects.length === 0) throw new SvcError('MalformedXML', 'The Delete document must name at least one Object.');
  if (objects.length > MAX_DELETE_OBJECTS) throw new SvcError('MalformedXML', 'The Delete document may name at most 1000 objects.');
  const targets = objects.map((o) => {
    const key = xmlRawText(o, 'Key');
    if (key === undefined || key === '') throw new SvcError('MalformedXML', 'Every Object needs a Key.');
    return { key, versionId: xmlText(o, 'VersionId') };
  });
  await ctx.layer.getBucketInfo(ctx.ep.bucket);
  const bypass = bypassRequested(ctx.req);
  const deleted: XmlNode[] = [];
  const errors: XmlNode[] = [];
  for (const t of targets) {
    try {
      if (Buffer.byteLength(t.key) > MAX_KEY_BYTES) throw new SvcError('KeyTooLongError');
      await ctx.authorizeKey(t.key, t.versionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject');
      if (bypass) await ctx.authorizeKey(t.key, 's3:BypassGovernanceRetention');
      let r: { versionId?: string; deleteMarker: boolean };
      try {
        r = await ctx.layer.deleteObject(ctx.ep.bucket, t.key, { ...(t.versionId ? { versionId: t.versionId } : {}), bypassGovernance: bypass, origin: ctx.origin() });
      } catch (err) {
        if (err instanceof SvcError && (err.code === 'NoSuchKey' || err.code === 'NoSuchVersion')) r = { deleteMarker: false };
        else throw err;
      }
      if (!quiet) {
        const d: XmlNode = { Key: t.key };
        if (t.versionId) d.VersionId = t.versionId;
        if (r.deleteMarker) {
          d.DeleteMarker = true;
          if (r.versionId) d.DeleteMarkerVersionId = r.versionId;
        }
        deleted.push(d);
      }
    } catch (err) {
      const e = err instanceof SvcError ? err : new SvcError('InternalError', undefined, undefined, { cause: err });
      if (e.code === 'InternalError') ctx.logger.error({ event: 's3_delete_objects_error', err, key: t.key }, 'DeleteObjects entry failed');
      errors.push({ Key: t.key, ...(t.versionId ? { VersionId: t.versionId } : {}), Code: e.code, Message: e.message });
    }
  }
  sendXml(ctx, 200, 'DeleteResult', { Deleted: deleted, Error: errors });
}

// ============ CopyObject ============

function directive(req: IncomingMessage, name: string): 'COPY' | 'REPLACE' {
  const v = hdr(req, name);
  if (v === undefined || v === 'COPY') return 'COPY';
  if (v === 'REPLACE') return 'REPLACE';
  throw new SvcError('InvalidArgument', `Unknown ${name}: ${v}.`);
}

export async function handleCopyObject(ctx: S3Context<Extract<S3Context['ep'], { op: 'CopyObject' }>>): Promise<void> {
  const src = parseCopySource(ctx.ep.copySource);
  const metaDirective = directive(ctx.req, 'x-amz-metadata-directive');
  const tagDirective = directive(ctx.req, 'x-amz-tagging-directive');
  // a copy never keeps the source's ACL: it gets the one asked for, or private
  const acl = await requestedObjectAcl(ctx);
  const storageClass = parseStorageClass(ctx.req);
  const srcPre = parsePreconditions(ctx.req, 'x-amz-copy-source-');
  const destPre = writePreconditions(ctx.req);
  const newMeta = metaDirective === 'REPLACE' ? parseUserMeta(ctx.req) : undefined;
  const newHeaders = metaDirective === 'REPLACE' ? parseContentHeaders(ctx.req) : undefined;
  const taggingHeader = hdr(ctx.req, 'x-amz-tagging');
  const newTags = tagDirective === 'REPLACE' ? normaliseTags(taggingHeader ?? '', MAX_OBJECT_TAGS) : undefined;
  const algHeader = hdr(ctx.req, 'x-amz-checksum-algorithm');
  const requestedAlg = algHeader !== undefined ? parseChecksumAlgorithm(algHeader) : undefined;
  if (algHeader !== undefined && !requestedAlg) throw new SvcError('InvalidRequest', `Invalid x-amz-checksum-algorithm: ${algHeader}.`);
  // The source is read with its own SSE-C key; the copy is encrypted as its own headers (or the bucket's default) say.
  const srcKey = customerKey(ctx.req, true);
  const destSse = requestedSse(ctx.req);
  const destLock = requestedLock(ctx.req);

  const srcOpts: GetObjectOptions = { ...(src.versionId ? { versionId: src.versionId } : {}), ...(srcKey ? { sseCustomerKey: srcKey.key } : {}) };
  const sameObject = src.bucket === ctx.ep.bucket && src.key === ctx.ep.key;
  const srcInfo = await ctx.layer.getObjectInfo(src.bucket, src.key, srcOpts);
  requireCustomerKey(srcInfo, srcKey);
  checkPreconditions(srcPre, srcInfo.etag, srcInfo.modTime, true);
  const classChanges = storageClass !== undefined && storageClass !== srcInfo.storageClass;
  const encryptionChanges = destSse !== undefined || srcInfo.sse?.type === 'SSE-C' || destLock !== undefined;

  if (sameObject && !src.versionId && !classChanges && !requestedAlg && !encryptionChanges) {
    if (metaDirective === 'COPY' && tagDirective === 'COPY') {
      throw new SvcError(
        'InvalidRequest',
        "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
      );
    }
    // metadata-only change: rewrite the version's metadata in place
    const info = await ctx.layer.updateObjectMetadata(ctx.ep.bucket, ctx.ep.key, {
      versionId: srcInfo.versionId,
      ...(newMeta ? { userMeta: newMeta, contentHeaders: newHeaders } : {}),
      ...(newTags !== undefined ? { tags: newTags } : {}),
      acl: acl ?? '',
    });
    // Rewritten in place (no new version), the object still counts as copied, as S3 reports it.
    await publishAfter(ctx, 'ObjectCreated:Copy', info, 'copy');
    sendXml(ctx, 200, 'CopyObjectResult', { ETag: quoteEtag(info.etag), LastModified: info.modTime, ...checksumXml(info.checksum, false) }, {
      ...versionHeaders(info),
      'x-amz-copy-source-version-id': srcInfo.versionId,
    });
    return;
  }

  if (srcInfo.size > MAX_PUT_SIZE) {
    throw new SvcError('InvalidRequest', 'The specified copy source is larger than the maximum allowable size for a copy source: 5368709120.');
  }
  const got = await ctx.layer.getObject(src.bucket, src.key, { versionId: srcInfo.versionId, ...(srcKey ? { sseCustomerKey: srcKey.key } : {}) });
  // keep a whole-object checksum of the same algorithm, or compute the one asked for
  const alg = requestedAlg ?? srcInfo.checksum?.algorithm;
  const data = streamPutData(got.body, got.info.size, alg);
  const opts: PutObjectOptions = {
    storageClass: storageClass ?? srcInfo.storageClass,
    userMeta: newMeta ?? srcInfo.userMeta,
    contentHeaders: newHeaders ?? srcInfo.contentHeaders,
    tags: newTags ?? srcInfo.tags,
    ...(acl ? { acl } : {}),
    ...(destSse ? { sse: destSse } : {}),
    ...(destLock ? { lock: destLock } : {}),
  };
  if (destPre) opts.preconditions = destPre;
  opts.origin = ctx.origin('copy');
  let info: ObjectInfo;
  try {
    info = await underQuota(ctx, ctx.ep.bucket, got.info.size, () => ctx.layer.putObject(ctx.ep.bucket, ctx.ep.key, data, opts));
  } finally {
    got.body.destroy();
  }
  sendXml(ctx, 200, 'CopyObjectResult', { ETag: quoteEtag(info.etag), LastModified: info.modTime, ...checksumXml(info.checksum, false) }, {
    ...versionHeaders(info),
    'x-amz-copy-source-version-id': srcInfo.versionId,
    ...sseResponseHeaders(info.sse, customerKey(ctx.req)),
  });
}

// ============ GetObjectAttributes ============

const ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'];

export async function handleGetObjectAttributes(ctx: S3Context): Promise<void> {
  const raw = hdr(ctx.req, 'x-amz-object-attributes');
  if (!raw) throw new SvcError('InvalidArgument', 'The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty.');
  const wanted = new Set(raw.split(',').map((s) => s.trim()));
  for (const w of wanted) if (!ATTRIBUTES.includes(w)) throw new SvcError('InvalidArgument', `Invalid attribute name specified: ${w}.`);
  const versionId = versionIdParam(ctx);
  const key = readCustomerKey(ctx.req);
  const info = await withDeleteMarkerHeaders(ctx, () =>
    ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, { ...(versionId ? { versionId } : {}), ...(key ? { sseCustomerKey: key.key } : {}) }),
  );
  requireCustomerKey(info, key);
  const maxParts = Math.min(Number(hdr(ctx.req, 'x-amz-max-parts') ?? 1000) || 1000, 1000);
  const marker = Number(hdr(ctx.req, 'x-amz-part-number-marker') ?? 0) || 0;
  const body: XmlNode = {};
  if (wanted.has('ETag')) body.ETag = info.etag;
  if (wanted.has('Checksum') && info.checksum) body.Checksum = checksumXml(info.checksum);
  const multipart = /-\d+$/.test(info.etag);
  if (wanted.has('ObjectParts') && multipart) {
    const after = info.parts.filter((p) => p.number > marker);
    const page = after.slice(0, maxParts);
    body.ObjectParts = {
      PartsCount: info.parts.length,
      PartNumberMarker: marker,
      NextPartNumberMarker: page.length > 0 ? page[page.length - 1]!.number : marker,
      MaxParts: maxParts,
      IsTruncated: after.length > page.length,
      Part: page.map((p) => ({ PartNumber: p.number, Size: p.size, ...checksumXml(p.checksum, false) })),
    };
  }
  if (wanted.has('StorageClass')) body.StorageClass = info.storageClass;
  if (wanted.has('ObjectSize')) body.ObjectSize = info.size;
  sendXml(ctx, 200, 'GetObjectAttributesResponse', body, { 'last-modified': info.modTime.toUTCString(), ...versionHeaders(info) });
}

/**
 * Multipart uploads: Create, UploadPart, UploadPartCopy, Complete, Abort,
 * ListParts, ListMultipartUploads.
 */
import { replicaRequest } from '../replica-headers.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChecksumAlgorithm, ChecksumType, CompletePart, ObjectChecksum, ObjectInfo, PartInfo, SseInfo } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { CHECKSUM_ALGORITHMS, checksumHeaderName, compositeChecksum, fullObjectChecksum, parseChecksumAlgorithm, supportsFullObject } from '../checksum.ts';
import { owner, quoteEtag, type S3Context, sendEmpty, sendXml, underQuota, unquoteEtag } from '../context.ts';
import { hdr } from '../headers.ts';
import { buildPutData, checkChecksumValue, MAX_OBJECT_SIZE, MAX_PUT_SIZE, readSmallBody, streamPutData } from '../put-data.ts';
import type { S3Endpoint } from '../router.ts';
import {
  checkPreconditions,
  MAX_PARTS,
  MIN_PART_SIZE,
  normaliseTags,
  parseContentHeaders,
  parseLimit,
  parsePreconditions,
  parseRange,
  parseStorageClass,
  parseUserMeta,
} from '../validate.ts';
import { parseXml, type XmlNode, xmlList, xmlText } from '../xml.ts';
import { requestedObjectAcl } from './acl.ts';
import { checksumXml, parseCopySource } from './objects.ts';
import { requestedLock } from './object-lock.ts';
import { customerKey, requestedSse, requireCustomerKey, sseResponseHeaders } from '../sse-headers.ts';
import { MAX_OBJECT_TAGS } from './tagging.ts';

type Ctx<N extends S3Endpoint['op']> = S3Context<Extract<S3Endpoint, { op: N }>>;

function checksumTypeHeader(v: string | undefined): ChecksumType | undefined {
  if (v === undefined) return undefined;
  const u = v.toUpperCase();
  if (u === 'COMPOSITE' || u === 'FULL_OBJECT') return u;
  throw new SvcError('InvalidRequest', `Value for x-amz-checksum-type header is invalid: ${v}.`);
}

export async function handleCreateMultipartUpload(ctx: S3Context): Promise<void> {
  const req = ctx.req;
  const acl = await requestedObjectAcl(ctx);
  const sse = requestedSse(req);
  const lock = requestedLock(req);
  const storageClass = parseStorageClass(req);
  const algRaw = hdr(req, 'x-amz-checksum-algorithm');
  const algorithm = algRaw !== undefined ? parseChecksumAlgorithm(algRaw) : undefined;
  if (algRaw !== undefined && !algorithm) throw new SvcError('InvalidRequest', `Checksum algorithm provided is unsupported: ${algRaw}.`);
  let type = checksumTypeHeader(hdr(req, 'x-amz-checksum-type'));
  if (type && !algorithm) throw new SvcError('InvalidRequest', 'x-amz-checksum-type requires x-amz-checksum-algorithm.');
  if (algorithm && !type) type = algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE';
  if (algorithm && type === 'FULL_OBJECT' && !supportsFullObject(algorithm)) {
    throw new SvcError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with the ${algorithm} checksum algorithm.`);
  }
  if (algorithm === 'CRC64NVME' && type === 'COMPOSITE') {
    throw new SvcError('InvalidRequest', 'The COMPOSITE checksum type cannot be used with the CRC64NVME checksum algorithm.');
  }
  const tagging = hdr(req, 'x-amz-tagging');
  const replica = await replicaRequest(ctx, 's3:ReplicateObject');
  const upload = await ctx.layer.newMultipartUpload(ctx.ep.bucket, ctx.ep.key, {
    ...(replica ? { replica: true, ...(replica.versionId !== undefined ? { versionId: replica.versionId } : {}), ...(replica.modTime !== undefined ? { modTime: new Date(replica.modTime) } : {}) } : {}),
    contentHeaders: parseContentHeaders(req),
    userMeta: parseUserMeta(req),
    ...(storageClass ? { storageClass } : {}),
    ...(tagging !== undefined ? { tags: normaliseTags(tagging, MAX_OBJECT_TAGS) } : {}),
    ...(algorithm ? { checksumAlgorithm: algorithm, checksumType: type } : {}),
    ...(acl ? { acl } : {}),
    ...(sse ? { sse } : {}),
    ...(lock ? { lock } : {}),
  });
  const headers: Record<string, string> = sseResponseHeaders(upload.sse, customerKey(req));
  if (algorithm) {
    headers['x-amz-checksum-algorithm'] = algorithm;
    headers['x-amz-checksum-type'] = type!;
  }
  sendXml(ctx, 200, 'InitiateMultipartUploadResult', { Bucket: ctx.ep.bucket, Key: ctx.ep.key, UploadId: upload.uploadId }, headers);
}

/** The upload's algorithm (to compute part checksums when the client sends none) and encryption. */
async function uploadChecksum(ctx: S3Context, uploadId: string): Promise<{ alg?: ChecksumAlgorithm; type?: ChecksumType; sse?: SseInfo }> {
  const r = await ctx.layer.listObjectParts(ctx.ep.bucket, ctx.ep.key, uploadId, { maxParts: 1 });
  return { alg: r.upload.checksumAlgorithm, type: r.upload.checksumType, ...(r.upload.sse ? { sse: r.upload.sse } : {}) };
}

function partChecksumHeaders(c: ObjectChecksum | undefined): Record<string, string> {
  return c ? { [checksumHeaderName(c.algorithm)]: c.value } : {};
}

export async function handleUploadPart(ctx: Ctx<'UploadPart'>): Promise<void> {
  const { alg, sse } = await uploadChecksum(ctx, ctx.ep.uploadId);
  // An SSE-C upload takes the client's key with every part (checked against the upload's key).
  const key = customerKey(ctx.req);
  const data = buildPutData(ctx.req.headers, ctx.req, ctx.auth, {
    maxSize: MAX_PUT_SIZE,
    ...(alg ? { defaultChecksum: alg } : {}),
  });
  const part = await ctx.layer.putObjectPart(ctx.ep.bucket, ctx.ep.key, ctx.ep.uploadId, ctx.ep.partNumber, data, key ? { sseCustomerKey: key.key } : {});
  const c = part.checksum ?? data.checksum();
  if (alg && c && c.algorithm !== alg) {
    throw new SvcError('InvalidRequest', `Checksum Type mismatch occurred, expected checksum Type: ${alg.toLowerCase()}, actual checksum Type: ${c.algorithm.toLowerCase()}.`);
  }
  sendEmpty(ctx, 200, { etag: quoteEtag(part.etag), ...partChecksumHeaders(c), ...sseResponseHeaders(sse, key) });
}

export async function handleUploadPartCopy(ctx: Ctx<'UploadPartCopy'>): Promise<void> {
  const src = parseCopySource(ctx.ep.copySource);
  const pre = parsePreconditions(ctx.req, 'x-amz-copy-source-');
  const { alg, sse } = await uploadChecksum(ctx, ctx.ep.uploadId);
  const srcKey = customerKey(ctx.req, true);
  const destKey = customerKey(ctx.req);
  const srcInfo = await ctx.layer.getObjectInfo(src.bucket, src.key, { ...(src.versionId ? { versionId: src.versionId } : {}), ...(srcKey ? { sseCustomerKey: srcKey.key } : {}) });
  requireCustomerKey(srcInfo, srcKey);
  checkPreconditions(pre, srcInfo.etag, srcInfo.modTime, true);
  const rangeRaw = hdr(ctx.req, 'x-amz-copy-source-range');
  let start = 0;
  let end = srcInfo.size - 1;
  if (rangeRaw !== undefined) {
    const r = parseRange(rangeRaw);
    if (!r || !('start' in r) || r.end === undefined) {
      throw new SvcError('InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy.');
    }
    if (r.end >= srcInfo.size) throw new SvcError('InvalidRange', 'The x-amz-copy-source-range is outside the source object.');
    start = r.start;
    end = r.end;
  }
  const size = end - start + 1;
  if (size > MAX_PUT_SIZE) throw new SvcError('EntityTooLarge');
  const got = await ctx.layer.getObject(src.bucket, src.key, {
    versionId: srcInfo.versionId,
    ...(rangeRaw !== undefined && srcInfo.size > 0 ? { range: { start, end } } : {}),
    ...(srcKey ? { sseCustomerKey: srcKey.key } : {}),
  });
  const data = streamPutData(got.body, Math.max(0, size), alg, 'COMPOSITE');
  let part: PartInfo;
  try {
    part = await ctx.layer.putObjectPart(ctx.ep.bucket, ctx.ep.key, ctx.ep.uploadId, ctx.ep.partNumber, data, destKey ? { sseCustomerKey: destKey.key } : {});
  } finally {
    got.body.destroy();
  }
  const c = part.checksum ?? data.checksum();
  sendXml(ctx, 200, 'CopyPartResult', { ETag: quoteEtag(part.etag), LastModified: part.modTime, ...checksumXml(c, false) }, {
    ...(srcInfo.versionId !== 'null' ? { 'x-amz-copy-source-version-id': srcInfo.versionId } : {}),
    ...sseResponseHeaders(sse, destKey),
  });
}

/** All parts of an upload (paging through the object layer). */
async function allParts(ctx: S3Context, uploadId: string) {
  const parts: PartInfo[] = [];
  let marker = 0;
  for (;;) {
    const r = await ctx.layer.listObjectParts(ctx.ep.bucket, ctx.ep.key, uploadId, { partNumberMarker: marker, maxParts: 1000 });
    parts.push(...r.parts);
    if (!r.isTruncated || r.parts.length === 0) return { parts, upload: r.upload };
    marker = r.nextPartNumberMarker;
  }
}

/**
 * The headers that describe the Complete request's own body. Its
 * `x-amz-checksum-*` headers (and `x-amz-sdk-checksum-algorithm`) describe the
 * object being completed, never the XML document.
 */
function completeBodyHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith('x-amz-checksum-') && k !== 'x-amz-sdk-checksum-algorithm') out[k] = v;
  return out;
}

/** The object checksum a Complete request states: `x-amz-checksum-<alg>` (at most one). */
function statedObjectChecksum(ctx: S3Context): { algorithm: ChecksumAlgorithm; value: string } | undefined {
  const stated = CHECKSUM_ALGORITHMS.flatMap((a) => {
    const v = hdr(ctx.req, checksumHeaderName(a));
    return v === undefined ? [] : [{ algorithm: a, value: v.trim() }];
  });
  if (stated.length > 1) throw new SvcError('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  return stated[0];
}

export async function handleCompleteMultipartUpload(ctx: Ctx<'CompleteMultipartUpload'>): Promise<void> {
  const stated = statedObjectChecksum(ctx);
  const statedType = checksumTypeHeader(hdr(ctx.req, 'x-amz-checksum-type'));
  const sizeRaw = hdr(ctx.req, 'x-amz-mp-object-size');
  if (sizeRaw !== undefined && !/^\d{1,16}$/.test(sizeRaw.trim())) throw new SvcError('InvalidRequest', 'Value for x-amz-mp-object-size header is invalid.');
  const body = await readSmallBody(completeBodyHeaders(ctx.req.headers), ctx.req, ctx.auth, 4 * 1024 * 1024);
  const doc = parseXml(body, 'CompleteMultipartUpload');
  const requested = xmlList(doc, 'Part').map((p) => {
    const n = xmlText(p, 'PartNumber');
    const etag = xmlText(p, 'ETag');
    if (n === undefined || etag === undefined || !/^\d{1,5}$/.test(n)) throw new SvcError('MalformedXML', 'Every Part needs a PartNumber and an ETag.');
    const sums: Partial<Record<ChecksumAlgorithm, string>> = {};
    for (const alg of ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const) {
      const v = xmlText(p, `Checksum${alg}`);
      if (v !== undefined) sums[alg] = v;
    }
    return { number: Number(n), etag: unquoteEtag(etag), sums };
  });
  if (requested.length === 0) throw new SvcError('MalformedXML', 'You must specify at least one part.');
  if (requested.length > MAX_PARTS) throw new SvcError('InvalidArgument', `Part count must not exceed ${MAX_PARTS}.`);
  for (let i = 1; i < requested.length; i++) {
    if (requested[i]!.number <= requested[i - 1]!.number) throw new SvcError('InvalidPartOrder');
  }
  let listed: Awaited<ReturnType<typeof allParts>>;
  try {
    listed = await allParts(ctx, ctx.ep.uploadId);
  } catch (err) {
    const done = err instanceof SvcError && err.code === 'NoSuchUpload' ? await completedBefore(ctx, requested) : undefined;
    if (!done) throw err;
    sendCompleteResult(ctx, done, done.checksum);
    return;
  }
  const { parts, upload } = listed;
  const byNumber = new Map(parts.map((p) => [p.number, p]));
  const alg = upload.checksumAlgorithm;
  const type = upload.checksumType ?? 'COMPOSITE';
  const chosen: PartInfo[] = [];
  const complete: CompletePart[] = [];
  let total = 0;
  for (const [i, r] of requested.entries()) {
    const p = byNumber.get(r.number);
    if (!p || p.etag !== r.etag) throw new SvcError('InvalidPart', undefined, { partNumber: r.number });
    if (i < requested.length - 1 && p.size < MIN_PART_SIZE) {
      throw new SvcError('EntityTooSmall', `Part ${r.number} is ${p.size} bytes; every part but the last must be at least 5 MiB.`, { partNumber: r.number });
    }
    for (const [a, v] of Object.entries(r.sums)) {
      if (!p.checksum || p.checksum.algorithm !== a || p.checksum.value !== v) {
        throw new SvcError('InvalidPart', `The ${a} checksum of part ${r.number} does not match the uploaded part.`);
      }
    }
    if (alg && (!p.checksum || p.checksum.algorithm !== alg)) {
      throw new SvcError('InvalidPart', `Part ${r.number} has no ${alg} checksum, which this upload requires.`);
    }
    total += p.size;
    chosen.push(p);
    complete.push({ number: r.number, etag: r.etag, ...(p.checksum ? { checksum: p.checksum.value } : {}) });
  }
  if (total > MAX_OBJECT_SIZE) throw new SvcError('EntityTooLarge');
  if (sizeRaw !== undefined && Number(sizeRaw.trim()) !== total) {
    throw new SvcError('InvalidRequest', `The provided x-amz-mp-object-size (${sizeRaw.trim()}) does not match the size of the parts (${total}).`);
  }
  if (statedType !== undefined && alg && statedType !== type) {
    throw new SvcError('InvalidRequest', `The upload was created using the ${type} checksum type. The complete request must use the same checksum type.`);
  }
  if (stated && alg && stated.algorithm !== alg) {
    throw new SvcError('InvalidRequest', `The upload was created using the ${alg} checksum algorithm; the complete request names ${stated.algorithm}.`);
  }
  let expectedChecksum: ObjectChecksum | undefined;
  if (alg) {
    const value =
      type === 'FULL_OBJECT'
        ? fullObjectChecksum(alg, chosen.map((p) => ({ value: p.checksum!.value, size: p.size })))
        : compositeChecksum(alg, chosen.map((p) => p.checksum!.value));
    expectedChecksum = { algorithm: alg, value, type };
    // the whole-object value the client expects: a composite one with or without its `-<parts>`
    if (stated !== undefined) {
      const bare = stated.value.replace(/-\d+$/, '');
      checkChecksumValue(alg, bare, 'header');
      if (stated.value !== value && stated.value !== value.replace(/-\d+$/, '')) {
        throw new SvcError('BadDigest', `The ${alg} you specified for the multipart upload did not match the calculated checksum.`);
      }
    }
  }
  const ifNoneMatch = hdr(ctx.req, 'if-none-match');
  const ifMatch = hdr(ctx.req, 'if-match');
  const info = await underQuota(ctx, ctx.ep.bucket, total, () => ctx.layer.completeMultipartUpload(ctx.ep.bucket, ctx.ep.key, ctx.ep.uploadId, complete, {
    ...(ifNoneMatch !== undefined || ifMatch !== undefined
      ? { preconditions: { ...(ifNoneMatch !== undefined ? { ifNoneMatch } : {}), ...(ifMatch !== undefined ? { ifMatch } : {}) } }
      : {}),
    ...(expectedChecksum ? { checksum: expectedChecksum } : {}),
    origin: ctx.origin(),
  }));
  sendCompleteResult(ctx, info, info.checksum ?? expectedChecksum);
}

function sendCompleteResult(ctx: Ctx<'CompleteMultipartUpload'>, info: ObjectInfo, checksum: ObjectChecksum | undefined): void {
  const headers: Record<string, string> = sseResponseHeaders(info.sse, customerKey(ctx.req));
  if (info.versionId && info.versionId !== 'null') headers['x-amz-version-id'] = info.versionId;
  sendXml(
    ctx,
    200,
    'CompleteMultipartUploadResult',
    {
      Location: `/${ctx.ep.bucket}/${ctx.ep.key}`,
      Bucket: ctx.ep.bucket,
      Key: ctx.ep.key,
      ETag: quoteEtag(info.etag),
      ...checksumXml(checksum),
    },
    headers,
  );
}

/**
 * A CompleteMultipartUpload retried after it succeeded (the first answer was
 * lost) finds no upload. When the object's latest version is exactly the
 * requested part list (same numbers, same part ETags), that completion is the
 * one being retried: S3 answers 200 with the same ETag, and so do we.
 */
async function completedBefore(ctx: Ctx<'CompleteMultipartUpload'>, requested: { number: number; etag: string }[]): Promise<ObjectInfo | undefined> {
  const info = await ctx.layer.getObjectInfo(ctx.ep.bucket, ctx.ep.key, {}).catch(() => undefined);
  if (!info || !/-\d+$/.test(info.etag) || info.parts.length !== requested.length) return undefined;
  return info.parts.every((p, i) => p.number === requested[i]!.number && p.etag === requested[i]!.etag) ? info : undefined;
}

export async function handleAbortMultipartUpload(ctx: Ctx<'AbortMultipartUpload'>): Promise<void> {
  await ctx.layer.abortMultipartUpload(ctx.ep.bucket, ctx.ep.key, ctx.ep.uploadId);
  sendEmpty(ctx, 204);
}

export async function handleListParts(ctx: Ctx<'ListParts'>): Promise<void> {
  const q = ctx.ep.query;
  const maxParts = parseLimit(q.get('max-parts'), 'max-parts', 1000, 1000);
  const marker = parseLimit(q.get('part-number-marker'), 'part-number-marker', 0, MAX_PARTS);
  const r = await ctx.layer.listObjectParts(ctx.ep.bucket, ctx.ep.key, ctx.ep.uploadId, { partNumberMarker: marker, maxParts: Math.max(1, maxParts) });
  const parts = maxParts === 0 ? [] : r.parts;
  sendXml(ctx, 200, 'ListPartsResult', {
    Bucket: ctx.ep.bucket,
    Key: ctx.ep.key,
    UploadId: ctx.ep.uploadId,
    Initiator: owner(ctx),
    Owner: owner(ctx),
    StorageClass: r.upload.storageClass,
    PartNumberMarker: marker,
    NextPartNumberMarker: r.nextPartNumberMarker,
    MaxParts: maxParts,
    IsTruncated: maxParts === 0 ? r.parts.length > 0 : r.isTruncated,
    ...(r.upload.checksumAlgorithm ? { ChecksumAlgorithm: r.upload.checksumAlgorithm, ChecksumType: r.upload.checksumType } : {}),
    Part: parts.map((p) => ({
      PartNumber: p.number,
      LastModified: p.modTime,
      ETag: quoteEtag(p.etag),
      Size: p.size,
      ...checksumXml(p.checksum, false),
    })),
  });
}

export async function handleListMultipartUploads(ctx: S3Context): Promise<void> {
  const q = ctx.ep.query;
  const maxUploads = parseLimit(q.get('max-uploads'), 'max-uploads', 1000, 1000);
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const keyMarker = q.get('key-marker') ?? '';
  const uploadIdMarker = q.get('upload-id-marker') ?? '';
  const enc = q.get('encoding-type');
  if (enc !== undefined && enc.toLowerCase() !== 'url') throw new SvcError('InvalidArgument', 'Invalid Encoding Method specified in Request.');
  const e = enc ? (s: string) => encodeURIComponent(s).replace(/%2F/g, '/') : (s: string) => s;
  const r = await ctx.layer.listMultipartUploads(ctx.ep.bucket, {
    ...(prefix ? { prefix } : {}),
    ...(delimiter ? { delimiter } : {}),
    ...(keyMarker ? { keyMarker } : {}),
    ...(uploadIdMarker ? { uploadIdMarker } : {}),
    maxUploads: Math.max(1, maxUploads),
  });
  const uploads: XmlNode[] = (maxUploads === 0 ? [] : r.uploads).map((u) => ({
    Key: e(u.name),
    UploadId: u.uploadId,
    Initiator: owner(ctx),
    Owner: owner(ctx),
    StorageClass: u.storageClass,
    Initiated: u.initiated,
    ...(u.checksumAlgorithm ? { ChecksumAlgorithm: u.checksumAlgorithm, ChecksumType: u.checksumType } : {}),
  }));
  sendXml(ctx, 200, 'ListMultipartUploadsResult', {
    Bucket: ctx.ep.bucket,
    KeyMarker: e(keyMarker),
    UploadIdMarker: uploadIdMarker,
    ...(r.isTruncated && r.nextKeyMarker ? { NextKeyMarker: e(r.nextKeyMarker) } : {}),
    ...(r.isTruncated && r.nextUploadIdMarker ? { NextUploadIdMarker: r.nextUploadIdMarker } : {}),
    Prefix: e(prefix),
    ...(delimiter ? { Delimiter: e(delimiter) } : {}),
    MaxUploads: maxUploads,
    ...(enc ? { EncodingType: 'url' } : {}),
    IsTruncated: r.isTruncated,
    Upload: uploads,
    CommonPrefixes: r.prefixes.map((p) => ({ Prefix: e(p) })),
  });
}

/**
 * The S3 operations the console's bucket pages use, as typed calls over the
 * signed upstream: XML answers parsed with the S3 API's own hardened parser,
 * error answers turned into `UpstreamError` with the API's code and message.
 * Object bodies are never buffered: `getObject` hands back the upstream
 * response to be piped, uploads take the browser's request stream.
 */
import type { Readable } from 'node:stream';
import { parseXml, xmlList, xmlRawText, xmlText } from '../s3/xml.ts';
import { failure, failureOf, send } from './call.ts';
import { UpstreamError } from './console-errors.ts';
import type { SessionCredentials } from './sessions.ts';
import { encodePath, type Upstream, type UpstreamRequest, type UpstreamResponse, upstreamHeader } from './upstream.ts';
import type { BucketEntry, ObjectDetails, ObjectEntry, ObjectListing, ObjectVersion, VersionListing } from './wire.ts';

/** Sends and parses an XML answer rooted at `root`. */
async function xmlCall(up: Upstream, cred: SessionCredentials, r: UpstreamRequest, root: string): Promise<Record<string, unknown>> {
  const res = await send(up, cred, r);
  if (res.status >= 300) throw await failure(res);
  const text = await res.body.text();
  try {
    return parseXml(text, root);
  } catch {
    throw new UpstreamError(502, 'InternalError', `the node answered with an unreadable ${root} document`);
  }
}

/** Sends and expects an empty success. */
async function emptyCall(up: Upstream, cred: SessionCredentials, r: UpstreamRequest): Promise<UpstreamResponse> {
  const res = await send(up, cred, r);
  if (res.status >= 300) throw await failure(res);
  await res.body.text().catch(() => '');
  return res;
}

const bool = (v: string | undefined) => v === 'true';
const num = (v: string | undefined) => (v === undefined || v === '' ? 0 : Number(v));
/** Keys and prefixes come back `encoding-type=url` (XML cannot carry every character a key may hold). */
const dec = (v: string | undefined) => (v === undefined ? '' : decodeURIComponent(v.replace(/\+/g, '%20')));
const etagOf = (v: string | undefined) => (v ?? '').replace(/^"|"$/g, '');

export async function listBuckets(up: Upstream, cred: SessionCredentials): Promise<BucketEntry[]> {
  const out: BucketEntry[] = [];
  let token = '';
  for (;;) {
    const doc = await xmlCall(up, cred, { method: 'GET', path: '/', query: { 'max-buckets': '1000', ...(token ? { 'continuation-token': token } : {}) } }, 'ListAllMyBucketsResult');
    const holder = (doc.Buckets ?? {}) as Record<string, unknown>;
    for (const b of xmlList(typeof holder === 'object' ? holder : {}, 'Bucket')) out.push({ name: xmlText(b, 'Name') ?? '', created: xmlText(b, 'CreationDate') ?? '' });
    token = xmlText(doc, 'ContinuationToken') ?? '';
    if (token === '') return out;
  }
}

export async function createBucket(up: Upstream, cred: SessionCredentials, bucket: string): Promise<void> {
  await emptyCall(up, cred, { method: 'PUT', path: encodePath(bucket) });
}

export async function deleteBucket(up: Upstream, cred: SessionCredentials, bucket: string): Promise<void> {
  await emptyCall(up, cred, { method: 'DELETE', path: encodePath(bucket) });
}

export async function getVersioning(up: Upstream, cred: SessionCredentials, bucket: string): Promise<'Enabled' | 'Suspended' | 'Unversioned'> {
  const doc = await xmlCall(up, cred, { method: 'GET', path: encodePath(bucket), query: { versioning: '' } }, 'VersioningConfiguration');
  const s = xmlText(doc, 'Status');
  return s === 'Enabled' || s === 'Suspended' ? s : 'Unversioned';
}

export async function putVersioning(up: Upstream, cred: SessionCredentials, bucket: string, enabled: boolean): Promise<void> {
  const body = `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>${enabled ? 'Enabled' : 'Suspended'}</Status></VersioningConfiguration>`;
  await emptyCall(up, cred, { method: 'PUT', path: encodePath(bucket), query: { versioning: '' }, headers: { 'content-type': 'application/xml' }, body });
}

/** One page of a bucket's listing at `prefix`, folders (common prefixes) apart. */
export async function listObjects(up: Upstream, cred: SessionCredentials, bucket: string, o: { prefix: string; token: string; maxKeys: number }): Promise<ObjectListing> {
  const doc = await xmlCall(
    up,
    cred,
    {
      method: 'GET',
      path: encodePath(bucket),
      query: { 'list-type': '2', delimiter: '/', 'encoding-type': 'url', 'max-keys': String(o.maxKeys), prefix: o.prefix, ...(o.token ? { 'continuation-token': o.token } : {}) },
    },
    'ListBucketResult',
  );
  const objects: ObjectEntry[] = xmlList(doc, 'Contents').map((c) => ({
    key: dec(xmlRawText(c, 'Key')),
    size: num(xmlText(c, 'Size')),
    lastModified: xmlText(c, 'LastModified') ?? '',
    etag: etagOf(xmlText(c, 'ETag')),
    storageClass: xmlText(c, 'StorageClass') ?? 'STANDARD',
  }));
  const prefixes = xmlList(doc, 'CommonPrefixes').map((p) => dec(xmlRawText(p, 'Prefix')));
  const truncated = bool(xmlText(doc, 'IsTruncated'));
  return { bucket, prefix: o.prefix, prefixes, objects, truncated, nextToken: truncated ? (xmlText(doc, 'NextContinuationToken') ?? '') : '' };
}

/** Every version and delete marker of one key (newest first), a page at a time. */
export async function listVersions(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  key: string,
  o: { keyMarker: string; versionIdMarker: string; maxKeys: number },
): Promise<VersionListing> {
  const doc = await xmlCall(
    up,
    cred,
    {
      method: 'GET',
      path: encodePath(bucket),
      query: {
        versions: '',
        'encoding-type': 'url',
        prefix: key,
        'max-keys': String(o.maxKeys),
        ...(o.keyMarker ? { 'key-marker': o.keyMarker } : {}),
        ...(o.versionIdMarker ? { 'version-id-marker': o.versionIdMarker } : {}),
      },
    },
    'ListVersionsResult',
  );
  const entry = (v: Record<string, unknown>, deleteMarker: boolean): ObjectVersion => ({
    key: dec(xmlRawText(v, 'Key')),
    versionId: xmlText(v, 'VersionId') ?? 'null',
    isLatest: bool(xmlText(v, 'IsLatest')),
    lastModified: xmlText(v, 'LastModified') ?? '',
    deleteMarker,
    size: deleteMarker ? 0 : num(xmlText(v, 'Size')),
    etag: deleteMarker ? '' : etagOf(xmlText(v, 'ETag')),
  });
  const all = [...xmlList(doc, 'Version').map((v) => entry(v, false)), ...xmlList(doc, 'DeleteMarker').map((v) => entry(v, true))];
  // the API lists versions and delete markers apart; within a key, newest first
  all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : b.lastModified.localeCompare(a.lastModified) || Number(b.isLatest) - Number(a.isLatest)));
  const truncated = bool(xmlText(doc, 'IsTruncated'));
  return {
    bucket,
    key,
    versions: all.filter((v) => v.key === key),
    truncated,
    nextKeyMarker: truncated ? dec(xmlRawText(doc, 'NextKeyMarker')) : '',
    nextVersionIdMarker: truncated ? (xmlText(doc, 'NextVersionIdMarker') ?? '') : '',
  };
}

const versionQuery = (versionId: string | undefined): Record<string, string> => (versionId ? { versionId } : {});

export async function headObject(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId?: string): Promise<ObjectDetails> {
  const res = await send(up, cred, { method: 'HEAD', path: encodePath(bucket, key), query: versionQuery(versionId) });
  if (res.status >= 300) {
    const err = await failure(res);
    if (res.status === 405 && upstreamHeader(res.headers, 'x-amz-delete-marker') === 'true') throw new UpstreamError(404, 'NoSuchKey', 'this version is a delete marker: the object was deleted');
    throw err;
  }
  await res.body.text().catch(() => '');
  const h = (n: string) => upstreamHeader(res.headers, n);
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (k.startsWith('x-amz-meta-') && v !== undefined) metadata[k.slice('x-amz-meta-'.length)] = Array.isArray(v) ? v.join(', ') : v;
  const checksums: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (k.startsWith('x-amz-checksum-') && k !== 'x-amz-checksum-type' && typeof v === 'string') checksums[k.slice('x-amz-checksum-'.length)] = v;
  return {
    bucket,
    key,
    size: num(h('content-length')),
    contentType: h('content-type') ?? '',
    etag: etagOf(h('etag')),
    lastModified: h('last-modified') ? new Date(h('last-modified')!).toISOString() : '',
    versionId: h('x-amz-version-id') ?? '',
    storageClass: h('x-amz-storage-class') ?? 'STANDARD',
    cacheControl: h('cache-control') ?? '',
    contentDisposition: h('content-disposition') ?? '',
    contentEncoding: h('content-encoding') ?? '',
    metadata,
    checksums,
  };
}

export async function deleteObject(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId?: string): Promise<{ deleteMarker: boolean; versionId: string }> {
  const res = await emptyCall(up, cred, { method: 'DELETE', path: encodePath(bucket, key), query: versionQuery(versionId) });
  return { deleteMarker: upstreamHeader(res.headers, 'x-amz-delete-marker') === 'true', versionId: upstreamHeader(res.headers, 'x-amz-version-id') ?? '' };
}

/** The object's body as the API answers it (the caller streams it and must consume or destroy it). */
export async function getObject(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  key: string,
  o: { versionId?: string | undefined; range?: string | undefined; signal: AbortSignal },
): Promise<UpstreamResponse> {
  const res = await send(up, cred, { method: 'GET', path: encodePath(bucket, key), query: versionQuery(o.versionId), headers: o.range ? { range: o.range } : {}, signal: o.signal });
  if (res.status >= 300) throw await failure(res);
  return res;
}

export interface UploadBody {
  readonly stream: Readable;
  readonly length: number;
  readonly contentType: string;
  readonly signal: AbortSignal;
}

/** Streams an upload to PutObject; answers its ETag and version. */
export async function putObject(up: Upstream, cred: SessionCredentials, bucket: string, key: string, b: UploadBody): Promise<{ etag: string; versionId: string }> {
  const res = await emptyCall(up, cred, {
    method: 'PUT',
    path: encodePath(bucket, key),
    headers: { 'content-length': String(b.length), 'content-type': b.contentType },
    body: b.stream,
    signal: b.signal,
  });
  return { etag: etagOf(upstreamHeader(res.headers, 'etag')), versionId: upstreamHeader(res.headers, 'x-amz-version-id') ?? '' };
}

export async function createMultipart(up: Upstream, cred: SessionCredentials, bucket: string, key: string, contentType: string): Promise<string> {
  const doc = await xmlCall(up, cred, { method: 'POST', path: encodePath(bucket, key), query: { uploads: '' }, headers: { 'content-type': contentType } }, 'InitiateMultipartUploadResult');
  const id = xmlText(doc, 'UploadId');
  if (!id) throw new UpstreamError(502, 'InternalError', 'the node started an upload without an upload id');
  return id;
}

export async function uploadPart(up: Upstream, cred: SessionCredentials, bucket: string, key: string, uploadId: string, part: number, b: Omit<UploadBody, 'contentType'>): Promise<string> {
  const res = await emptyCall(up, cred, {
    method: 'PUT',
    path: encodePath(bucket, key),
    query: { partNumber: String(part), uploadId },
    headers: { 'content-length': String(b.length) },
    body: b.stream,
    signal: b.signal,
  });
  return etagOf(upstreamHeader(res.headers, 'etag'));
}

export async function completeMultipart(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  key: string,
  uploadId: string,
  parts: readonly { part: number; etag: string }[],
): Promise<{ etag: string; versionId: string }> {
  const body = `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${parts.map((p) => `<Part><PartNumber>${p.part}</PartNumber><ETag>"${p.etag.replace(/[^0-9a-fA-F-]/g, '')}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
  const res = await send(up, cred, { method: 'POST', path: encodePath(bucket, key), query: { uploadId }, headers: { 'content-type': 'application/xml' }, body, signal: AbortSignal.timeout(300_000) });
  if (res.status >= 300) throw await failure(res);
  const text = await res.body.text();
  // S3 may report a failure inside a 200 answer
  if (text.includes('<Error')) throw failureOf(500, undefined, text);
  const doc = parseXml(text, 'CompleteMultipartUploadResult');
  return { etag: etagOf(xmlText(doc, 'ETag')), versionId: upstreamHeader(res.headers, 'x-amz-version-id') ?? '' };
}

export async function abortMultipart(up: Upstream, cred: SessionCredentials, bucket: string, key: string, uploadId: string): Promise<void> {
  await emptyCall(up, cred, { method: 'DELETE', path: encodePath(bucket, key), query: { uploadId } });
}

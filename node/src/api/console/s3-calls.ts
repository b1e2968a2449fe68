/**
 * The S3 operations the console's bucket pages use, as typed calls over the
 * signed upstream: XML answers parsed with the S3 API's own hardened parser,
 * error answers turned into `UpstreamError` with the API's code and message.
 * Object bodies are never buffered: `getObject` hands back the upstream
 * response to be piped, uploads take the browser's request stream.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { headerText } from '../s3/headers.ts';
import { parseXml, toXml, xmlList, xmlRawText, xmlText } from '../s3/xml.ts';
import { failure, failureOf, send } from './call.ts';
import { UpstreamError } from './console-errors.ts';
import type { SessionCredentials } from './sessions.ts';
import { encodePath, type Upstream, type UpstreamRequest, type UpstreamResponse, upstreamHeader } from './upstream.ts';
import type { BucketEntry, BulkDeleteResult, ObjectDetails, ObjectEntry, ObjectListing, ObjectLockView, ObjectVersion, VersionListing, VersionsPage } from './wire.ts';

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

export async function createBucket(up: Upstream, cred: SessionCredentials, bucket: string, o: { objectLock?: boolean } = {}): Promise<void> {
  await emptyCall(up, cred, { method: 'PUT', path: encodePath(bucket), ...(o.objectLock ? { headers: { 'x-amz-bucket-object-lock-enabled': 'true' } } : {}) });
}

/** HeadBucket: `exists` (this identity may use it), `missing`, or `forbidden` (it exists, owned or guarded by someone else). */
export async function bucketState(up: Upstream, cred: SessionCredentials, bucket: string): Promise<'exists' | 'missing' | 'forbidden'> {
  const res = await send(up, cred, { method: 'HEAD', path: encodePath(bucket) });
  await res.body.text().catch(() => '');
  if (res.status < 300) return 'exists';
  if (res.status === 404) return 'missing';
  if (res.status === 403) return 'forbidden';
  throw failureOf(res.status, upstreamHeader(res.headers, 'x-svc-readiness-pending'), '');
}

/** The bucket's object lock configuration (`enabled: false` for a bucket without object lock). */
export async function getObjectLock(up: Upstream, cred: SessionCredentials, bucket: string): Promise<ObjectLockView> {
  const res = await send(up, cred, { method: 'GET', path: encodePath(bucket), query: { 'object-lock': '' } });
  if (res.status === 404) {
    const err = await failure(res);
    if (err.code === 'ObjectLockConfigurationNotFoundError') return { enabled: false, rule: null };
    throw err;
  }
  if (res.status >= 300) throw await failure(res);
  const doc = parseXml(await res.body.text(), 'ObjectLockConfiguration');
  const enabled = xmlText(doc, 'ObjectLockEnabled') === 'Enabled';
  const rule = (doc.Rule as Record<string, unknown> | undefined)?.DefaultRetention as Record<string, unknown> | undefined;
  const mode = rule === undefined ? undefined : xmlText(rule, 'Mode');
  if (rule === undefined || (mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE')) return { enabled, rule: null };
  const days = xmlText(rule, 'Days');
  const years = xmlText(rule, 'Years');
  return { enabled, rule: { mode, ...(days !== undefined ? { days: Number(days) } : {}), ...(years !== undefined ? { years: Number(years) } : {}) } };
}

/** A version's retention (null: none) and legal hold, as GetObjectRetention / GetObjectLegalHold answer. */
export async function objectLockState(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId: string | undefined): Promise<{ retention: ObjectDetails['retention']; legalHold: boolean }> {
  const get = async (sub: string, root: string): Promise<Record<string, unknown> | undefined> => {
    const res = await send(up, cred, { method: 'GET', path: encodePath(bucket, key), query: { [sub]: '', ...versionQuery(versionId) } });
    if (res.status === 404) {
      await res.body.text().catch(() => '');
      return undefined;
    }
    if (res.status >= 300) throw await failure(res);
    return parseXml(await res.body.text(), root);
  };
  const [r, l] = await Promise.all([get('retention', 'Retention'), get('legal-hold', 'LegalHold')]);
  const mode = r === undefined ? undefined : xmlText(r, 'Mode');
  const until = r === undefined ? undefined : xmlText(r, 'RetainUntilDate');
  return {
    retention: (mode === 'GOVERNANCE' || mode === 'COMPLIANCE') && until !== undefined ? { mode, until: new Date(until).toISOString() } : null,
    legalHold: l !== undefined && xmlText(l, 'Status') === 'ON',
  };
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
export async function listObjects(up: Upstream, cred: SessionCredentials, bucket: string, o: { prefix: string; token: string; maxKeys: number; recursive?: boolean }): Promise<ObjectListing> {
  const doc = await xmlCall(
    up,
    cred,
    {
      method: 'GET',
      path: encodePath(bucket),
      query: { 'list-type': '2', ...(o.recursive ? {} : { delimiter: '/' }), 'encoding-type': 'url', 'max-keys': String(o.maxKeys), prefix: o.prefix, ...(o.token ? { 'continuation-token': o.token } : {}) },
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

const versionEntry = (v: Record<string, unknown>, deleteMarker: boolean): ObjectVersion => ({
  key: dec(xmlRawText(v, 'Key')),
  versionId: xmlText(v, 'VersionId') ?? 'null',
  isLatest: bool(xmlText(v, 'IsLatest')),
  lastModified: xmlText(v, 'LastModified') ?? '',
  deleteMarker,
  size: deleteMarker ? 0 : num(xmlText(v, 'Size')),
  etag: deleteMarker ? '' : etagOf(xmlText(v, 'ETag')),
});

/** Names in order, and within a name newest first (the API lists versions and delete markers apart). */
function byKeyNewestFirst(a: ObjectVersion, b: ObjectVersion): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : b.lastModified.localeCompare(a.lastModified) || Number(b.isLatest) - Number(a.isLatest);
}

/** One page of every version and delete marker at a folder level (`prefix`, delimiter `/`). */
export async function listVersionsPage(up: Upstream, cred: SessionCredentials, bucket: string, o: { prefix: string; keyMarker: string; versionIdMarker: string; maxKeys: number; recursive?: boolean }): Promise<VersionsPage> {
  const doc = await xmlCall(
    up,
    cred,
    {
      method: 'GET',
      path: encodePath(bucket),
      query: {
        versions: '',
        ...(o.recursive ? {} : { delimiter: '/' }),
        'encoding-type': 'url',
        prefix: o.prefix,
        'max-keys': String(o.maxKeys),
        ...(o.keyMarker ? { 'key-marker': o.keyMarker } : {}),
        ...(o.versionIdMarker ? { 'version-id-marker': o.versionIdMarker } : {}),
      },
    },
    'ListVersionsResult',
  );
  const versions = [...xmlList(doc, 'Version').map((v) => versionEntry(v, false)), ...xmlList(doc, 'DeleteMarker').map((v) => versionEntry(v, true))].sort(byKeyNewestFirst);
  const truncated = bool(xmlText(doc, 'IsTruncated'));
  return {
    bucket,
    prefix: o.prefix,
    prefixes: xmlList(doc, 'CommonPrefixes').map((p) => dec(xmlRawText(p, 'Prefix'))),
    versions,
    truncated,
    nextKeyMarker: truncated ? dec(xmlRawText(doc, 'NextKeyMarker')) : '',
    nextVersionIdMarker: truncated ? (xmlText(doc, 'NextVersionIdMarker') ?? '') : '',
  };
}

/** Every version and delete marker of one key (newest first), a page at a time: the page under the key as a prefix, other keys left out. */
export async function listVersions(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  key: string,
  o: { keyMarker: string; versionIdMarker: string; maxKeys: number },
): Promise<VersionListing> {
  const page = await listVersionsPage(up, cred, bucket, { ...o, prefix: key, recursive: true });
  return {
    bucket,
    key,
    versions: page.versions.filter((v) => v.key === key),
    truncated: page.truncated,
    nextKeyMarker: page.nextKeyMarker,
    nextVersionIdMarker: page.nextVersionIdMarker,
  };
}

const versionQuery = (versionId: string | undefined): Record<string, string> => (versionId ? { versionId } : {});

export async function headObject(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId?: string): Promise<ObjectDetails> {
  const res = await send(up, cred, { method: 'HEAD', path: encodePath(bucket, key), query: versionQuery(versionId) });
  if (res.status >= 300) {
    const err = await failure(res);
    if (upstreamHeader(res.headers, 'x-amz-delete-marker') === 'true') {
      throw new UpstreamError(404, 'NoSuchKey', versionId ? 'this version is a delete marker: the object was deleted' : 'its latest version is a delete marker: the object was deleted');
    }
    if (res.status === 404) throw new UpstreamError(404, 'NoSuchKey', versionId ? 'there is no such version of this object' : 'there is no object under this name');
    throw err;
  }
  await res.body.text().catch(() => '');
  const h = (n: string) => upstreamHeader(res.headers, n);
  const metadata: Record<string, string> = {};
  // header bytes arrive one per character; text a client wrote in UTF-8 (boto3 does) reads as that text
  for (const [k, v] of Object.entries(res.headers)) if (k.startsWith('x-amz-meta-') && v !== undefined) metadata[k.slice('x-amz-meta-'.length)] = headerText(Array.isArray(v) ? v.join(', ') : v);
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
    ...lockOf(h),
  };
}

/** Object lock headers of a HEAD answer (each shown only when the identity may read it). */
function lockOf(h: (n: string) => string | undefined): Pick<ObjectDetails, 'retention' | 'legalHold'> {
  const mode = h('x-amz-object-lock-mode');
  const until = h('x-amz-object-lock-retain-until-date');
  return {
    retention: (mode === 'GOVERNANCE' || mode === 'COMPLIANCE') && until !== undefined ? { mode, until: new Date(until).toISOString() } : null,
    legalHold: h('x-amz-object-lock-legal-hold') === 'ON',
  };
}

export async function deleteObject(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId?: string, o: { bypassGovernance?: boolean } = {}): Promise<{ deleteMarker: boolean; versionId: string }> {
  const res = await emptyCall(up, cred, { method: 'DELETE', path: encodePath(bucket, key), query: versionQuery(versionId), ...(o.bypassGovernance ? { headers: { 'x-amz-bypass-governance-retention': 'true' } } : {}) });
  return { deleteMarker: upstreamHeader(res.headers, 'x-amz-delete-marker') === 'true', versionId: upstreamHeader(res.headers, 'x-amz-version-id') ?? '' };
}

export type ObjectResponse = UpstreamResponse;

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

// ---- bulk and per-object settings

/** DeleteObjects (up to 1000 keys or versions at once): what was deleted and what was refused, each with the API's code. */
export async function deleteObjects(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  objects: readonly { key: string; versionId?: string | undefined }[],
  o: { bypassGovernance?: boolean } = {},
): Promise<BulkDeleteResult> {
  const body = toXml('Delete', { Quiet: false, Object: objects.map((x) => ({ Key: x.key, ...(x.versionId ? { VersionId: x.versionId } : {}) })) });
  const md5 = createHash('md5').update(body).digest('base64');
  const doc = await xmlCall(
    up,
    cred,
    { method: 'POST', path: encodePath(bucket), query: { delete: '' }, headers: { 'content-type': 'application/xml', 'content-md5': md5, ...(o.bypassGovernance ? { 'x-amz-bypass-governance-retention': 'true' } : {}) }, body, signal: AbortSignal.timeout(300_000) },
    'DeleteResult',
  );
  return {
    deleted: xmlList(doc, 'Deleted').map((d) => ({ key: xmlRawText(d, 'Key') ?? '', versionId: xmlText(d, 'VersionId') ?? '', deleteMarker: bool(xmlText(d, 'DeleteMarker')) })),
    errors: xmlList(doc, 'Error').map((e) => ({ key: xmlRawText(e, 'Key') ?? '', versionId: xmlText(e, 'VersionId') ?? '', code: xmlText(e, 'Code') ?? '', message: xmlRawText(e, 'Message') ?? '' })),
  };
}

/** Copies a version over the current one (CopyObject from `?versionId=`): the restored content becomes the newest version. */
export async function restoreVersion(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId: string): Promise<{ versionId: string }> {
  const source = `${encodePath(bucket, key)}?versionId=${encodeURIComponent(versionId)}`;
  const res = await send(up, cred, { method: 'PUT', path: encodePath(bucket, key), headers: { 'x-amz-copy-source': source, 'x-amz-metadata-directive': 'COPY', 'x-amz-tagging-directive': 'COPY' }, signal: AbortSignal.timeout(600_000) });
  if (res.status >= 300) throw await failure(res);
  const text = await res.body.text();
  if (text.includes('<Error')) throw failureOf(500, undefined, text);
  return { versionId: upstreamHeader(res.headers, 'x-amz-version-id') ?? '' };
}

export async function getObjectTags(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId?: string): Promise<{ key: string; value: string }[]> {
  const doc = await xmlCall(up, cred, { method: 'GET', path: encodePath(bucket, key), query: { tagging: '', ...versionQuery(versionId) } }, 'Tagging');
  const set = (doc.TagSet ?? {}) as Record<string, unknown>;
  return xmlList(typeof set === 'object' ? set : {}, 'Tag').map((t) => ({ key: xmlRawText(t, 'Key') ?? '', value: xmlRawText(t, 'Value') ?? '' }));
}

export async function putObjectTags(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId: string | undefined, tags: readonly { key: string; value: string }[]): Promise<void> {
  const body = toXml('Tagging', { TagSet: { Tag: tags.map((t) => ({ Key: t.key, Value: t.value })) } });
  await emptyCall(up, cred, { method: 'PUT', path: encodePath(bucket, key), query: { tagging: '', ...versionQuery(versionId) }, headers: { 'content-type': 'application/xml' }, body });
}

export async function putLegalHold(up: Upstream, cred: SessionCredentials, bucket: string, key: string, versionId: string | undefined, on: boolean): Promise<void> {
  const body = toXml('LegalHold', { Status: on ? 'ON' : 'OFF' });
  const md5 = createHash('md5').update(body).digest('base64');
  await emptyCall(up, cred, { method: 'PUT', path: encodePath(bucket, key), query: { 'legal-hold': '', ...versionQuery(versionId) }, headers: { 'content-type': 'application/xml', 'content-md5': md5 }, body });
}

/** Sets (mode and date) or removes (null) a version's retention; `bypassGovernance` for shortening or removing a GOVERNANCE one. */
export async function putRetention(
  up: Upstream,
  cred: SessionCredentials,
  bucket: string,
  key: string,
  versionId: string | undefined,
  retention: { mode: 'GOVERNANCE' | 'COMPLIANCE'; until: string } | null,
  bypassGovernance: boolean,
): Promise<void> {
  const body = retention === null ? toXml('Retention', {}) : toXml('Retention', { Mode: retention.mode, RetainUntilDate: retention.until });
  const md5 = createHash('md5').update(body).digest('base64');
  await emptyCall(up, cred, {
    method: 'PUT',
    path: encodePath(bucket, key),
    query: { retention: '', ...versionQuery(versionId) },
    headers: { 'content-type': 'application/xml', 'content-md5': md5, ...(bypassGovernance ? { 'x-amz-bypass-governance-retention': 'true' } : {}) },
    body,
  });
}

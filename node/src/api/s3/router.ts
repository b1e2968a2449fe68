/**
 * Request → typed endpoint. `parseEndpoint` is pure: it reads the method,
 * target, Host and a few headers and returns one member of `S3Endpoint` per
 * S3 operation, or throws the S3 error for an unroutable request.
 */
import { SvcError } from '../../util/errors.ts';
import { parseQuery, safeDecode, splitTarget } from './headers.ts';

export const MAX_KEY_BYTES = 1024;

export type Query = ReadonlyMap<string, string>;

interface Base {
  bucket: string;
  key: string;
  query: Query;
}

type Op<N extends string, Extra = unknown> = { op: N } & Base & Extra;
type Upload = { uploadId: string };
type Part = { uploadId: string; partNumber: number };

export type S3Endpoint =
  | Op<'ListBuckets'>
  | Op<'CreateBucket'>
  | Op<'HeadBucket'>
  | Op<'DeleteBucket'>
  | Op<'GetBucketLocation'>
  | Op<'GetBucketVersioning'>
  | Op<'PutBucketVersioning'>
  | Op<'GetBucketTagging'>
  | Op<'PutBucketTagging'>
  | Op<'DeleteBucketTagging'>
  | Op<'GetBucketAcl'>
  | Op<'PutBucketAcl'>
  | Op<'GetBucketPolicy'>
  | Op<'PutBucketPolicy'>
  | Op<'DeleteBucketPolicy'>
  | Op<'GetBucketPolicyStatus'>
  | Op<'GetBucketCors'>
  | Op<'PutBucketCors'>
  | Op<'DeleteBucketCors'>
  | Op<'GetBucketOwnershipControls'>
  | Op<'PutBucketOwnershipControls'>
  | Op<'DeleteBucketOwnershipControls'>
  | Op<'GetPublicAccessBlock'>
  | Op<'PutPublicAccessBlock'>
  | Op<'DeletePublicAccessBlock'>
  | Op<'GetObjectLockConfiguration'>
  | Op<'PutObjectLockConfiguration'>
  | Op<'GetBucketLifecycle'>
  | Op<'PutBucketLifecycle'>
  | Op<'DeleteBucketLifecycle'>
  | Op<'GetBucketEncryption'>
  | Op<'PutBucketEncryption'>
  | Op<'DeleteBucketEncryption'>
  | Op<'GetBucketNotificationConfiguration'>
  | Op<'PutBucketNotificationConfiguration'>
  | Op<'ListenBucketNotification'>
  | Op<'GetBucketReplication'>
  | Op<'GetBucketAccelerateConfiguration'>
  | Op<'GetBucketRequestPayment'>
  | Op<'GetBucketLogging'>
  | Op<'GetBucketWebsite'>
  | Op<'DeleteBucketWebsite'>
  | Op<'PutBucketReplication'>
  | Op<'DeleteBucketReplication'>
  | Op<'ListObjectsV1'>
  | Op<'ListObjectsV2'>
  | Op<'ListObjectVersions'>
  | Op<'ListMultipartUploads'>
  | Op<'DeleteObjects'>
  | Op<'PutObject'>
  | Op<'PostObject'>
  | Op<'CopyObject', { copySource: string }>
  | Op<'GetObject'>
  | Op<'HeadObject'>
  | Op<'DeleteObject'>
  | Op<'GetObjectTagging'>
  | Op<'PutObjectTagging'>
  | Op<'DeleteObjectTagging'>
  | Op<'GetObjectAcl'>
  | Op<'PutObjectAcl'>
  | Op<'GetObjectAttributes'>
  | Op<'GetObjectRetention'>
  | Op<'PutObjectRetention'>
  | Op<'GetObjectLegalHold'>
  | Op<'PutObjectLegalHold'>
  | Op<'CreateMultipartUpload'>
  | Op<'UploadPart', Part>
  | Op<'UploadPartCopy', Part & { copySource: string }>
  | Op<'CompleteMultipartUpload', Upload>
  | Op<'AbortMultipartUpload', Upload>
  | Op<'ListParts', Upload>;

export type S3Operation = S3Endpoint['op'];

/**
 * Bucket subresources S3 has and svc does not serve (answered NotImplemented, not mistaken for
 * listings). Four of them can still be read, answered as S3 answers a bucket that never had the
 * setting (no acceleration, the owner pays, no access logging, no website): tools that read every
 * setting of a bucket (infrastructure-as-code refreshes, S3 browsers) get an answer, and a PUT is
 * still NotImplemented.
 */
const UNSUPPORTED_SUBRESOURCES = [
  'website',
  'logging',
  'requestPayment',
  'accelerate',
  'intelligent-tiering',
  'analytics',
  'metrics',
  'inventory',
  'restore',
  'select',
  'torrent',
];

export interface RouteInput {
  method: string;
  url: string;
  host: string | undefined;
  copySource: string | undefined;
  /** Content-Type: a multipart/form-data POST to a bucket is a browser upload (POST Object). */
  contentType?: string | undefined;
}

/** Splits Host into the virtual-host bucket, if Host is `<bucket>.<domain>`. */
export function bucketFromHost(host: string | undefined, domains: readonly string[]): string | undefined {
  if (!host || domains.length === 0) return undefined;
  const h = host.replace(/:\d+$/, '').toLowerCase();
  for (const d of domains) {
    const dom = d.toLowerCase();
    if (h.endsWith(`.${dom}`)) return h.slice(0, -(dom.length + 1));
  }
  return undefined;
}

function partNumberOf(v: string | undefined): number {
  if (v === undefined || !/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 10000) {
    throw new SvcError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  }
  return Number(v);
}

/** The bucket and key a request target names (path style, or virtual-host style for `<bucket>.<domain>`). */
export function targetOf(url: string, host: string | undefined, domains: readonly string[] = []): { bucket: string; key: string } {
  const { path: rawPath } = splitTarget(url);
  if (!rawPath.startsWith('/')) throw new SvcError('InvalidRequest', 'The request target must be an absolute path.');
  const path = safeDecode(rawPath);
  const vhost = bucketFromHost(host, domains);
  if (vhost !== undefined) return { bucket: vhost, key: path.slice(1) };
  const slash = path.indexOf('/', 1);
  return { bucket: slash < 0 ? path.slice(1) : path.slice(1, slash), key: slash < 0 ? '' : path.slice(slash + 1) };
}

export function parseEndpoint(input: RouteInput, domains: readonly string[] = []): S3Endpoint {
  const { query: rawQuery } = splitTarget(input.url);
  const pairs = parseQuery(rawQuery);
  const query = new Map<string, string>();
  for (const [k, v] of pairs) if (!query.has(k)) query.set(k, v);
  const { bucket, key } = targetOf(input.url, input.host, domains);
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new SvcError('KeyTooLongError');
  if (key.includes('\u0000')) throw new SvcError('InvalidObjectName', 'Object names must not contain NUL characters.');
  const base: Base = { bucket, key, query };
  const m = input.method;
  const has = (k: string) => query.has(k);

  if (bucket === '') {
    // MinIO's listen on every bucket (`mc watch alias`).
    if (m === 'GET' && has('events')) return { op: 'ListenBucketNotification', ...base };
    if (m === 'GET') return { op: 'ListBuckets', ...base };
    throw new SvcError('MethodNotAllowed');
  }

  if (key === '') {
    if (m === 'GET') {
      if (has('accelerate')) return { op: 'GetBucketAccelerateConfiguration', ...base };
      if (has('requestPayment')) return { op: 'GetBucketRequestPayment', ...base };
      if (has('logging')) return { op: 'GetBucketLogging', ...base };
      if (has('website')) return { op: 'GetBucketWebsite', ...base };
    }
    if (m === 'DELETE' && has('website')) return { op: 'DeleteBucketWebsite', ...base };
    for (const sub of UNSUPPORTED_SUBRESOURCES) {
      if (has(sub)) throw new SvcError('NotImplemented', `The bucket subresource '${sub}' is not supported by this server.`);
    }
    switch (m) {
      case 'PUT':
        if (has('versioning')) return { op: 'PutBucketVersioning', ...base };
        if (has('tagging')) return { op: 'PutBucketTagging', ...base };
        if (has('acl')) return { op: 'PutBucketAcl', ...base };
        if (has('policy')) return { op: 'PutBucketPolicy', ...base };
        if (has('cors')) return { op: 'PutBucketCors', ...base };
        if (has('ownershipControls')) return { op: 'PutBucketOwnershipControls', ...base };
        if (has('publicAccessBlock')) return { op: 'PutPublicAccessBlock', ...base };
        if (has('object-lock')) return { op: 'PutObjectLockConfiguration', ...base };
        if (has('lifecycle')) return { op: 'PutBucketLifecycle', ...base };
        if (has('encryption')) return { op: 'PutBucketEncryption', ...base };
        if (has('notification')) return { op: 'PutBucketNotificationConfiguration', ...base };
        if (has('replication')) return { op: 'PutBucketReplication', ...base };
        return { op: 'CreateBucket', ...base };
      case 'HEAD':
        return { op: 'HeadBucket', ...base };
      case 'DELETE':
        if (has('tagging')) return { op: 'DeleteBucketTagging', ...base };
        if (has('policy')) return { op: 'DeleteBucketPolicy', ...base };
        if (has('cors')) return { op: 'DeleteBucketCors', ...base };
        if (has('ownershipControls')) return { op: 'DeleteBucketOwnershipControls', ...base };
        if (has('publicAccessBlock')) return { op: 'DeletePublicAccessBlock', ...base };
        if (has('lifecycle')) return { op: 'DeleteBucketLifecycle', ...base };
        if (has('encryption')) return { op: 'DeleteBucketEncryption', ...base };
        if (has('replication')) return { op: 'DeleteBucketReplication', ...base };
        if (has('object-lock')) throw new SvcError('MethodNotAllowed', 'Object Lock cannot be removed from a bucket.');
        return { op: 'DeleteBucket', ...base };
      case 'POST':
        if (has('delete')) return { op: 'DeleteObjects', ...base };
        if (/^multipart\/form-data/i.test(input.contentType ?? '')) return { op: 'PostObject', ...base };
        throw new SvcError('MethodNotAllowed');
      case 'GET':
        if (has('location')) return { op: 'GetBucketLocation', ...base };
        if (has('versioning')) return { op: 'GetBucketVersioning', ...base };
        if (has('tagging')) return { op: 'GetBucketTagging', ...base };
        if (has('acl')) return { op: 'GetBucketAcl', ...base };
        if (has('policyStatus')) return { op: 'GetBucketPolicyStatus', ...base };
        if (has('policy')) return { op: 'GetBucketPolicy', ...base };
        if (has('cors')) return { op: 'GetBucketCors', ...base };
        if (has('ownershipControls')) return { op: 'GetBucketOwnershipControls', ...base };
        if (has('publicAccessBlock')) return { op: 'GetPublicAccessBlock', ...base };
        if (has('object-lock')) return { op: 'GetObjectLockConfiguration', ...base };
        if (has('lifecycle')) return { op: 'GetBucketLifecycle', ...base };
        if (has('encryption')) return { op: 'GetBucketEncryption', ...base };
        if (has('notification')) return { op: 'GetBucketNotificationConfiguration', ...base };
        if (has('replication')) return { op: 'GetBucketReplication', ...base };
        // MinIO's ListenBucketNotification (`mc event`/`mc watch`): a GET on the bucket with `events`.
        if (has('events')) return { op: 'ListenBucketNotification', ...base };
        if (has('versions')) return { op: 'ListObjectVersions', ...base };
        if (has('uploads')) return { op: 'ListMultipartUploads', ...base };
        if (query.get('list-type') === '2') return { op: 'ListObjectsV2', ...base };
        if (has('list-type')) throw new SvcError('InvalidArgument', 'list-type must be 2.');
        return { op: 'ListObjectsV1', ...base };
      default:
        throw new SvcError('MethodNotAllowed');
    }
  }

  for (const sub of ['restore', 'select', 'torrent']) {
    if (has(sub)) throw new SvcError('NotImplemented', `The object subresource '${sub}' is not supported by this server.`);
  }
  switch (m) {
    case 'PUT': {
      if (has('tagging')) return { op: 'PutObjectTagging', ...base };
      if (has('acl')) return { op: 'PutObjectAcl', ...base };
      if (has('retention')) return { op: 'PutObjectRetention', ...base };
      if (has('legal-hold')) return { op: 'PutObjectLegalHold', ...base };
      if (has('partNumber') || has('uploadId')) {
        const uploadId = query.get('uploadId');
        if (!uploadId) throw new SvcError('InvalidArgument', 'uploadId is required with partNumber.');
        const partNumber = partNumberOf(query.get('partNumber'));
        if (input.copySource !== undefined) return { op: 'UploadPartCopy', ...base, uploadId, partNumber, copySource: input.copySource };
        return { op: 'UploadPart', ...base, uploadId, partNumber };
      }
      if (input.copySource !== undefined) return { op: 'CopyObject', ...base, copySource: input.copySource };
      return { op: 'PutObject', ...base };
    }
    case 'GET':
      if (has('uploadId')) return { op: 'ListParts', ...base, uploadId: query.get('uploadId')! };
      if (has('tagging')) return { op: 'GetObjectTagging', ...base };
      if (has('acl')) return { op: 'GetObjectAcl', ...base };
      if (has('retention')) return { op: 'GetObjectRetention', ...base };
      if (has('legal-hold')) return { op: 'GetObjectLegalHold', ...base };
      if (has('attributes')) return { op: 'GetObjectAttributes', ...base };
      return { op: 'GetObject', ...base };
    case 'HEAD':
      return { op: 'HeadObject', ...base };
    case 'DELETE':
      if (has('tagging')) return { op: 'DeleteObjectTagging', ...base };
      if (has('uploadId')) return { op: 'AbortMultipartUpload', ...base, uploadId: query.get('uploadId')! };
      return { op: 'DeleteObject', ...base };
    case 'POST':
      if (has('uploads')) return { op: 'CreateMultipartUpload', ...base };
      if (has('uploadId')) return { op: 'CompleteMultipartUpload', ...base, uploadId: query.get('uploadId')! };
      throw new SvcError('MethodNotAllowed');
    default:
      throw new SvcError('MethodNotAllowed');
  }
}

import { describe, expect, it } from 'vitest';
import { code } from '../../../test/helpers/error-code.ts';
import { bucketFromHost, parseEndpoint, type S3Endpoint } from './router.ts';

function ep(method: string, url: string, extra: { host?: string; copySource?: string; domains?: string[] } = {}): S3Endpoint {
  return parseEndpoint({ method, url, host: extra.host ?? '127.0.0.1:9000', copySource: extra.copySource }, extra.domains ?? []);
}

describe('parseEndpoint', () => {
  it('maps every operation from method, path and subresource', () => {
    const cases: [string, string, string, string?][] = [
      ['GET', '/', 'ListBuckets'],
      ['PUT', '/b', 'CreateBucket'],
      ['HEAD', '/b', 'HeadBucket'],
      ['DELETE', '/b', 'DeleteBucket'],
      ['GET', '/b?location', 'GetBucketLocation'],
      ['GET', '/b?versioning', 'GetBucketVersioning'],
      ['PUT', '/b?versioning', 'PutBucketVersioning'],
      ['GET', '/b?tagging', 'GetBucketTagging'],
      ['PUT', '/b?tagging', 'PutBucketTagging'],
      ['DELETE', '/b?tagging', 'DeleteBucketTagging'],
      ['GET', '/b?acl', 'GetBucketAcl'],
      ['PUT', '/b?acl', 'PutBucketAcl'],
      ['GET', '/b', 'ListObjectsV1'],
      ['GET', '/b?list-type=2&prefix=a', 'ListObjectsV2'],
      ['GET', '/b?versions', 'ListObjectVersions'],
      ['GET', '/b?uploads', 'ListMultipartUploads'],
      ['POST', '/b?delete', 'DeleteObjects'],
      ['PUT', '/b/k', 'PutObject'],
      ['GET', '/b/k', 'GetObject'],
      ['HEAD', '/b/k', 'HeadObject'],
      ['DELETE', '/b/k', 'DeleteObject'],
      ['GET', '/b/k?tagging', 'GetObjectTagging'],
      ['PUT', '/b/k?tagging', 'PutObjectTagging'],
      ['DELETE', '/b/k?tagging', 'DeleteObjectTagging'],
      ['GET', '/b/k?acl', 'GetObjectAcl'],
      ['PUT', '/b/k?acl', 'PutObjectAcl'],
      ['GET', '/b/k?attributes', 'GetObjectAttributes'],
      ['GET', '/b?object-lock', 'GetObjectLockConfiguration'],
      ['PUT', '/b?object-lock', 'PutObjectLockConfiguration'],
      ['GET', '/b?lifecycle', 'GetBucketLifecycle'],
      ['PUT', '/b?lifecycle', 'PutBucketLifecycle'],
      ['DELETE', '/b?lifecycle', 'DeleteBucketLifecycle'],
      ['GET', '/b?encryption', 'GetBucketEncryption'],
      ['PUT', '/b?encryption', 'PutBucketEncryption'],
      ['DELETE', '/b?encryption', 'DeleteBucketEncryption'],
      ['GET', '/b/k?retention', 'GetObjectRetention'],
      ['PUT', '/b/k?retention&versionId=v', 'PutObjectRetention'],
      ['GET', '/b/k?legal-hold', 'GetObjectLegalHold'],
      ['PUT', '/b/k?legal-hold', 'PutObjectLegalHold'],
      ['POST', '/b/k?uploads', 'CreateMultipartUpload'],
      ['PUT', '/b/k?partNumber=3&uploadId=u1', 'UploadPart'],
      ['POST', '/b/k?uploadId=u1', 'CompleteMultipartUpload'],
      ['DELETE', '/b/k?uploadId=u1', 'AbortMultipartUpload'],
      ['GET', '/b/k?uploadId=u1', 'ListParts'],
    ];
    for (const [m, url, op] of cases) expect(ep(m, url).op, `${m} ${url}`).toBe(op);
    const copy = ep('PUT', '/b/k', { copySource: '/src/key' });
    expect(copy).toMatchObject({ op: 'CopyObject', copySource: '/src/key' });
    const partCopy = ep('PUT', '/b/k?partNumber=2&uploadId=u', { copySource: 'src/key' });
    expect(partCopy).toMatchObject({ op: 'UploadPartCopy', partNumber: 2, uploadId: 'u' });
  });

  it('decodes keys (slashes, spaces, plus, unicode) and keeps bucket and key apart', () => {
    const e = ep('GET', '/bkt/dir/sub/a%20b+c%C3%BC.txt');
    expect(e.bucket).toBe('bkt');
    expect(e.key).toBe('dir/sub/a b+cü.txt');
    const q = ep('GET', '/bkt?list-type=2&prefix=a%2Fb&delimiter=%2F');
    expect(q.query.get('prefix')).toBe('a/b');
    expect(q.query.get('delimiter')).toBe('/');
  });

  it('virtual-host style when a domain is configured; path style otherwise', () => {
    const v = ep('GET', '/dir/key', { host: 'media.s3.example.com:9000', domains: ['s3.example.com'] });
    expect(v).toMatchObject({ op: 'GetObject', bucket: 'media', key: 'dir/key' });
    const root = ep('GET', '/', { host: 'media.s3.example.com', domains: ['s3.example.com'] });
    expect(root).toMatchObject({ op: 'ListObjectsV1', bucket: 'media' });
    const path = ep('GET', '/media/dir/key', { host: 's3.example.com', domains: ['s3.example.com'] });
    expect(path).toMatchObject({ bucket: 'media', key: 'dir/key' });
    expect(bucketFromHost('a.b.example.org', [])).toBeUndefined();
  });

  it('refuses what S3 refuses', () => {
    expect(code(() => ep('GET', `/b/${'k'.repeat(1025)}`))).toBe('KeyTooLongError');
    expect(code(() => ep('PUT', `/b/${'é'.repeat(513)}`))).toBe('KeyTooLongError');
    expect(code(() => ep('PUT', `/b/${'k'.repeat(1024)}`))).toBeUndefined();
    expect(code(() => ep('GET', '/b/%E0%A4%A'))).toBe('InvalidArgument');
    expect(code(() => ep('PUT', '/b/k?partNumber=0&uploadId=u'))).toBe('InvalidArgument');
    expect(code(() => ep('PUT', '/b/k?partNumber=10001&uploadId=u'))).toBe('InvalidArgument');
    expect(code(() => ep('PUT', '/b/k?partNumber=1'))).toBe('InvalidArgument');
    expect(code(() => ep('PUT', '/b?website'))).toBe('NotImplemented');
    expect(code(() => ep('PUT', '/b?accelerate'))).toBe('NotImplemented');
    expect(code(() => ep('GET', '/b?analytics'))).toBe('NotImplemented');
    expect(['/b?website', '/b?accelerate', '/b?requestPayment', '/b?logging'].map((u) => ep('GET', u).op)).toEqual([
      'GetBucketWebsite',
      'GetBucketAccelerateConfiguration',
      'GetBucketRequestPayment',
      'GetBucketLogging',
    ]);
    expect(ep('DELETE', '/b?website').op).toBe('DeleteBucketWebsite');
    expect([ep('GET', '/b?replication').op, ep('PUT', '/b?replication').op, ep('DELETE', '/b?replication').op]).toEqual(['GetBucketReplication', 'PutBucketReplication', 'DeleteBucketReplication']);
    expect(code(() => ep('DELETE', '/b?object-lock'))).toBe('MethodNotAllowed');
    expect(code(() => ep('GET', '/b?list-type=1'))).toBe('InvalidArgument');
    expect(code(() => ep('PATCH', '/b/k'))).toBe('MethodNotAllowed');
    expect(code(() => ep('PUT', '/'))).toBe('MethodNotAllowed');
    expect(code(() => ep('GET', '/b/a%00b'))).toBe('InvalidObjectName');
  });
});

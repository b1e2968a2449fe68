/**
 * Compatibility: @aws-sdk/client-s3 (latest v3, default checksum behaviour:
 * CRC32 with aws-chunked trailers on uploads) against the real server.
 */
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  DeleteObjectTaggingCommand,
  GetBucketAclCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetObjectAclCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  ListPartsCommand,
  PutBucketAclCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumBase64 } from '../src/api/s3/checksum.ts';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let srv: S3Server;
let s3: S3Client;

beforeAll(async () => {
  srv = await start();
  s3 = new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region: srv.region,
    forcePathStyle: true,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
  });
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

/** The S3 error code a failing call returns, and its HTTP status. */
async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode };
    throw err;
  }
  throw new Error('expected the call to fail');
}

function pattern(size: number, seed = 1): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b[i] = x >>> 16;
  }
  return b;
}

describe('@aws-sdk/client-s3', () => {
  it('bucket lifecycle: create, head, location, list, tagging, ACL, delete (BucketNotEmpty)', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-buckets' }));
    expect((await s3Error(s3.send(new CreateBucketCommand({ Bucket: 'Bad_Name' })))).code).toBe('InvalidBucketName');
    expect((await s3.send(new HeadBucketCommand({ Bucket: 'sdk-buckets' }))).$metadata.httpStatusCode).toBe(200);
    expect((await s3Error(s3.send(new HeadBucketCommand({ Bucket: 'sdk-nothere' })))).status).toBe(404);
    const loc = await s3.send(new GetBucketLocationCommand({ Bucket: 'sdk-buckets' }));
    expect(loc.LocationConstraint ?? '').toBe('');
    const list = await s3.send(new ListBucketsCommand({}));
    expect(list.Buckets?.map((b) => b.Name)).toContain('sdk-buckets');
    expect((await s3Error(s3.send(new GetBucketTaggingCommand({ Bucket: 'sdk-buckets' })))).code).toBe('NoSuchTagSet');
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'sdk-buckets', Tagging: { TagSet: [{ Key: 'team', Value: 'storage' }] } }));
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: 'sdk-buckets' }))).TagSet).toEqual([{ Key: 'team', Value: 'storage' }]);
    await s3.send(new DeleteBucketTaggingCommand({ Bucket: 'sdk-buckets' }));
    expect((await s3Error(s3.send(new GetBucketTaggingCommand({ Bucket: 'sdk-buckets' })))).code).toBe('NoSuchTagSet');
    const acl = await s3.send(new GetBucketAclCommand({ Bucket: 'sdk-buckets' }));
    expect(acl.Grants?.[0]?.Permission).toBe('FULL_CONTROL');
    await s3.send(new PutBucketAclCommand({ Bucket: 'sdk-buckets', ACL: 'private' }));
    await s3.send(new PutBucketAclCommand({ Bucket: 'sdk-buckets', ACL: 'public-read' }));
    const pub = await s3.send(new GetBucketAclCommand({ Bucket: 'sdk-buckets' }));
    expect(pub.Grants?.map((g) => [g.Grantee?.Type, g.Grantee?.URI ?? g.Grantee?.ID, g.Permission])).toEqual([
      ['CanonicalUser', srv.accessKey, 'FULL_CONTROL'],
      ['Group', 'http://acs.amazonaws.com/groups/global/AllUsers', 'READ'],
    ]);
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-buckets', Key: 'x', Body: 'x' }));
    expect((await s3Error(s3.send(new DeleteBucketCommand({ Bucket: 'sdk-buckets' })))).code).toBe('BucketNotEmpty');
    await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-buckets', Key: 'x' }));
    await s3.send(new DeleteBucketCommand({ Bucket: 'sdk-buckets' }));
    expect((await s3Error(s3.send(new HeadBucketCommand({ Bucket: 'sdk-buckets' })))).status).toBe(404);
  });

  it('PutObject with default checksums, GetObject with checksum mode, range, conditionals, overrides', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-objects' }));
    const body = pattern(300_000);
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: 'sdk-objects',
        Key: 'dir/obj ü+%.bin',
        Body: body,
        ContentType: 'application/x-test',
        Metadata: { color: 'blue' },
        Tagging: 'a=1&b=2',
      }),
    );
    expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(put.ChecksumCRC32).toBe(checksumBase64('CRC32', body));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', ChecksumMode: 'ENABLED' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    expect(got.ChecksumCRC32).toBe(checksumBase64('CRC32', body));
    expect(got.ContentType).toBe('application/x-test');
    expect(got.Metadata).toEqual({ color: 'blue' });
    expect(got.TagCount).toBe(2);
    for (const [range, from, to] of [
      ['bytes=100-199', 100, 199],
      ['bytes=299990-', 299990, 299999],
      ['bytes=-7', 299993, 299999],
      ['bytes=299000-400000', 299000, 299999],
    ] as const) {
      const r = await s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', Range: range }));
      expect(r.$metadata.httpStatusCode).toBe(206);
      expect(r.ContentRange).toBe(`bytes ${from}-${to}/300000`);
      expect(Buffer.from(await r.Body!.transformToByteArray()).equals(body.subarray(from, to + 1))).toBe(true);
    }
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', Range: 'bytes=300000-' })))).code).toBe('InvalidRange');
    const etag = put.ETag!;
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfNoneMatch: etag })))).status).toBe(304);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfMatch: '"nope"' })))).code).toBe('PreconditionFailed');
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfMatch: '"nope"' })))).status).toBe(412);
    const future = new Date(Date.now() + 3600_000);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfModifiedSince: future })))).status).toBe(304);
    const past = new Date(Date.now() - 3600_000);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfUnmodifiedSince: past })))).status).toBe(412);
    const ok = await s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', IfMatch: etag, ResponseContentType: 'text/plain', ResponseContentDisposition: 'attachment' }));
    expect(ok.ContentType).toBe('text/plain');
    expect(ok.ContentDisposition).toBe('attachment');
    await ok.Body!.transformToByteArray();
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'dir/obj ü+%.bin', ChecksumMode: 'ENABLED' }));
    expect(head.ContentLength).toBe(300_000);
    expect(head.ChecksumCRC32).toBe(checksumBase64('CRC32', body));
    const missing = await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'nothing' })));
    expect(missing.status).toBe(404);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'nothing' })))).code).toBe('NoSuchKey');
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-nobucket', Key: 'k' })))).code).toBe('NoSuchBucket');
  });

  it('every checksum algorithm, in headers and in trailers, is verified and returned', async () => {
    const body = Buffer.from('checksummed content');
    for (const alg of ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const) {
      const key = `ck-${alg}`;
      // a Buffer body: the SDK sends the checksum in a header
      const put = await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: key, Body: body, ChecksumAlgorithm: alg }));
      expect(put[`Checksum${alg}`]).toBe(checksumBase64(alg, body));
      // a stream body of unknown encoding: the SDK sends aws-chunked with the checksum in a trailer
      const key2 = `ck-stream-${alg}`;
      await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: key2, Body: Readable.from([body]), ContentLength: body.length, ChecksumAlgorithm: alg }));
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: key2, ChecksumMode: 'ENABLED' }));
      expect(head[`Checksum${alg}`]).toBe(checksumBase64(alg, body));
    }
    const bad = await s3Error(
      s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'ck-bad', Body: body, ChecksumSHA256: checksumBase64('SHA256', Buffer.from('other')) })),
    );
    expect(bad.code).toBe('BadDigest');
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'ck-bad' })))).status).toBe(404);
  });

  it('CopyObject: metadata and tagging directives, source conditions, self-copy, storage class', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'src', Body: 'copy me', Metadata: { a: '1' }, Tagging: 't=1' }));
    const c1 = await s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'dst', CopySource: 'sdk-objects/src' }));
    expect(c1.CopyObjectResult?.ETag).toBeDefined();
    const h1 = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'dst' }));
    expect(h1.Metadata).toEqual({ a: '1' });
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'dst' }))).TagSet).toEqual([{ Key: 't', Value: '1' }]);
    await s3.send(
      new CopyObjectCommand({
        Bucket: 'sdk-objects',
        Key: 'dst2',
        CopySource: 'sdk-objects/src',
        MetadataDirective: 'REPLACE',
        Metadata: { b: '2' },
        TaggingDirective: 'REPLACE',
        Tagging: 'u=2',
        StorageClass: 'REDUCED_REDUNDANCY',
      }),
    );
    const h2 = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'dst2' }));
    expect(h2.Metadata).toEqual({ b: '2' });
    expect(h2.StorageClass).toBe('REDUCED_REDUNDANCY');
    // the class picks the parity: the helper's pool runs STANDARD EC:2 and RRS EC:1 on 4 drives
    const engineInfo = await srv.objectLayer.getObjectInfo('sdk-objects', 'dst2', {});
    expect([engineInfo.dataBlocks, engineInfo.parityBlocks]).toEqual([3, 1]);
    const srcInfo = await srv.objectLayer.getObjectInfo('sdk-objects', 'src', {});
    expect([srcInfo.dataBlocks, srcInfo.parityBlocks]).toEqual([2, 2]);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'dst2' }));
    expect(await got.Body!.transformToString()).toBe('copy me');
    expect(
      (await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'dst3', CopySource: 'sdk-objects/src', CopySourceIfMatch: '"bad"' })))).code,
    ).toBe('PreconditionFailed');
    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'src', CopySource: 'sdk-objects/src' })))).code).toBe('InvalidRequest');
    await s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'src', CopySource: 'sdk-objects/src', MetadataDirective: 'REPLACE', Metadata: { c: '3' } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'src' }))).Metadata).toEqual({ c: '3' });
    await s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'src', CopySource: 'sdk-objects/src', StorageClass: 'REDUCED_REDUNDANCY' }));
    const h3 = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'src' }));
    expect(h3.StorageClass).toBe('REDUCED_REDUNDANCY');
    expect(h3.Metadata).toEqual({ c: '3' });
    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'x', CopySource: 'sdk-objects/none' })))).code).toBe('NoSuchKey');
    expect(
      (await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'sdk-objects', Key: 'x', CopySource: 'sdk-objects/src', StorageClass: 'GLACIER' })))).code,
    ).toBe('InvalidStorageClass');
  });

  it('conditional PUT: If-None-Match * and If-Match', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'cond', Body: 'v1', IfNoneMatch: '*' }));
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'cond', Body: 'v2', IfNoneMatch: '*' })))).code).toBe('PreconditionFailed');
    const h = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-objects', Key: 'cond' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'cond', Body: 'v3', IfMatch: h.ETag }));
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'cond', Body: 'v4', IfMatch: h.ETag })))).code).toBe('PreconditionFailed');
    const g = await s3.send(new GetObjectCommand({ Bucket: 'sdk-objects', Key: 'cond' }));
    expect(await g.Body!.transformToString()).toBe('v3');
  });

  it('object tagging, ACL reads, GetObjectAttributes', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-objects', Key: 'tagged', Body: 'x' }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'tagged', Tagging: { TagSet: [{ Key: 'k', Value: 'v w' }] } }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'tagged' }))).TagSet).toEqual([{ Key: 'k', Value: 'v w' }]);
    await s3.send(new DeleteObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'tagged' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'tagged' }))).TagSet).toEqual([]);
    const tooMany = Array.from({ length: 11 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    expect((await s3Error(s3.send(new PutObjectTaggingCommand({ Bucket: 'sdk-objects', Key: 'tagged', Tagging: { TagSet: tooMany } })))).code).toBe('InvalidTag');
    const acl = await s3.send(new GetObjectAclCommand({ Bucket: 'sdk-objects', Key: 'tagged' }));
    expect(acl.Grants?.[0]?.Permission).toBe('FULL_CONTROL');
    await s3.send(new PutObjectAclCommand({ Bucket: 'sdk-objects', Key: 'tagged', ACL: 'private' }));
    const attrs = await s3.send(
      new GetObjectAttributesCommand({ Bucket: 'sdk-objects', Key: 'tagged', ObjectAttributes: ['ETag', 'ObjectSize', 'StorageClass', 'Checksum'] }),
    );
    expect(attrs.ObjectSize).toBe(1);
    expect(attrs.StorageClass).toBe('STANDARD');
    expect(attrs.Checksum?.ChecksumCRC32).toBe(checksumBase64('CRC32', Buffer.from('x')));
  });

  it('listing: v1 and v2 with prefix, delimiter, pagination, start-after, encoding, max-keys cap', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-list' }));
    const keys = ['a/1', 'a/2', 'a/b/3', 'b/4', 'c', 'd e', 'f+g'];
    for (const k of keys) await s3.send(new PutObjectCommand({ Bucket: 'sdk-list', Key: k, Body: k }));
    const all: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', MaxKeys: 2, ContinuationToken: token }));
      expect(page.KeyCount).toBeLessThanOrEqual(2);
      all.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.NextContinuationToken;
    } while (token);
    expect(all).toEqual([...keys].sort());
    const d = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', Delimiter: '/' }));
    expect(d.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['a/', 'b/']);
    expect(d.Contents?.map((c) => c.Key)).toEqual(['c', 'd e', 'f+g']);
    const p = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', Prefix: 'a/', Delimiter: '/' }));
    expect(p.Contents?.map((c) => c.Key)).toEqual(['a/1', 'a/2']);
    expect(p.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['a/b/']);
    const sa = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', StartAfter: 'c', FetchOwner: true }));
    expect(sa.Contents?.map((c) => c.Key)).toEqual(['d e', 'f+g']);
    expect(sa.Contents?.[0]?.Owner?.ID).toBe(srv.accessKey);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'sdk-list', Marker: 'b/4', MaxKeys: 1 }));
    expect(v1.Contents?.map((c) => c.Key)).toEqual(['c']);
    expect(v1.IsTruncated).toBe(true);
    const enc = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', Prefix: 'd', EncodingType: 'url' }));
    // the SDK hands url-encoded keys back as sent
    expect(enc.EncodingType).toBe('url');
    expect(enc.Contents?.map((c) => c.Key)).toEqual(['d%20e']);
    const capped = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-list', MaxKeys: 5000 }));
    expect(capped.MaxKeys).toBe(1000);
    expect((await s3Error(s3.send(new ListObjectsV2Command({ Bucket: 'sdk-nobucket' })))).code).toBe('NoSuchBucket');
  });

  it('listings follow UTF-8 byte order, not UTF-16: keys above U+FFFF sort after U+E000–U+FFFF', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-utf8' }));
    // In UTF-16 (JavaScript <) the emoji keys would come before the U+FFxx ones.
    const keys = ['z', '\uE000', '\uFF21/x', '\uFFFD', '\u{1F600}', '\u{1F600}/y', '\u{10000}', 'a\u{1F600}', 'a\uFFFF'];
    const utf8 = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(utf8).not.toEqual([...keys].sort());
    for (const k of keys) await s3.send(new PutObjectCommand({ Bucket: 'sdk-utf8', Key: k, Body: k }));
    const all: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-utf8', MaxKeys: 2, ContinuationToken: token }));
      all.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.NextContinuationToken;
    } while (token);
    expect(all).toEqual(utf8);
    const d = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-utf8', Delimiter: '/' }));
    expect(d.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['\uFF21/', '\u{1F600}/']);
    const after = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-utf8', StartAfter: '\uFFFD' }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(utf8.slice(utf8.indexOf('\uFFFD') + 1));
    const versions: string[] = [];
    let km: string | undefined;
    let vm: string | undefined;
    do {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket: 'sdk-utf8', MaxKeys: 3, KeyMarker: km, VersionIdMarker: vm }));
      versions.push(...(page.Versions ?? []).map((v) => v.Key!));
      km = page.NextKeyMarker;
      vm = page.NextVersionIdMarker;
      if (!page.IsTruncated) break;
    } while (km);
    expect(versions).toEqual(utf8);
    const ups = [];
    for (const k of ['\u{1F600}', '\uFFFD']) ups.push((await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sdk-utf8', Key: k }))).UploadId!);
    const lu = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'sdk-utf8' }));
    expect(lu.Uploads?.map((u) => u.Key)).toEqual(['\uFFFD', '\u{1F600}']);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'sdk-utf8', Key: '\u{1F600}', UploadId: ups[0] }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'sdk-utf8', Key: '\uFFFD', UploadId: ups[1] }));
  });

  it('DeleteObjects, verbose and quiet', async () => {
    for (const k of ['d1', 'd2', 'd3']) await s3.send(new PutObjectCommand({ Bucket: 'sdk-list', Key: k, Body: k }));
    const verbose = await s3.send(new DeleteObjectsCommand({ Bucket: 'sdk-list', Delete: { Objects: [{ Key: 'd1' }, { Key: 'never' }] } }));
    expect(verbose.Deleted?.map((d) => d.Key).sort()).toEqual(['d1', 'never']);
    const quiet = await s3.send(new DeleteObjectsCommand({ Bucket: 'sdk-list', Delete: { Objects: [{ Key: 'd2' }, { Key: 'd3' }], Quiet: true } }));
    expect(quiet.Deleted ?? []).toEqual([]);
    expect(quiet.Errors ?? []).toEqual([]);
    for (const k of ['d1', 'd2', 'd3']) expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'sdk-list', Key: k })))).status).toBe(404);
  });

  it('versioning: overwrite keeps versions, delete leaves a marker, versionId reads and deletes', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-versions' }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'sdk-versions' }))).Status).toBeUndefined();
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'sdk-versions', VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'sdk-versions' }))).Status).toBe('Enabled');
    const v1 = await s3.send(new PutObjectCommand({ Bucket: 'sdk-versions', Key: 'doc', Body: 'first' }));
    const v2 = await s3.send(new PutObjectCommand({ Bucket: 'sdk-versions', Key: 'doc', Body: 'second' }));
    expect(v1.VersionId).toBeDefined();
    expect(v2.VersionId).not.toBe(v1.VersionId);
    const old = await s3.send(new GetObjectCommand({ Bucket: 'sdk-versions', Key: 'doc', VersionId: v1.VersionId }));
    expect(await old.Body!.transformToString()).toBe('first');
    const del = await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-versions', Key: 'doc' }));
    expect(del.DeleteMarker).toBe(true);
    const gone = await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sdk-versions', Key: 'doc' })));
    expect(gone.code).toBe('NoSuchKey');
    const lv = await s3.send(new ListObjectVersionsCommand({ Bucket: 'sdk-versions' }));
    expect(lv.Versions?.map((v) => v.VersionId).sort()).toEqual([v1.VersionId, v2.VersionId].sort());
    expect(lv.DeleteMarkers?.length).toBe(1);
    expect(lv.DeleteMarkers?.[0]?.IsLatest).toBe(true);
    expect(lv.DeleteMarkers?.[0]?.VersionId).toBe(del.VersionId);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-versions' }));
    expect(listed.Contents ?? []).toEqual([]);
    // removing the marker brings the object back
    await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-versions', Key: 'doc', VersionId: del.VersionId }));
    const back = await s3.send(new GetObjectCommand({ Bucket: 'sdk-versions', Key: 'doc' }));
    expect(await back.Body!.transformToString()).toBe('second');
    // CopyObject from an older version by source versionId
    const copied = await s3.send(new CopyObjectCommand({ Bucket: 'sdk-versions', Key: 'doc-v1-copy', CopySource: `sdk-versions/doc?versionId=${v1.VersionId}` }));
    expect(copied.CopySourceVersionId).toBe(v1.VersionId);
    const cg = await s3.send(new GetObjectCommand({ Bucket: 'sdk-versions', Key: 'doc-v1-copy' }));
    expect(await cg.Body!.transformToString()).toBe('first');
    await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-versions', Key: 'doc', VersionId: v2.VersionId }));
    const lv2 = await s3.send(new ListObjectVersionsCommand({ Bucket: 'sdk-versions', Prefix: 'doc' }));
    expect(lv2.Versions?.filter((v) => v.Key === 'doc').map((v) => v.VersionId)).toEqual([v1.VersionId]);
  });

  it('suspended versioning writes the null version and keeps older versions', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-suspended' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'sdk-suspended', VersioningConfiguration: { Status: 'Enabled' } }));
    const kept = await s3.send(new PutObjectCommand({ Bucket: 'sdk-suspended', Key: 'k', Body: 'versioned' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'sdk-suspended', VersioningConfiguration: { Status: 'Suspended' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'sdk-suspended' }))).Status).toBe('Suspended');
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-suspended', Key: 'k', Body: 'null one' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-suspended', Key: 'k', Body: 'null two' }));
    const lv = await s3.send(new ListObjectVersionsCommand({ Bucket: 'sdk-suspended' }));
    expect(lv.Versions?.map((v) => v.VersionId).sort()).toEqual([kept.VersionId, 'null'].sort());
    const cur = await s3.send(new GetObjectCommand({ Bucket: 'sdk-suspended', Key: 'k' }));
    expect(await cur.Body!.transformToString()).toBe('null two');
  });

  it('ListObjectVersions pages with key and version-id markers', async () => {
    const expected: [string, string][] = [];
    for (const key of ['pa', 'pb']) {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await s3.send(new PutObjectCommand({ Bucket: 'sdk-versions', Key: key, Body: `${key}${i}` }))).VersionId!);
      // newest first within a key
      for (const id of ids.reverse()) expected.push([key, id]);
    }
    const seen: [string, string][] = [];
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await s3.send(
        new ListObjectVersionsCommand({ Bucket: 'sdk-versions', Prefix: 'p', MaxKeys: 2, KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }),
      );
      pages++;
      for (const v of page.Versions ?? []) seen.push([v.Key!, v.VersionId!]);
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      versionIdMarker = page.NextVersionIdMarker;
    }
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
  });

  it('multipart: 21 MiB via lib-storage Upload with default checksums', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-mpu' }));
    const body = pattern(21 * 1024 * 1024, 7);
    const up = new Upload({ client: s3, params: { Bucket: 'sdk-mpu', Key: 'big.bin', Body: Readable.from([body]) }, partSize: 5 * 1024 * 1024, queueSize: 2 });
    const done = await up.done();
    expect(done.ETag).toMatch(/-5"$/);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sdk-mpu', Key: 'big.bin' }));
    expect(got.ContentLength).toBe(body.length);
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    const part2 = await s3.send(new GetObjectCommand({ Bucket: 'sdk-mpu', Key: 'big.bin', PartNumber: 2 }));
    expect(part2.ContentLength).toBe(5 * 1024 * 1024);
    expect(part2.PartsCount).toBe(5);
    expect(Buffer.from(await part2.Body!.transformToByteArray()).equals(body.subarray(5 * 1024 * 1024, 10 * 1024 * 1024))).toBe(true);
    const attrs = await s3.send(
      new GetObjectAttributesCommand({ Bucket: 'sdk-mpu', Key: 'big.bin', ObjectAttributes: ['ObjectParts', 'ObjectSize', 'ETag'], MaxParts: 2 }),
    );
    expect(attrs.ObjectSize).toBe(body.length);
    expect(attrs.ObjectParts?.TotalPartsCount).toBe(5);
    expect(attrs.ObjectParts?.Parts?.map((p) => p.PartNumber)).toEqual([1, 2]);
    expect(attrs.ObjectParts?.IsTruncated).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-mpu', Key: 'big.bin', PartNumber: 5 }));
    expect(head.ContentLength).toBe(body.length - 4 * 5 * 1024 * 1024);
    expect(head.ContentRange).toBe(`bytes ${4 * 5 * 1024 * 1024}-${body.length - 1}/${body.length}`);
  });

  it('multipart by hand: checksums (composite and full-object), ListParts, ListMultipartUploads, UploadPartCopy, part rules, abort', async () => {
    const part = pattern(5 * 1024 * 1024, 3);
    const tail = Buffer.from('tail');
    for (const [alg, type] of [
      ['SHA256', 'COMPOSITE'],
      ['CRC64NVME', 'FULL_OBJECT'],
      ['CRC32C', 'FULL_OBJECT'],
    ] as const) {
      const key = `manual-${alg}`;
      const c = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: key, ChecksumAlgorithm: alg, ChecksumType: type, StorageClass: 'REDUCED_REDUNDANCY' }));
      const p1 = await s3.send(new UploadPartCommand({ Bucket: 'sdk-mpu', Key: key, UploadId: c.UploadId, PartNumber: 1, Body: part, ChecksumAlgorithm: alg }));
      const p2 = await s3.send(new UploadPartCommand({ Bucket: 'sdk-mpu', Key: key, UploadId: c.UploadId, PartNumber: 2, Body: tail, ChecksumAlgorithm: alg }));
      expect(p1[`Checksum${alg}`]).toBe(checksumBase64(alg, part));
      const lp = await s3.send(new ListPartsCommand({ Bucket: 'sdk-mpu', Key: key, UploadId: c.UploadId }));
      expect(lp.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([
        [1, part.length],
        [2, tail.length],
      ]);
      const ups = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'sdk-mpu' }));
      expect(ups.Uploads?.some((u) => u.UploadId === c.UploadId && u.Key === key)).toBe(true);
      const done = await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'sdk-mpu',
          Key: key,
          UploadId: c.UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: p1.ETag, [`Checksum${alg}`]: p1[`Checksum${alg}`] },
              { PartNumber: 2, ETag: p2.ETag, [`Checksum${alg}`]: p2[`Checksum${alg}`] },
            ],
          },
        }),
      );
      const whole = Buffer.concat([part, tail]);
      if (type === 'FULL_OBJECT') {
        expect(done[`Checksum${alg}`]).toBe(checksumBase64(alg, whole));
      } else {
        expect(done[`Checksum${alg}`]).toMatch(/-2$/);
      }
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-mpu', Key: key, ChecksumMode: 'ENABLED' }));
      expect(head.StorageClass).toBe('REDUCED_REDUNDANCY');
      expect(head.ContentLength).toBe(whole.length);
      // both types are persisted and returned with the object
      expect(head[`Checksum${alg}`]).toBe(done[`Checksum${alg}`]);
      expect(head.ChecksumType).toBe(type);
      const g = await s3.send(new GetObjectCommand({ Bucket: 'sdk-mpu', Key: key, ChecksumMode: 'ENABLED' }));
      expect(Buffer.from(await g.Body!.transformToByteArray()).equals(whole)).toBe(true);
    }

    // EntityTooSmall, InvalidPartOrder, InvalidPart; UploadPartCopy with a range; abort → NoSuchUpload
    const c = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: 'rules' }));
    const small = await s3.send(new UploadPartCommand({ Bucket: 'sdk-mpu', Key: 'rules', UploadId: c.UploadId, PartNumber: 1, Body: Buffer.from('small') }));
    const copy = await s3.send(
      new UploadPartCopyCommand({ Bucket: 'sdk-mpu', Key: 'rules', UploadId: c.UploadId, PartNumber: 2, CopySource: 'sdk-mpu/big.bin', CopySourceRange: 'bytes=0-5242879' }),
    );
    expect(copy.CopyPartResult?.ETag).toBeDefined();
    const parts = [
      { PartNumber: 1, ETag: small.ETag },
      { PartNumber: 2, ETag: copy.CopyPartResult?.ETag },
    ];
    const complete = (p: typeof parts) =>
      s3.send(new CompleteMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: 'rules', UploadId: c.UploadId, MultipartUpload: { Parts: p } }));
    expect((await s3Error(complete(parts))).code).toBe('EntityTooSmall');
    expect((await s3Error(complete([parts[1]!, parts[0]!]))).code).toBe('InvalidPartOrder');
    expect((await s3Error(complete([{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }]))).code).toBe('InvalidPart');
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'sdk-mpu', Key: 'rules' })))).status).toBe(404);
    // the copied part alone (as the last part) completes
    const one = await complete([parts[1]!].map((p) => ({ ...p, PartNumber: 2 })));
    expect(one.ETag).toMatch(/-1"$/);
    const g = await s3.send(new GetObjectCommand({ Bucket: 'sdk-mpu', Key: 'rules' }));
    expect(Buffer.from(await g.Body!.transformToByteArray()).equals(pattern(21 * 1024 * 1024, 7).subarray(0, 5 * 1024 * 1024))).toBe(true);

    const a = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: 'aborted' }));
    await s3.send(new UploadPartCommand({ Bucket: 'sdk-mpu', Key: 'aborted', UploadId: a.UploadId, PartNumber: 1, Body: Buffer.from('x') }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: 'aborted', UploadId: a.UploadId }));
    expect((await s3Error(s3.send(new ListPartsCommand({ Bucket: 'sdk-mpu', Key: 'aborted', UploadId: a.UploadId })))).code).toBe('NoSuchUpload');
    expect(
      (await s3Error(s3.send(new UploadPartCommand({ Bucket: 'sdk-mpu', Key: 'aborted', UploadId: a.UploadId, PartNumber: 2, Body: Buffer.from('y') })))).code,
    ).toBe('NoSuchUpload');
    expect((await s3Error(s3.send(new CreateMultipartUploadCommand({ Bucket: 'sdk-mpu', Key: 'k', StorageClass: 'GLACIER' })))).code).toBe('InvalidStorageClass');
  });

  it('presigned GET and PUT work with plain fetch', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-presign' }));
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'sdk-presign', Key: 'via fetch.txt' }), { expiresIn: 300 });
    const put = await fetch(putUrl, { method: 'PUT', body: 'uploaded with fetch' });
    expect(put.status).toBe(200);
    expect(put.headers.get('x-amz-request-id')).toMatch(/^[0-9A-F]{16}$/);
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'sdk-presign', Key: 'via fetch.txt' }), { expiresIn: 300 });
    const get = await fetch(getUrl);
    expect(get.status).toBe(200);
    expect(await get.text()).toBe('uploaded with fetch');
    // a presigned URL is bound to its method and key
    const wrong = await fetch(getUrl.replace('via%20fetch.txt', 'other.txt'));
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });
});

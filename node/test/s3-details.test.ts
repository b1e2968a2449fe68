/**
 * The details clients check, each against the real server with
 * `@aws-sdk/client-s3` (issue "S3 as real users meet it", item 5).
 */
import { readdir, readlink, rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { request } from 'node:http';
import {
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumBase64, compositeChecksum, fullObjectChecksum } from '../src/api/s3/checksum.ts';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let srv: S3Server;
let s3: S3Client;
const MiB = 1024 * 1024;

function client(secret = srv.secretKey, region = srv.region): S3Client {
  return new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region,
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: secret },
  });
}

beforeAll(async () => {
  srv = await start();
  s3 = client();
  await s3.send(new CreateBucketCommand({ Bucket: 'details' }));
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined; err: S3ServiceException }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode, err };
    throw err;
  }
  throw new Error('expected the call to fail');
}

function fill(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

async function mpu(key: string, parts: Buffer[], opts: { alg?: ChecksumAlgorithm; type?: 'COMPOSITE' | 'FULL_OBJECT' } = {}) {
  const c = await s3.send(
    new CreateMultipartUploadCommand({ Bucket: 'details', Key: key, ...(opts.alg ? { ChecksumAlgorithm: opts.alg } : {}), ...(opts.type ? { ChecksumType: opts.type } : {}) }),
  );
  const done = [];
  for (const [i, body] of parts.entries()) {
    const r = await s3.send(new UploadPartCommand({ Bucket: 'details', Key: key, UploadId: c.UploadId, PartNumber: i + 1, Body: body, ...(opts.alg ? { ChecksumAlgorithm: opts.alg } : {}) }));
    done.push({ PartNumber: i + 1, ETag: r.ETag, ...(opts.alg ? { [`Checksum${opts.alg}`]: r[`Checksum${opts.alg}` as 'ChecksumCRC32'] } : {}) });
  }
  return { uploadId: c.UploadId!, parts: done };
}

describe('conditional writes', () => {
  it('If-None-Match: * and If-Match on PutObject, CompleteMultipartUpload and CopyObject', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'cw', Body: 'v1', IfNoneMatch: '*' }));
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'cw', Body: 'v2', IfNoneMatch: '*' })))).status).toBe(412);
    const h = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'cw' }));
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'cw', Body: 'v2', IfMatch: '"0123"' })))).code).toBe('PreconditionFailed');
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'absent', Body: 'v2', IfMatch: h.ETag })))).code).toBe('NoSuchKey');
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'cw', Body: 'v2', IfMatch: h.ETag }));

    const a = await mpu('cw', [Buffer.from('mp')]);
    expect(
      (await s3Error(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'cw', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts }, IfNoneMatch: '*' })))).code,
    ).toBe('PreconditionFailed');
    expect(
      (await s3Error(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'cw', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts }, IfMatch: h.ETag })))).code,
    ).toBe('PreconditionFailed');
    const cur = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'cw' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'cw', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts }, IfMatch: cur.ETag }));
    const b = await mpu('cw-new', [Buffer.from('mp')]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'cw-new', UploadId: b.uploadId, MultipartUpload: { Parts: b.parts }, IfNoneMatch: '*' }));

    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'details', Key: 'cw', CopySource: 'details/cw-new', IfNoneMatch: '*' })))).code).toBe('PreconditionFailed');
    await s3.send(new CopyObjectCommand({ Bucket: 'details', Key: 'cw-copy', CopySource: 'details/cw-new', IfNoneMatch: '*' }));
    const now = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'cw' }));
    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'details', Key: 'cw', CopySource: 'details/cw-new', IfMatch: '"ffff"' })))).code).toBe('PreconditionFailed');
    await s3.send(new CopyObjectCommand({ Bucket: 'details', Key: 'cw', CopySource: 'details/cw-new', IfMatch: now.ETag }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'cw' }));
    expect(await got.Body!.transformToString()).toBe('mp');
  });
});

describe('multipart', () => {
  it('a retried CompleteMultipartUpload after success answers 200 with the same ETag', async () => {
    const a = await mpu('retry', [fill(5 * MiB, 1), Buffer.from('tail')]);
    const cmd = () => new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'retry', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts } });
    const first = await s3.send(cmd());
    const again = await s3.send(cmd());
    expect(again.$metadata.httpStatusCode).toBe(200);
    expect(again.ETag).toBe(first.ETag);
    // a different part list for the finished upload is not a retry
    expect((await s3Error(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'retry', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts.slice(1) } })))).code).toBe(
      'NoSuchUpload',
    );
  });

  it('GET and HEAD with partNumber; a part re-uploaded after later parts wins', async () => {
    const p1 = fill(5 * MiB, 2);
    const p2 = fill(5 * MiB, 3);
    const p3 = Buffer.from('three');
    const a = await mpu('parts', [p1, p2, p3]);
    const p1b = fill(5 * MiB, 4);
    const re = await s3.send(new UploadPartCommand({ Bucket: 'details', Key: 'parts', UploadId: a.uploadId, PartNumber: 1, Body: p1b }));
    a.parts[0] = { PartNumber: 1, ETag: re.ETag };
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: 'parts', UploadId: a.uploadId, MultipartUpload: { Parts: a.parts } }));
    const whole = await s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'parts' }));
    expect(Buffer.from(await whole.Body!.transformToByteArray()).equals(Buffer.concat([p1b, p2, p3]))).toBe(true);
    const g2 = await s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'parts', PartNumber: 2 }));
    expect(g2.$metadata.httpStatusCode).toBe(206);
    expect(g2.ContentRange).toBe(`bytes ${5 * MiB}-${10 * MiB - 1}/${10 * MiB + 5}`);
    expect(g2.PartsCount).toBe(3);
    expect(Buffer.from(await g2.Body!.transformToByteArray()).equals(p2)).toBe(true);
    const h3 = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'parts', PartNumber: 3 }));
    expect(h3.ContentLength).toBe(5);
    expect(h3.ContentRange).toBe(`bytes ${10 * MiB}-${10 * MiB + 4}/${10 * MiB + 5}`);
    expect(h3.PartsCount).toBe(3);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'parts', PartNumber: 4 })))).code).toBe('InvalidPartNumber');
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'parts', PartNumber: 4 })))).status).toBe(416);
    // a single-part object answers partNumber=1 with the whole object
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'single', Body: 'whole' }));
    const s1 = await s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'single', PartNumber: 1 }));
    expect(await s1.Body!.transformToString()).toBe('whole');
  });

  it('composite and full-object checksums across parts, returned with x-amz-checksum-mode: ENABLED and by GetObjectAttributes', async () => {
    const parts = [fill(5 * MiB, 5), Buffer.from('end')];
    for (const [alg, type] of [
      ['CRC32', 'COMPOSITE'],
      ['CRC32C', 'FULL_OBJECT'],
      ['CRC64NVME', 'FULL_OBJECT'],
      ['SHA1', 'COMPOSITE'],
      ['SHA256', 'COMPOSITE'],
    ] as const) {
      const key = `ck-${alg}`;
      const a = await mpu(key, parts, { alg: alg as ChecksumAlgorithm, type });
      const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'details', Key: key, UploadId: a.uploadId, MultipartUpload: { Parts: a.parts } }));
      const perPart = parts.map((p) => checksumBase64(alg, p));
      const expected = type === 'COMPOSITE' ? compositeChecksum(alg, perPart) : fullObjectChecksum(alg, parts.map((p, i) => ({ value: perPart[i]!, size: p.length })));
      const field = `Checksum${alg}` as 'ChecksumCRC32';
      expect(done[field]).toBe(expected);
      expect(done.ChecksumType).toBe(type);
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: key, ChecksumMode: 'ENABLED' }));
      expect([head[field], head.ChecksumType]).toEqual([expected, type]);
      const plain = await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: key }));
      expect(plain[field]).toBeUndefined();
      const get = await s3.send(new GetObjectCommand({ Bucket: 'details', Key: key, ChecksumMode: 'ENABLED' }));
      expect(get[field]).toBe(expected);
      await get.Body!.transformToByteArray();
      const attrs = await s3.send(new GetObjectAttributesCommand({ Bucket: 'details', Key: key, ObjectAttributes: ['Checksum', 'ObjectParts'] }));
      expect(attrs.Checksum?.[field]).toBe(expected);
      expect(attrs.Checksum?.ChecksumType).toBe(type);
      expect(attrs.ObjectParts?.TotalPartsCount).toBe(2);
    }
  });
});

describe('checksums', () => {
  it('BadDigest for a mismatch of every algorithm, SHA-1 and SHA-256 included; nothing stored', async () => {
    for (const alg of ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const) {
      const wrong = checksumBase64(alg, Buffer.from('something else'));
      const field = `Checksum${alg}` as 'ChecksumCRC32';
      const e = await s3Error(s3.send(new PutObjectCommand({ Bucket: 'details', Key: `bad-${alg}`, Body: 'payload', [field]: wrong })));
      expect([alg, e.code, e.status]).toEqual([alg, 'BadDigest', 400]);
      expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'details', Key: `bad-${alg}` })))).status).toBe(404);
      const ok = await s3.send(new PutObjectCommand({ Bucket: 'details', Key: `bad-${alg}`, Body: 'payload', [field]: checksumBase64(alg, Buffer.from('payload')) }));
      expect(ok[field]).toBe(checksumBase64(alg, Buffer.from('payload')));
    }
  });
});

describe('responses', () => {
  it('304 responses carry the ETag', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'nm', Body: 'x' }));
    for (const method of ['GET', 'HEAD']) {
      const r = await fetch(await getSignedUrl(s3, method === 'GET' ? new GetObjectCommand({ Bucket: 'details', Key: 'nm' }) : new HeadObjectCommand({ Bucket: 'details', Key: 'nm' })), {
        method,
        headers: { 'if-none-match': put.ETag! },
      });
      expect(r.status).toBe(304);
      expect(r.headers.get('etag')).toBe(put.ETag);
      expect(r.headers.get('last-modified')).toBeTruthy();
    }
    const e = await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'nm', IfNoneMatch: put.ETag })));
    expect(e.status).toBe(304);
  });

  it('x-amz-delete-marker on deletes that create or remove a marker', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'details-ver' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'details-ver', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutObjectCommand({ Bucket: 'details-ver', Key: 'k', Body: 'x' }));
    const del = await s3.send(new DeleteObjectCommand({ Bucket: 'details-ver', Key: 'k' }));
    expect(del.DeleteMarker).toBe(true);
    expect(del.VersionId).toBeTruthy();
    const gone = await s3.send(new DeleteObjectCommand({ Bucket: 'details-ver', Key: 'k', VersionId: del.VersionId }));
    expect(gone.DeleteMarker).toBe(true);
    expect(gone.VersionId).toBe(del.VersionId);
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: 'details-ver' }));
    const plain = await s3.send(new DeleteObjectCommand({ Bucket: 'details-ver', Key: 'k', VersionId: versions.Versions![0]!.VersionId }));
    expect(plain.DeleteMarker).toBeUndefined();
    const multi = await s3.send(new DeleteObjectsCommand({ Bucket: 'details-ver', Delete: { Objects: [{ Key: 'm' }] } }));
    expect(multi.Deleted?.[0]).toMatchObject({ Key: 'm', DeleteMarker: true });
  });

  it('tags with empty values', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'tags', Body: 'x', Tagging: 'empty=&k=v' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'details', Key: 'tags' }))).TagSet).toEqual([
      { Key: 'empty', Value: '' },
      { Key: 'k', Value: 'v' },
    ]);
    await s3.send(new PutObjectTaggingCommand({ Bucket: 'details', Key: 'tags', Tagging: { TagSet: [{ Key: 'only', Value: '' }] } }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'details', Key: 'tags' }))).TagSet).toEqual([{ Key: 'only', Value: '' }]);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'tags' }))).$metadata.httpStatusCode).toBe(200);
  });
});

describe('GET bodies from reused read buffers', () => {
  /** Reads a fetch body a little at a time, so the server's socket writes wait on the client. */
  async function slowRead(url: string, headers: Record<string, string> = {}): Promise<Buffer> {
    const r = await fetch(url, { headers });
    expect(r.status).toBeLessThan(300);
    const reader = r.body!.getReader();
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      await new Promise((res) => setTimeout(res, 1));
    }
    return Buffer.concat(parts);
  }

  it('slow and concurrent readers get every byte right, and the read lock is released however a GET ends', async () => {
    const body = fill(9 * MiB + 123, 7);
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'slow', Body: body }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'details', Key: 'slow' }));
    const [a, b, ranged] = await Promise.all([slowRead(url), slowRead(url), slowRead(url, { range: `bytes=${MiB - 5}-${5 * MiB + 7}` })]);
    expect(a.equals(body)).toBe(true);
    expect(b.equals(body)).toBe(true);
    expect(ranged.equals(body.subarray(MiB - 5, 5 * MiB + 8))).toBe(true);

    // A reader that goes away mid-body, and one refused by a precondition, leave no lock behind: an overwrite goes through.
    const abort = new AbortController();
    const r = await fetch(url, { signal: abort.signal });
    const reader = r.body!.getReader();
    await reader.read();
    abort.abort();
    await reader.read().catch(() => undefined);
    const e = await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'slow', IfMatch: '"nope"' })));
    expect(e.status).toBe(412);
    // A response header override no header can carry: a clear 400, and the lock is released too.
    const bad = await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'slow', ResponseContentDisposition: 'attachment; filename="\u2603.txt"' })));
    expect(bad).toMatchObject({ code: 'InvalidArgument', status: 400 });
    const next = fill(3 * MiB, 9);
    await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'slow', Body: next }));
    expect((await slowRead(url)).equals(next)).toBe(true);
  });

  it('a GET refused after its first block was read (304, 412, a bad header override) closes its shard files at once', async () => {
    const body = fill(3 * MiB + 17, 3);
    const put = await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'fds', Body: body }));
    /** This process's open files under the drives that are shard files (`part.N`). */
    const openParts = async (): Promise<number> => {
      let n = 0;
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (target.startsWith(srv.root) && /\/part\.\d+$/.test(target)) n++;
      }
      return n;
    };
    expect(await openParts()).toBe(0);
    for (let i = 0; i < 10; i++) {
      expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds', IfNoneMatch: put.ETag })))).status).toBe(304);
      expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds', IfMatch: '"nope"' })))).status).toBe(412);
      expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds', ResponseContentDisposition: 'x; filename="\u2603"' })))).status).toBe(400);
    }
    // Before the fix these stayed open until a garbage collection ("Closing file descriptor ... on
    // garbage collection"): two data shards per refused GET. Closing is asynchronous: a bounded wait.
    const deadline = Date.now() + 5_000;
    let open = await openParts();
    while (open > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      open = await openParts();
    }
    expect(open).toBe(0);

    // The preconditions are decided before any shard is read: with every shard file of the object
    // gone, the refusals still answer, while a plain GET cannot be served.
    const parts: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        if (e.isDirectory()) await walk(join(dir, e.name));
        else if (/^part\.\d+$/.test(e.name) && dir.includes(`${sep}fds${sep}`)) parts.push(join(dir, e.name));
      }
    };
    await walk(srv.root);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    await Promise.all(parts.map((f) => rm(f)));
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds', IfNoneMatch: put.ETag })))).status).toBe(304);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds', IfMatch: '"nope"' })))).status).toBe(412);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'details', Key: 'fds' })))).status).toBe(503);
    await s3.send(new DeleteObjectCommand({ Bucket: 'details', Key: 'fds' }));
  });
});

describe('listing', () => {
  it('ListBuckets with max-buckets, continuation and prefix', async () => {
    for (const b of ['lb-a', 'lb-b', 'lb-c', 'other-lb']) await s3.send(new CreateBucketCommand({ Bucket: b }));
    const p1 = await s3.send(new ListBucketsCommand({ MaxBuckets: 2, Prefix: 'lb-' }));
    expect(p1.Buckets?.map((b) => b.Name)).toEqual(['lb-a', 'lb-b']);
    expect(p1.Prefix).toBe('lb-');
    expect(p1.ContinuationToken).toBeTruthy();
    const p2 = await s3.send(new ListBucketsCommand({ MaxBuckets: 2, Prefix: 'lb-', ContinuationToken: p1.ContinuationToken }));
    expect(p2.Buckets?.map((b) => b.Name)).toEqual(['lb-c']);
    expect(p2.ContinuationToken).toBeUndefined();
    const all = await s3.send(new ListBucketsCommand({}));
    expect(all.Buckets?.map((b) => b.Name)).toEqual(expect.arrayContaining(['details', 'lb-a', 'other-lb']));
    expect(all.ContinuationToken).toBeUndefined();
    expect((await s3Error(s3.send(new ListBucketsCommand({ MaxBuckets: 0 })))).code).toBe('InvalidArgument');
    expect((await s3Error(s3.send(new ListBucketsCommand({ ContinuationToken: '!!!' })))).code).toBe('InvalidArgument');
  });

  it('a prefix ending with the delimiter returns the key itself; empty continuation tokens', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'details-list' }));
    for (const k of ['dir/', 'dir/a', 'dir/sub/b', 'dirx']) await s3.send(new PutObjectCommand({ Bucket: 'details-list', Key: k, Body: 'x' }));
    const r = await s3.send(new ListObjectsV2Command({ Bucket: 'details-list', Prefix: 'dir/', Delimiter: '/' }));
    expect(r.Contents?.map((c) => c.Key)).toEqual(['dir/', 'dir/a']);
    expect(r.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['dir/sub/']);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'details-list', Prefix: 'dir/', Delimiter: '/' }));
    expect(v1.Contents?.map((c) => c.Key)).toEqual(['dir/', 'dir/a']);
    const empty = await fetch(await getSignedUrl(s3, new ListObjectsV2Command({ Bucket: 'details-list', ContinuationToken: '' })));
    expect(empty.status).toBe(200);
    const text = await empty.text();
    expect(text).toContain('<Key>dirx</Key>');
  });

  it('encoding-type=url applies to every returned key, prefix and delimiter', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'details-enc' }));
    for (const k of ['a b/c+d', 'a b/e&f/g', 'a b/h\u0001']) await s3.send(new PutObjectCommand({ Bucket: 'details-enc', Key: k, Body: 'x' }));
    // keys come back percent-encoded (space %20, '+' %2B, '/' kept), every field the same way
    const dec = (s: string | undefined) => (s === undefined ? s : decodeURIComponent(s));
    const v2 = await s3.send(new ListObjectsV2Command({ Bucket: 'details-enc', Prefix: 'a b/', Delimiter: '&', EncodingType: 'url', StartAfter: 'a b/', MaxKeys: 1 }));
    expect([v2.Prefix, v2.Delimiter, v2.StartAfter, v2.Contents?.[0]?.Key]).toEqual(['a%20b/', '%26', 'a%20b/', 'a%20b/c%2Bd']);
    const next = await s3.send(new ListObjectsV2Command({ Bucket: 'details-enc', Prefix: 'a b/', Delimiter: '&', EncodingType: 'url', ContinuationToken: v2.NextContinuationToken }));
    expect(next.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['a%20b/e%26']);
    expect(next.Contents?.map((c) => dec(c.Key))).toEqual(['a b/h\u0001']);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'details-enc', Prefix: 'a b/', EncodingType: 'url', Marker: 'a b/c+d', MaxKeys: 1 }));
    expect([v1.Prefix, v1.Marker, v1.Contents?.[0]?.Key, v1.NextMarker]).toEqual(['a%20b/', 'a%20b/c%2Bd', 'a%20b/e%26f/g', 'a%20b/e%26f/g']);
    const ver = await s3.send(new ListObjectVersionsCommand({ Bucket: 'details-enc', Prefix: 'a b/', EncodingType: 'url', KeyMarker: 'a b/c+d', Delimiter: '/' }));
    expect([ver.Prefix, ver.KeyMarker, ver.Delimiter, ver.Versions?.map((v) => v.Key)]).toEqual(['a%20b/', 'a%20b/c%2Bd', '/', ['a%20b/h%01']]);
    expect(ver.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['a%20b/e%26f/']);
    await s3.send(new CreateMultipartUploadCommand({ Bucket: 'details-enc', Key: 'a b/up+load' }));
    const ups = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'details-enc', Prefix: 'a b/', EncodingType: 'url' }));
    expect([ups.Prefix, ups.Uploads?.map((u) => u.Key)]).toEqual(['a%20b/', ['a%20b/up%2Bload']]);
  });
});

describe('authentication details', () => {
  it('Expect: 100-continue is authenticated before the body: 403 instead of 100, nothing stored', async () => {
    const bad = client('not-the-secret');
    try {
      const e = await s3Error(bad.send(new PutObjectCommand({ Bucket: 'details', Key: 'expect', Body: fill(3 * MiB, 6) })));
      expect([e.code, e.status]).toEqual(['SignatureDoesNotMatch', 403]);
    } finally {
      bad.destroy();
    }
    // the same over a raw socket: the server never sends 100 Continue to a refused request
    const u = new URL(srv.endpoint);
    const outcome = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = request({ host: u.hostname, port: u.port, method: 'PUT', path: '/details/expect', headers: { expect: '100-continue', 'content-length': String(MiB) } });
      req.on('continue', () => {
        continued = true;
        req.end(Buffer.alloc(MiB));
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, continued }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(outcome).toEqual({ status: 403, continued: false });
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'expect' })))).status).toBe(404);
    // an authorised request with Expect gets its 100 and stores
    const good = await s3.send(new PutObjectCommand({ Bucket: 'details', Key: 'expect', Body: fill(3 * MiB, 7) }));
    expect(good.ETag).toBeTruthy();
  });

  it('expired presigned URLs are 403', async () => {
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'details', Key: 'nm' }), { expiresIn: 60, signingDate: new Date(Date.now() - 3600_000) });
    const r = await fetch(url);
    expect(r.status).toBe(403);
    expect(await r.text()).toContain('<Code>AccessDenied</Code>');
    const put = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'details', Key: 'late' }), { expiresIn: 1, signingDate: new Date(Date.now() - 5_000) });
    expect((await fetch(put, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'late' })))).status).toBe(404);
  });

  it('CreateBucket on an existing bucket you own: 200 in us-east-1, BucketAlreadyOwnedByYou elsewhere', async () => {
    const again = await s3.send(new CreateBucketCommand({ Bucket: 'details' }));
    expect(again.$metadata.httpStatusCode).toBe(200);
    // the existing bucket is untouched
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'details', Key: 'nm' }))).$metadata.httpStatusCode).toBe(200);
    const eu = await start({ region: 'eu-west-1' });
    const c = new S3Client({ requestHandler: keepAliveHandler(), endpoint: eu.endpoint, region: 'eu-west-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: eu.accessKey, secretAccessKey: eu.secretKey } });
    try {
      await c.send(new CreateBucketCommand({ Bucket: 'mine', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
      const e = await s3Error(c.send(new CreateBucketCommand({ Bucket: 'mine', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } })));
      expect([e.code, e.status]).toEqual(['BucketAlreadyOwnedByYou', 409]);
    } finally {
      c.destroy();
      await eu.stop();
    }
  });
});

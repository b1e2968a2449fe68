/**
 * S3 additional checksums exactly as S3 defines them, checked with the AWS
 * SDK's own checksum helpers (`@aws-sdk/checksums`: Crc32, Crc32c, Crc64Nvme,
 * Sha1, Sha256) and `@aws-sdk/client-s3` (issue 28, item 5):
 *
 * - COMPOSITE multipart checksum: the algorithm over the concatenated raw
 *   part checksums, base64, `-<parts>` appended (CRC32, CRC32C, SHA-1, SHA-256);
 * - FULL_OBJECT multipart checksum: the CRC of the whole object, combined
 *   from the parts' CRCs (CRC32, CRC32C, CRC64NVME);
 * - a wrong value on PutObject (well-formed base64 of any length) is `BadDigest`.
 */
import { Crc32, Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { Sha1, Sha256 } from '@aws-sdk/checksums/sha';
import {
  type ChecksumAlgorithm,
  type ChecksumType,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from './helpers/s3-error.ts';
import { fileData } from './helpers/cli.ts';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

type Alg = 'CRC32' | 'CRC32C' | 'CRC64NVME' | 'SHA1' | 'SHA256';
const HELPERS: Record<Alg, new () => { update(b: Uint8Array): void; digest(): Promise<Uint8Array> }> = {
  CRC32: Crc32,
  CRC32C: Crc32c,
  CRC64NVME: Crc64Nvme,
  SHA1: Sha1,
  SHA256: Sha256,
};

async function digest(alg: Alg, ...chunks: Uint8Array[]): Promise<Buffer> {
  const h = new HELPERS[alg]();
  for (const c of chunks) h.update(c);
  return Buffer.from(await h.digest());
}

const field = (alg: Alg) => `Checksum${alg}` as const;

let srv: S3Server;
let s3: S3Client;

beforeAll(async () => {
  srv = await start();
  // the client computes no checksum of its own: every value sent is the helpers' (or a deliberately wrong one)
  s3 = new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region: srv.region,
    forcePathStyle: true,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'sums' }));
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});


const PARTS = [fileData(5 * 1024 * 1024, 'p1'), fileData(5 * 1024 * 1024 + 17, 'p2'), fileData(1234, 'p3')];
const CASES: [Alg, ChecksumType][] = [
  ['CRC32', 'COMPOSITE'],
  ['CRC32C', 'COMPOSITE'],
  ['SHA1', 'COMPOSITE'],
  ['SHA256', 'COMPOSITE'],
  ['CRC32', 'FULL_OBJECT'],
  ['CRC32C', 'FULL_OBJECT'],
  ['CRC64NVME', 'FULL_OBJECT'],
];

describe('multipart checksums with the SDK helpers', () => {
  it.each(CASES)('%s %s: parts, the object value, HEAD, GetObjectAttributes, a wrong value refused', async (alg, type) => {
    const key = `mp-${alg}-${type}`;
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sums', Key: key, ChecksumAlgorithm: alg as ChecksumAlgorithm, ChecksumType: type }));
    expect(created.ChecksumAlgorithm).toBe(alg);
    expect(created.ChecksumType).toBe(type);
    const uploadId = created.UploadId!;
    const partSums: Buffer[] = [];
    const parts = [];
    for (const [i, body] of PARTS.entries()) {
      const sum = await digest(alg, body);
      partSums.push(sum);
      const r = await s3.send(new UploadPartCommand({ Bucket: 'sums', Key: key, UploadId: uploadId, PartNumber: i + 1, Body: body, [field(alg)]: sum.toString('base64') }));
      expect(r[field(alg)]).toBe(sum.toString('base64'));
      parts.push({ PartNumber: i + 1, ETag: r.ETag!, [field(alg)]: sum.toString('base64') });
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'sums', Key: key, UploadId: uploadId }));
    expect(listed.Parts!.map((p) => p[field(alg)])).toEqual(partSums.map((s) => s.toString('base64')));

    const expected =
      type === 'COMPOSITE' ? `${(await digest(alg, ...partSums)).toString('base64')}-${PARTS.length}` : (await digest(alg, ...PARTS)).toString('base64');
    // a wrong object value (the other mode's, well-formed) is BadDigest, and the upload stays
    const wrong = type === 'COMPOSITE' ? (await digest(alg, ...PARTS)).toString('base64') : `${(await digest(alg, ...partSums)).toString('base64')}`;
    const bad = await errorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'sums', Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, [field(alg)]: wrong })));
    expect(bad).toEqual({ code: 'BadDigest', status: 400 });
    const otherType = type === 'COMPOSITE' ? 'FULL_OBJECT' : 'COMPOSITE';
    const mismatch = await errorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'sums', Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, ChecksumType: otherType })));
    expect(mismatch).toEqual({ code: 'InvalidRequest', status: 400 });
    const size = PARTS.reduce((n, p) => n + p.length, 0);
    const wrongSize = await errorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'sums', Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, MpuObjectSize: size + 1 })));
    expect(wrongSize).toEqual({ code: 'InvalidRequest', status: 400 });

    const done = await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'sums', Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, [field(alg)]: expected, ChecksumType: type, MpuObjectSize: size }),
    );
    expect(done[field(alg)]).toBe(expected);
    expect(done.ChecksumType).toBe(type);

    const head = await s3.send(new HeadObjectCommand({ Bucket: 'sums', Key: key, ChecksumMode: 'ENABLED' }));
    expect(head[field(alg)]).toBe(expected);
    expect(head.ChecksumType).toBe(type);
    const attrs = await s3.send(new GetObjectAttributesCommand({ Bucket: 'sums', Key: key, ObjectAttributes: ['Checksum', 'ObjectParts'] }));
    expect(attrs.Checksum?.[field(alg)]).toBe(expected);
    expect(attrs.Checksum?.ChecksumType).toBe(type);
    expect(attrs.ObjectParts?.Parts?.map((p) => p[field(alg)])).toEqual(partSums.map((s) => s.toString('base64')));
    if (type === 'FULL_OBJECT') {
      // the whole-object value is the helper's checksum of the bytes a GET returns
      const got = await s3.send(new GetObjectCommand({ Bucket: 'sums', Key: key, ChecksumMode: 'ENABLED' }));
      const body = Buffer.from(await got.Body!.transformToByteArray());
      expect((await digest(alg, body)).toString('base64')).toBe(got[field(alg)]);
    }
  }, 60_000);
});

describe('single PUT checksums', () => {
  it.each(['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as Alg[])('%s: the helper value is stored; a wrong one is BadDigest and stores nothing', async (alg) => {
    const body = fileData(70_000, `put-${alg}`);
    const sum = (await digest(alg, body)).toString('base64');
    const put = await s3.send(new PutObjectCommand({ Bucket: 'sums', Key: `put-${alg}`, Body: body, [field(alg)]: sum }));
    expect(put[field(alg)]).toBe(sum);
    // a well-formed value of the wrong length (as in the ceph s3-tests) and the checksum of other bytes
    for (const wrong of ['ABCD', (await digest(alg, Buffer.from('other'))).toString('base64')]) {
      const e = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'sums', Key: `bad-${alg}`, Body: body, [field(alg)]: wrong })));
      expect(e).toEqual({ code: 'BadDigest', status: 400 });
    }
    const missing = await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'sums', Key: `bad-${alg}` })));
    expect(missing?.status).toBe(404);
  });
});

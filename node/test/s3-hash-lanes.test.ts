/**
 * Upload bodies hashed in the multi-buffer lanes (`erasure/hash-service.ts`)
 * through a real `svc server` with `SVC_HASH_MULTIBUFFER=on` and
 * @aws-sdk/client-s3: many concurrent PUTs and parts of every size class
 * get the ETag of their bytes (MD5, and the multipart ETag of the parts'
 * MD5s) and read back byte-exact; a wrong Content-MD5 and a wrong
 * x-amz-content-sha256 among them are refused and leave nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mbHashKernels } from '../src/erasure/mb-hash.ts';
import { errorCode, signedRequest } from './helpers/sigv4-signer.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, type ConsoleNode, startConsoleNode } from './helpers/console.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe.skipIf(mbHashKernels.length === 0)('upload hashing in the multi-buffer lanes (real svc server)', () => {
  let node: ConsoleNode;
  let s3: S3Client;
  let endpoint: string;

  beforeAll(async () => {
    node = await startConsoleNode(1, { SVC_HASH_MULTIBUFFER: 'on' });
    expect(node.run.logs().find((r) => r['event'] === 'startup_upload_hashing')).toMatchObject({ mode: 'on', kernel: mbHashKernels[0], largeUploadsInService: true, sha256InLanes: true });
    ({ s3, s3Url: endpoint } = node);
    await s3.send(new CreateBucketCommand({ Bucket: 'lanes' }));
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
  });

  const status = async (p: Promise<unknown>) =>
    p.then(
      () => 200,
      (err: unknown) => (err instanceof S3ServiceException ? err.$metadata.httpStatusCode : -1),
    );

  it('concurrent PUTs of every size class: ETag is the MD5 of the bytes, bodies read back; bad digests refused among them', async () => {
    const sizes = [0, 1, 63, 64, 65, 1000, 65_535, 65_536, 65_537, 300_000, 1_048_577, 3 * 1024 * 1024 + 17];
    const bodies = sizes.map((n) => randomBytes(n));
    const bad = [
      // Content-MD5 of other bytes
      s3.send(new PutObjectCommand({ Bucket: 'lanes', Key: 'bad-md5', Body: randomBytes(200_000), ContentMD5: createHash('md5').update('other').digest('base64') })).then(
        () => 'accepted',
        (e: unknown) => (e as Error).name,
      ),
      // a signed payload hash of other bytes
      signedRequest(endpoint, { accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY }, { method: 'PUT', path: '/lanes/bad-sha', headers: { 'x-amz-content-sha256': sha256('declared'), 'content-length': '100000' }, body: randomBytes(100_000) }).then((r) => errorCode(r.body)),
    ];
    const puts = bodies.map((body, i) => s3.send(new PutObjectCommand({ Bucket: 'lanes', Key: `obj-${i}`, Body: body })));
    const [results, refusals] = await Promise.all([Promise.all(puts), Promise.all(bad)]);
    results.forEach((r, i) => expect(r.ETag, `ETag of ${sizes[i]} bytes`).toBe(`"${md5(bodies[i]!)}"`));
    expect(refusals).toEqual(['BadDigest', 'XAmzContentSHA256Mismatch']);
    for (const key of ['bad-md5', 'bad-sha']) expect(await status(s3.send(new HeadObjectCommand({ Bucket: 'lanes', Key: key })))).toBe(404);
    for (const [i, body] of bodies.entries()) {
      const got = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'lanes', Key: `obj-${i}` }))).Body!.transformToByteArray());
      expect(got.equals(body), `obj-${i}`).toBe(true);
    }
  });

  it('parts uploaded concurrently: each part ETag is its MD5, the object ETag the MD5 of their digests', async () => {
    const parts = [5 * 1024 * 1024, 5 * 1024 * 1024 + 1, 123_457].map((n) => randomBytes(n));
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'lanes', Key: 'mp' }));
    const etags = await Promise.all(parts.map((p, i) => s3.send(new UploadPartCommand({ Bucket: 'lanes', Key: 'mp', UploadId: up.UploadId, PartNumber: i + 1, Body: p })).then((r) => r.ETag!)));
    expect(etags).toEqual(parts.map((p) => `"${md5(p)}"`));
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'lanes', Key: 'mp', UploadId: up.UploadId, MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) } }));
    const whole = createHash('md5').update(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest()))).digest('hex');
    expect(done.ETag).toBe(`"${whole}-3"`);
    const got = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'lanes', Key: 'mp' }))).Body!.transformToByteArray());
    expect(got.equals(Buffer.concat(parts))).toBe(true);
  });
});

/**
 * Server-side encryption through @aws-sdk/client-s3 against the real server
 * (engine over real drives, real HTTP): SSE-C on every operation (PUT, GET,
 * ranged GET, HEAD, copy with source keys, multipart with the key on every
 * part, part copy), SSE-S3 and SSE-KMS with the local key store, bucket
 * default encryption; the drives hold no plaintext (checked on disk), and a
 * restart over the same drives keeps everything readable.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketEncryptionCommand,
  GetBucketEncryptionCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketEncryptionCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL_PACKAGE, PACKAGE_SIZE } from '../src/crypto/package-cipher.ts';
import { clientOf, kmsKeyLine, s3Error, testKms } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

const MiB = 1024 * 1024;
const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
const kms = testKms(kmsKeyLine('cluster-key'), kmsKeyLine('second'));

let srv: S3Server;
let s3: S3Client;

beforeAll(async () => {
  srv = await start({ kms });
  s3 = clientOf(srv);
  for (const b of ['ssec', 'sses3', 'ssedefault']) await s3.send(new CreateBucketCommand({ Bucket: b }));
});
afterAll(async () => {
  await srv?.stop();
});

/** Plaintext that is easy to find on disk: a marker repeated, then random bytes. */
function marked(size: number, marker: string): Buffer {
  const b = Buffer.alloc(size);
  const m = Buffer.from(marker);
  for (let i = 0; i + m.length <= size; i += m.length * 4) m.copy(b, i);
  return b;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

async function bytesOf(r: { Body?: { transformToByteArray(): Promise<Uint8Array> } }): Promise<Buffer> {
  return Buffer.from(await r.Body!.transformToByteArray());
}

/** Every file under the drive roots (shard files and xl.meta). */
async function driveFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(p);
    }
  };
  await walk(root);
  return out;
}

/** Drive files holding `needle`. */
async function filesContaining(root: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const f of await driveFiles(root)) if ((await readFile(f)).includes(needle)) hits.push(f);
  return hits;
}

const ssec = (key: Buffer) => ({ SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64') });

describe('SSE-C', () => {
  const body = marked(3 * PACKAGE_SIZE + 4321, 'SSEC-PLAINTEXT-MARKER');

  beforeAll(async () => {
    const r = await s3.send(new PutObjectCommand({ Bucket: 'ssec', Key: 'obj', Body: body, ...ssec(KEY_A) }));
    expect(r.SSECustomerAlgorithm).toBe('AES256');
    expect(r.SSECustomerKeyMD5).toBe(createHash('md5').update(KEY_A).digest('base64'));
    // S3 does not show the plaintext MD5 of an SSE-C object
    expect(r.ETag).not.toBe(`"${md5(body)}"`);
  });

  it('is unreadable without the key and with a wrong key', async () => {
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'obj' })))).toMatchObject({ code: 'InvalidRequest', status: 400 });
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'ssec', Key: 'obj' })))).status).toBe(400);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'obj', ...ssec(KEY_B) })))).toMatchObject({ code: 'InvalidRequest', status: 400 });
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'ssec', Key: 'obj', ...ssec(KEY_B) })))).status).toBe(400);
  });

  it('is readable with the key, whole and in ranges (package boundaries, suffix, open end)', async () => {
    const whole = await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'obj', ...ssec(KEY_A) }));
    expect(whole.ContentLength).toBe(body.length);
    expect((await bytesOf(whole)).equals(body)).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'ssec', Key: 'obj', ...ssec(KEY_A) }));
    expect(head.ContentLength).toBe(body.length);
    expect(head.SSECustomerAlgorithm).toBe('AES256');
    for (const [range, from, to] of [
      ['bytes=0-0', 0, 0],
      [`bytes=${PACKAGE_SIZE - 3}-${PACKAGE_SIZE + 2}`, PACKAGE_SIZE - 3, PACKAGE_SIZE + 2],
      [`bytes=${2 * PACKAGE_SIZE}-${3 * PACKAGE_SIZE - 1}`, 2 * PACKAGE_SIZE, 3 * PACKAGE_SIZE - 1],
      ['bytes=-100', body.length - 100, body.length - 1],
      [`bytes=${body.length - 5000}-`, body.length - 5000, body.length - 1],
    ] as const) {
      const r = await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'obj', Range: range, ...ssec(KEY_A) }));
      expect(r.ContentRange).toBe(`bytes ${from}-${to}/${body.length}`);
      expect((await bytesOf(r)).equals(body.subarray(from, to + 1))).toBe(true);
    }
    // listings show the plaintext size
    const l = await s3.send(new ListObjectsV2Command({ Bucket: 'ssec' }));
    expect(l.Contents?.find((o) => o.Key === 'obj')?.Size).toBe(body.length);
  });

  it('copies with the source key to a new key (and refuses a copy without it)', async () => {
    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: 'ssec', Key: 'copy', CopySource: 'ssec/obj', ...ssec(KEY_B) })))).status).toBe(400);
    await s3.send(
      new CopyObjectCommand({
        Bucket: 'ssec',
        Key: 'copy',
        CopySource: 'ssec/obj',
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: KEY_A.toString('base64'),
        ...ssec(KEY_B),
      }),
    );
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'copy', ...ssec(KEY_A) })))).status).toBe(400);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'copy', ...ssec(KEY_B) })))).equals(body)).toBe(true);
    // a copy to plaintext: readable without any key
    await s3.send(new CopyObjectCommand({ Bucket: 'ssec', Key: 'plain', CopySource: 'ssec/obj', CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY_A.toString('base64') }));
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'plain' })))).equals(body)).toBe(true);
  });

  it('multipart: the key on every part (a part without it or with another is refused), part copy with source keys, ranges across parts', async () => {
    const p1 = marked(5 * MiB + 17, 'SSEC-MP-MARKER');
    const p2 = marked(5 * MiB + 3, 'SSEC-MP-MARKER');
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'ssec', Key: 'mp', ...ssec(KEY_A) }));
    expect(up.SSECustomerAlgorithm).toBe('AES256');
    const id = up.UploadId!;
    expect((await s3Error(s3.send(new UploadPartCommand({ Bucket: 'ssec', Key: 'mp', UploadId: id, PartNumber: 1, Body: p1 })))).status).toBe(400);
    expect((await s3Error(s3.send(new UploadPartCommand({ Bucket: 'ssec', Key: 'mp', UploadId: id, PartNumber: 1, Body: p1, ...ssec(KEY_B) })))).status).toBe(400);
    const r1 = await s3.send(new UploadPartCommand({ Bucket: 'ssec', Key: 'mp', UploadId: id, PartNumber: 1, Body: p1, ...ssec(KEY_A) }));
    const r2 = await s3.send(new UploadPartCommand({ Bucket: 'ssec', Key: 'mp', UploadId: id, PartNumber: 2, Body: p2, ...ssec(KEY_A) }));
    // part 3 copied from the SSE-C object, a range of it
    const r3 = await s3.send(
      new UploadPartCopyCommand({
        Bucket: 'ssec',
        Key: 'mp',
        UploadId: id,
        PartNumber: 3,
        CopySource: 'ssec/obj',
        CopySourceRange: 'bytes=100-70099',
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: KEY_A.toString('base64'),
        ...ssec(KEY_A),
      }),
    );
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'ssec', Key: 'mp', UploadId: id }));
    expect(parts.Parts?.map((p) => p.Size)).toEqual([p1.length, p2.length, 70_000]);
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'ssec',
        Key: 'mp',
        UploadId: id,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: r1.ETag }, { PartNumber: 2, ETag: r2.ETag }, { PartNumber: 3, ETag: r3.CopyPartResult?.ETag }] },
      }),
    );
    const all = Buffer.concat([p1, p2, body.subarray(100, 70_100)]);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'mp' })))).status).toBe(400);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'mp', ...ssec(KEY_A) })))).equals(all)).toBe(true);
    const from = p1.length - 10;
    const to = p1.length + p2.length + 10;
    const r = await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'mp', Range: `bytes=${from}-${to}`, ...ssec(KEY_A) }));
    expect((await bytesOf(r)).equals(all.subarray(from, to + 1))).toBe(true);
    const part2 = await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'mp', PartNumber: 2, ...ssec(KEY_A) }));
    expect((await bytesOf(part2)).equals(p2)).toBe(true);
  });

  it('the drives hold none of the plaintext (but in the copy made to plaintext on purpose)', async () => {
    const hits = await filesContaining(srv.root, 'SSEC-PLAINTEXT-MARKER');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.filter((f) => !f.includes(join('ssec', 'plain', '')))).toEqual([]);
    expect(await filesContaining(srv.root, 'SSEC-MP-MARKER')).toEqual([]);
  });
});

describe('SSE-S3 and SSE-KMS', () => {
  const big = marked(2 * MiB + 99, 'SSES3-PLAINTEXT-MARKER');
  const small = marked(3000, 'SSES3-INLINE-MARKER');

  it('SSE-S3: readable without a key, ETag is the plaintext MD5 (as S3), shard files and xl.meta hold no plaintext', async () => {
    const r = await s3.send(new PutObjectCommand({ Bucket: 'sses3', Key: 'big', Body: big, ServerSideEncryption: 'AES256' }));
    expect(r.ServerSideEncryption).toBe('AES256');
    expect(r.ETag).toBe(`"${md5(big)}"`);
    await s3.send(new PutObjectCommand({ Bucket: 'sses3', Key: 'small', Body: small, ServerSideEncryption: 'AES256' }));
    const g = await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'big' }));
    expect(g.ServerSideEncryption).toBe('AES256');
    expect((await bytesOf(g)).equals(big)).toBe(true);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'small' })))).equals(small)).toBe(true);
    const rr = await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'big', Range: `bytes=${MiB - 7}-${MiB + FULL_PACKAGE}` }));
    expect((await bytesOf(rr)).equals(big.subarray(MiB - 7, MiB + FULL_PACKAGE + 1))).toBe(true);
    // on disk: shard files of the big object exist, and nothing anywhere holds the plaintext
    const files = await driveFiles(join(srv.root));
    expect(files.filter((f) => f.includes(`${join('sses3', 'big')}`) && /part\.1$/.test(f)).length).toBe(4);
    expect(await filesContaining(srv.root, 'SSES3-PLAINTEXT-MARKER')).toEqual([]);
    expect(await filesContaining(srv.root, 'SSES3-INLINE-MARKER')).toEqual([]);
  });

  it('SSE-S3: slow, concurrent and ranged readers of a multi-block object get the plaintext (decrypted in reused read buffers)', async () => {
    const body = randomBytes(5 * MiB + 4321);
    await s3.send(new PutObjectCommand({ Bucket: 'sses3', Key: 'slow', Body: body, ServerSideEncryption: 'AES256' }));
    const slow = async (range?: string): Promise<Buffer> => {
      const g = await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'slow', ...(range ? { Range: range } : {}) }));
      const parts: Uint8Array[] = [];
      for await (const c of g.Body as AsyncIterable<Uint8Array>) {
        parts.push(c);
        await new Promise((r) => setTimeout(r, 1));
      }
      return Buffer.concat(parts);
    };
    const [a, b, r] = await Promise.all([slow(), slow(), slow(`bytes=${2 * MiB - 3}-${4 * MiB + 11}`)]);
    expect(a.equals(body)).toBe(true);
    expect(b.equals(body)).toBe(true);
    expect(r.equals(body.subarray(2 * MiB - 3, 4 * MiB + 12))).toBe(true);
  });

  it('SSE-KMS with a key id from the key store; an unknown key id is refused', async () => {
    const r = await s3.send(new PutObjectCommand({ Bucket: 'sses3', Key: 'kms', Body: big, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'second' }));
    expect(r.ServerSideEncryption).toBe('aws:kms');
    expect(r.SSEKMSKeyId).toBe('second');
    expect(r.ETag).not.toBe(`"${md5(big)}"`);
    const h = await s3.send(new HeadObjectCommand({ Bucket: 'sses3', Key: 'kms' }));
    expect([h.ServerSideEncryption, h.SSEKMSKeyId, h.ContentLength]).toEqual(['aws:kms', 'second', big.length]);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'kms' })))).equals(big)).toBe(true);
    const e = await s3Error(s3.send(new PutObjectCommand({ Bucket: 'sses3', Key: 'nokey', Body: 'x', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'no-such-key' })));
    expect(e).toMatchObject({ code: 'KMS.NotFoundException', status: 400 });
    // an SSE-C key offered for an SSE-KMS object is refused
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'kms', ...ssec(KEY_A) })))).status).toBe(400);
  });

  it('a node without a key store refuses SSE-S3 clearly, and still serves SSE-C', async () => {
    const bare = await start();
    try {
      const c = clientOf(bare);
      await c.send(new CreateBucketCommand({ Bucket: 'bare' }));
      expect(await s3Error(c.send(new PutObjectCommand({ Bucket: 'bare', Key: 'k', Body: 'x', ServerSideEncryption: 'AES256' })))).toMatchObject({ code: 'XSvcKMSNotConfigured', status: 501 });
      expect((await s3Error(c.send(new PutBucketEncryptionCommand({ Bucket: 'bare', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } })))).status).toBe(501);
      await c.send(new PutObjectCommand({ Bucket: 'bare', Key: 'c', Body: 'x', ...ssec(KEY_A) }));
    } finally {
      await bare.stop();
    }
  });
});

describe('bucket default encryption', () => {
  it('applies to PUT, copy and multipart without headers; explicit headers win; removal stops it', async () => {
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket: 'ssedefault',
        ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      }),
    );
    const got = await s3.send(new GetBucketEncryptionCommand({ Bucket: 'ssedefault' }));
    expect(got.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm).toBe('AES256');
    const body = marked(200_000, 'DEFAULT-ENC-MARKER');
    const put = await s3.send(new PutObjectCommand({ Bucket: 'ssedefault', Key: 'put', Body: body }));
    expect(put.ServerSideEncryption).toBe('AES256');
    await s3.send(new CopyObjectCommand({ Bucket: 'ssedefault', Key: 'copy', CopySource: 'ssec/plain' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'ssedefault', Key: 'copy' }))).ServerSideEncryption).toBe('AES256');
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'ssedefault', Key: 'mp' }));
    expect(up.ServerSideEncryption).toBe('AES256');
    const p = await s3.send(new UploadPartCommand({ Bucket: 'ssedefault', Key: 'mp', UploadId: up.UploadId, PartNumber: 1, Body: body }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'ssedefault', Key: 'mp', UploadId: up.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p.ETag }] } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'ssedefault', Key: 'mp' }))).ServerSideEncryption).toBe('AES256');
    const kms = await s3.send(new PutObjectCommand({ Bucket: 'ssedefault', Key: 'kms', Body: 'k', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'second' }));
    expect(kms.ServerSideEncryption).toBe('aws:kms');
    expect(await filesContaining(srv.root, 'DEFAULT-ENC-MARKER')).toEqual([]);
    // a KMS default naming a key the store lacks is refused
    const bad = await s3Error(
      s3.send(
        new PutBucketEncryptionCommand({
          Bucket: 'ssedefault',
          ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'missing' } }] },
        }),
      ),
    );
    expect(bad.code).toBe('KMS.NotFoundException');
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket: 'ssedefault' }));
    expect((await s3Error(s3.send(new GetBucketEncryptionCommand({ Bucket: 'ssedefault' })))).code).toBe('ServerSideEncryptionConfigurationNotFoundError');
    const after = await s3.send(new PutObjectCommand({ Bucket: 'ssedefault', Key: 'after', Body: 'plain now' }));
    expect(after.ServerSideEncryption).toBeUndefined();
  });
});

describe('restart', () => {
  it('keeps every encrypted object readable (same drives, same key store)', async () => {
    const root = srv.root;
    await srv.stop({ keepData: true });
    srv = await start({ kms, root });
    s3 = clientOf(srv);
    const body = marked(3 * PACKAGE_SIZE + 4321, 'SSEC-PLAINTEXT-MARKER');
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'ssec', Key: 'obj', ...ssec(KEY_A) })))).equals(body)).toBe(true);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'ssec', Key: 'mp', ...ssec(KEY_A) }))).ContentLength).toBe(5 * MiB + 17 + 5 * MiB + 3 + 70_000);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'big' })))).equals(marked(2 * MiB + 99, 'SSES3-PLAINTEXT-MARKER'))).toBe(true);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'sses3', Key: 'kms' })))).length).toBe(2 * MiB + 99);
    expect((await bytesOf(await s3.send(new GetObjectCommand({ Bucket: 'ssedefault', Key: 'mp' })))).equals(marked(200_000, 'DEFAULT-ENC-MARKER'))).toBe(true);
  });
});

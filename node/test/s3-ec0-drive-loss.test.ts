/**
 * The EC:0 report, reproduced against a real `svc server` process with
 * `@aws-sdk/client-s3`: on a 4-drive node with SVC_STORAGE_CLASS_STANDARD=EC:0,
 * one drive taken away must not turn the node into a 503 for everything.
 * SPEC Storage-class rule 6: listings, bucket operations, deletes and delete
 * markers keep working; only reads and writes of the zero-parity objects fail,
 * with ErasureReadQuorum / ErasureWriteQuorum. Losing the `.svc.sys` quorum
 * (three of four drives) still takes readiness away.
 */
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const base = tempDir('ec0');
let run: SvcRun | undefined;
afterAll(async () => {
  await run?.stop();
  rmSync(base, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<{ status: number | undefined; code: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { status: err.$metadata.httpStatusCode, code: err.name };
    throw err;
  }
  throw new Error('expected the request to fail');
}

interface Ready {
  status: number;
  body: { ready: boolean; details: { storage: { detail?: string } } };
  pending: string | null;
}

async function readiness(url: string): Promise<Ready> {
  const r = await fetch(`${url}/health/ready`);
  return { status: r.status, body: (await r.json()) as Ready['body'], pending: r.headers.get('x-svc-readiness-pending') };
}

/** Polls readiness until `pred` holds (the node re-checks its drives every few seconds). */
async function until(url: string, pred: (r: Ready) => boolean, what: string): Promise<Ready> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const r = await readiness(url);
    if (pred(r)) return r;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

describe('EC:0 on 4 drives, one drive taken away', () => {
  it('keeps listings, bucket operations and deletes; only zero-parity reads and writes fail', async () => {
    for (let i = 1; i <= 4; i++) mkdirSync(join(base, `d${i}`));
    run = await runSvc(['server', `${base}/d{1...4}`], { SVC_STORAGE_CLASS_STANDARD: 'EC:0' });
    expect(await run.started).toBe(true);
    const url = `http://127.0.0.1:${run.port}`;
    const s3 = new S3Client({
      requestHandler: keepAliveHandler(),
      endpoint: url,
      region: 'us-east-1',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin' },
    });
    try {
      await s3.send(new CreateBucketCommand({ Bucket: 'ec0' }));
      const big = Buffer.alloc(3 * 1024 * 1024 + 5, 9);
      await s3.send(new PutObjectCommand({ Bucket: 'ec0', Key: 'keep', Body: big }));
      await s3.send(new PutObjectCommand({ Bucket: 'ec0', Key: 'small', Body: 'small' }));
      await s3.send(new PutObjectCommand({ Bucket: 'ec0', Key: 'gone', Body: 'gone' }));

      renameSync(join(base, 'd4'), join(base, 'd4.away'));
      const r = await until(url, (x) => (x.body.details.storage.detail ?? '').includes('drives offline'), 'the node to see the missing drive');
      expect(r.status).toBe(200);
      expect(r.body.ready).toBe(true);

      // listings and bucket operations
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'ec0' }));
      expect(listed.Contents?.map((c) => c.Key)).toEqual(['gone', 'keep', 'small']);
      await s3.send(new CreateBucketCommand({ Bucket: 'ec0-other' }));
      await s3.send(new PutBucketVersioningCommand({ Bucket: 'ec0-other', VersioningConfiguration: { Status: 'Enabled' } }));
      const buckets = await s3.send(new ListBucketsCommand({}));
      expect(buckets.Buckets?.map((b) => b.Name)).toEqual(['ec0', 'ec0-other']);
      // zero-parity reads and writes fail with the spec's codes
      expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'ec0', Key: 'keep' })))).toEqual({ status: 503, code: 'ErasureReadQuorum' });
      expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'ec0', Key: 'small' })))).toEqual({ status: 503, code: 'ErasureReadQuorum' });
      expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'ec0', Key: 'keep' })))).status).toBe(503);
      expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'ec0', Key: 'new', Body: 'x' })))).toEqual({ status: 503, code: 'ErasureWriteQuorum' });
      // deletes (majority) and delete markers work
      const del = await s3.send(new DeleteObjectCommand({ Bucket: 'ec0', Key: 'gone' }));
      expect(del.$metadata.httpStatusCode).toBe(204);
      const marker = await s3.send(new DeleteObjectCommand({ Bucket: 'ec0-other', Key: 'never-written' }));
      expect(marker.DeleteMarker).toBe(true);
      const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: 'ec0-other' }));
      expect(versions.DeleteMarkers?.map((m) => m.Key)).toEqual(['never-written']);

      // losing the metadata quorum too (3 of 4 drives away) is storage quorum loss
      renameSync(join(base, 'd3'), join(base, 'd3.away'));
      renameSync(join(base, 'd2'), join(base, 'd2.away'));
      const lost = await until(url, (x) => x.status === 503, 'readiness to be lost');
      expect(lost.body.ready).toBe(false);
      const refused = await fetch(`${url}/ec0?list-type=2`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('x-svc-readiness-pending')).toBe('storage_quorum');
      expect(refused.headers.get('retry-after')).toBe('5');

      for (const d of ['d2', 'd3', 'd4']) renameSync(join(base, `${d}.away`), join(base, d));
      await until(url, (x) => x.status === 200 && !(x.body.details.storage.detail ?? '').includes('offline'), 'readiness to return');
      const got = await s3.send(new GetObjectCommand({ Bucket: 'ec0', Key: 'keep' }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(big)).toBe(true);
      expect(await failure(s3.send(new HeadObjectCommand({ Bucket: 'ec0', Key: 'gone' })))).toMatchObject({ status: 404 });
    } finally {
      s3.destroy();
    }
  }, 180_000);
});

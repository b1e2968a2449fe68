/**
 * Issue 27 items 2 and 8: storage errors that say what happened. A real
 * `svc server` on four small tmpfs drives:
 *
 * - keys no drive can hold are a 400 naming why (a segment over 255 bytes,
 *   a segment `xl.meta`, a data folder of the object above), and the
 *   bucket stays listable (a key `a/xl.meta` used to make every listing 503);
 * - drives that fill up make writes `507 XSvcStorageFull` (no Retry-After:
 *   retrying does not help until space is freed), not 503
 *   `ErasureWriteQuorum`; the write probe and the readiness detail say so;
 *   deleting objects makes room and writes succeed again.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './helpers/heal-server.ts';
import { errorCode, signedRequest } from './helpers/sigv4-signer.ts';
import { canMountTmpfs, mountTmpfs, unmountUnder } from './helpers/tmpfs.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CREDS = { accessKey: 'fulladmin', secretKey: 'full-admin-secret' };

describe.skipIf(!canMountTmpfs())('storage errors: unstorable names and full drives', () => {
  let run: SvcRun;
  let base: string;
  let s3: S3Client;
  let url: string;

  beforeAll(async () => {
    base = tempDir('full');
    for (let i = 1; i <= 4; i++) {
      mkdirSync(join(base, `d${i}`));
      mountTmpfs(join(base, `d${i}`), 24 << 20);
    }
    run = await runSvc(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false' });
    expect(await run.started).toBe(true);
    url = `http://127.0.0.1:${run.port}`;
    await until('ready', async () => (await fetch(`${url}/health/ready`)).status === 200);
    s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey }, maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: 'names' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'fill' }));
  }, 60_000);

  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
    if (base !== undefined) unmountUnder(base);
  });

  it('refuses keys no drive can hold with a 400 that says why, and the bucket stays listable', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'names', Key: 'a', Body: 'the object a' }));
    const put = (key: string) => signedRequest(url, CREDS, { method: 'PUT', path: `/names/${encodeURIComponent(key).replace(/%2F/g, '/')}`, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: 'x' });
    const reserved = await put('a/xl.meta');
    expect(reserved.status).toBe(400);
    expect(errorCode(reserved.body)).toBe('XSvcObjectNameReserved');
    const long = await put(`dir/${'x'.repeat(256)}`);
    expect(long.status).toBe(400);
    expect(errorCode(long.body)).toBe('XSvcObjectNameSegmentTooLong');
    expect((await put(`dir/${'x'.repeat(255)}`)).status).toBe(200);
    // A data folder of the object above is not a key either (its metadata would sit among the shards).
    await s3.send(new PutObjectCommand({ Bucket: 'names', Key: 'victim', Body: randomBytes(1_500_000) }));
    const dir = join(base, 'd1', 'names', 'victim');
    const dataDir = readdirSync(dir).find((n) => statSync(join(dir, n)).isDirectory())!;
    const collide = await put(`victim/${dataDir}`);
    expect(collide.status).toBe(400);
    expect(errorCode(collide.body)).toBe('XSvcObjectNameReserved');
    // Every listing still answers, and `a` is still there.
    expect((await s3.send(new ListObjectsV2Command({ Bucket: 'names' }))).Contents?.map((o) => o.Key).sort()).toEqual(['a', `dir/${'x'.repeat(255)}`, 'victim']);
    expect((await s3.send(new ListObjectsCommand({ Bucket: 'names', Delimiter: '/' }))).CommonPrefixes?.map((p) => p.Prefix)).toEqual(['dir/']);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'names', Key: 'a' }))).Body!.transformToString()).toBe('the object a');
  });

  it('answers 507 XSvcStorageFull when the drives are full, says so in readiness, and writes again once room is made', async () => {
    const written: string[] = [];
    let failure: { status: number; code: string | undefined; retryAfter: unknown } | undefined;
    for (let i = 0; i < 60 && failure === undefined; i++) {
      const key = `o${i}`;
      const r = await signedRequest(url, CREDS, { method: 'PUT', path: `/fill/${key}`, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: randomBytes(2 << 20) });
      if (r.status === 200) written.push(key);
      else failure = { status: r.status, code: errorCode(r.body), retryAfter: r.headers['retry-after'] };
    }
    expect(failure).toEqual({ status: 507, code: 'XSvcStorageFull', retryAfter: undefined });
    expect(written.length).toBeGreaterThan(3);
    // The write probe fails, readiness stays 200 (reads and deletes work) and says why.
    await until('the write probe to fail', async () => (await fetch(`${url}/compat/health/cluster`)).status === 503);
    const ready = await fetch(`${url}/health/ready`);
    expect(ready.status).toBe(200);
    const detail = ((await ready.json()) as { details: { storage: { detail?: string } } }).details.storage.detail ?? '';
    expect(detail).toMatch(/full/);
    expect(run.logs().some((l) => l.event === 'storage_set_write_blocked')).toBe(true);
    // What was acknowledged reads back; deleting makes room and writes succeed again.
    const got = await s3.send(new GetObjectCommand({ Bucket: 'fill', Key: written[0] }));
    expect((await got.Body!.transformToByteArray()).length).toBe(2 << 20);
    for (const k of written.slice(0, 4)) await s3.send(new DeleteObjectCommand({ Bucket: 'fill', Key: k }));
    await until('writes to succeed again', async () => {
      const r = await signedRequest(url, CREDS, { method: 'PUT', path: '/fill/after', headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: randomBytes(1 << 20) });
      return r.status === 200;
    });
  }, 120_000);
});

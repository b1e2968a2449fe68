/**
 * Bucket quotas on a real `svc server` (issue 28, item 12): the admin routes
 * `mc quota` uses (madmin's `BucketQuota` body, decoded strictly), `svc
 * admin bucket quota set|info|clear`, and enforcement on PUT, POST Object,
 * copy and multipart complete with the error MinIO uses
 * (`XSvcAdminBucketQuotaExceeded`, 400), counted from the scanner's usage
 * plus this node's writes. A refused write stores nothing.
 */
import { createHmac } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKey } from '../src/api/s3/auth/sigv4.ts';
import { admin } from './helpers/admin.ts';
import { until } from './helpers/heal-server.ts';
import { decodeStrict, loadMadminFixture } from './helpers/madmin-contract.ts';
import { errorOf } from './helpers/s3-error.ts';
import { runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CREDS = { accessKey: 'quota-admin', secretKey: 'quota-admin-secret' };
const KiB = 1024;
let base: string;
let run: SvcRun;
let url: string;
let s3: S3Client;

beforeAll(async () => {
  base = tempDir('quota');
  for (let i = 1; i <= 4; i++) mkdirSync(join(base, `d${i}`));
  run = await runSvc(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false', SVC_SCANNER_INTERVAL: '300ms' });
  expect(await run.started).toBe(true);
  url = `http://127.0.0.1:${run.port}`;
  await until('ready', async () => ((await fetch(`${url}/health/ready`)).status === 200 ? true : undefined), 60_000);
  s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey } });
}, 90_000);

afterAll(async () => {
  s3?.destroy();
  await run?.stop();
  rmSync(base, { recursive: true, force: true });
});

const cli = (args: string[]) => runSvcCommand(args, { HOME: base, SVC_ENDPOINT: url, SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey });
const put = (key: string, size: number) => s3.send(new PutObjectCommand({ Bucket: 'quota', Key: key, Body: Buffer.alloc(size, 7) }));
const exists = async (key: string) => (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'quota', Key: key })))) === undefined;
const QUOTA_EXCEEDED = { code: 'XSvcAdminBucketQuotaExceeded', status: 400 };

/** A SigV4-signed POST form for `key` (what a web backend computes). */
async function postForm(key: string, size: number): Promise<{ status: number; text: string }> {
  const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const credential = `${CREDS.accessKey}/${date.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const fields: Record<string, string> = { key, 'x-amz-algorithm': 'AWS4-HMAC-SHA256', 'x-amz-credential': credential, 'x-amz-date': date };
  const policy = Buffer.from(
    JSON.stringify({ expiration: new Date(Date.now() + 600_000).toISOString(), conditions: [{ bucket: 'quota' }, ...Object.entries(fields).map(([k, v]) => ({ [k]: v }))] }),
  ).toString('base64');
  const fd = new FormData();
  for (const [k, v] of Object.entries({ ...fields, policy, 'x-amz-signature': createHmac('sha256', signingKey(CREDS.secretKey, date.slice(0, 8), 'us-east-1', 's3')).update(policy).digest('hex') })) fd.append(k, v);
  fd.append('file', new Blob([Buffer.alloc(size, 1)]), 'f.bin');
  const r = await fetch(`${url}/quota`, { method: 'POST', body: fd });
  return { status: r.status, text: await r.text() };
}

describe('bucket quota', () => {
  it('admin routes as mc quota uses them: absent, set, info (madmin BucketQuota), refusals', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'quota' }));
    const none = await admin(url, CREDS, { method: 'GET', path: 'v3/get-bucket-quota', query: { bucket: 'quota' } });
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body).Code).toBe('XSvcAdminNoSuchQuotaConfiguration');
    const missing = await admin(url, CREDS, { method: 'PUT', path: 'v4/set-bucket-quota', query: { bucket: 'no-such-bucket' }, body: '{"size":1,"quotatype":"hard"}' });
    expect(JSON.parse(missing.body).Code).toBe('NoSuchBucket');
    const rate = await admin(url, CREDS, { method: 'PUT', path: 'v3/set-bucket-quota', query: { bucket: 'quota' }, body: '{"size":1,"rate":5}' });
    expect(JSON.parse(rate.body).Code).toBe('NotImplemented');
    // what `mc quota set ALIAS/quota --size 1MiB` sends
    const set = await admin(url, CREDS, { method: 'PUT', path: 'v4/set-bucket-quota', query: { bucket: 'quota' }, body: JSON.stringify({ quota: 0, size: 1024 * KiB, rate: 0, requests: 0, quotatype: 'hard' }) });
    expect(set.status, set.body).toBe(200);
    for (const v of ['v3', 'v4'] as const) {
      const info = (await admin(url, CREDS, { method: 'GET', path: `${v}/get-bucket-quota`, query: { bucket: 'quota' } })).json();
      expect(decodeStrict(loadMadminFixture('get-bucket-quota'), info)).toEqual([]);
      expect(info).toMatchObject({ size: 1024 * KiB, quotatype: 'hard', bucket: 'quota', usage: 0 });
    }
  });

  it('PUT, copy, multipart complete and POST Object are refused once the bucket would go over; nothing refused is stored', async () => {
    await put('a', 600 * KiB);
    expect(await errorOf(put('b', 500 * KiB))).toEqual(QUOTA_EXCEEDED);
    expect(await exists('b')).toBe(false);
    expect(await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'quota', Key: 'a-copy', CopySource: 'quota/a' })))).toEqual(QUOTA_EXCEEDED);
    expect(await exists('a-copy')).toBe(false);
    const mp = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'quota', Key: 'mp' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: 'quota', Key: 'mp', UploadId: mp.UploadId!, PartNumber: 1, Body: Buffer.alloc(500 * KiB, 3) }));
    const complete = new CompleteMultipartUploadCommand({ Bucket: 'quota', Key: 'mp', UploadId: mp.UploadId!, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] } });
    expect(await errorOf(s3.send(complete))).toEqual(QUOTA_EXCEEDED);
    expect(await exists('mp')).toBe(false);
    // what fits still goes in, up to the quota exactly
    await put('c', 424 * KiB);
    const post = await postForm('posted', 1);
    expect(post.status).toBe(400);
    expect(post.text).toContain('<Code>XSvcAdminBucketQuotaExceeded</Code>');
    expect(await exists('posted')).toBe(false);
    // the scanner's count takes over from this node's own
    const info = await until('the scanner to count the bucket', async () => {
      const v = (await admin(url, CREDS, { method: 'GET', path: 'v3/get-bucket-quota', query: { bucket: 'quota' } })).json() as { usage: number };
      return v.usage === 1024 * KiB ? v : undefined;
    }, 30_000);
    expect(info.usage).toBe(1024 * KiB);
    expect(await errorOf(put('d', 1))).toEqual(QUOTA_EXCEEDED);
    // the upload refused at complete is still there: a larger quota lets it complete
    await admin(url, CREDS, { method: 'PUT', path: 'v3/set-bucket-quota', query: { bucket: 'quota' }, body: '{"size":2097152,"quotatype":"hard"}' });
    await until('the new quota to apply', async () => ((await errorOf(s3.send(complete))) === undefined ? true : undefined), 10_000);
    expect(await exists('mp')).toBe(true);
  });

  it('svc admin bucket quota set, info and clear', async () => {
    const set = await cli(['admin', 'bucket', 'quota', 'set', 'quota', '--size', '1MiB']);
    expect(set.code, set.err).toBe(0);
    expect(set.out).toMatch(/Set a hard quota of 1(\.0)? MiB on bucket `quota`/);
    const info = await cli(['admin', 'bucket', 'quota', 'info', 'quota']);
    expect(info.code, info.err).toBe(0);
    expect(info.out).toMatch(/hard quota 1(\.0)? MiB/);
    expect(info.out).toMatch(/Counted against it: 1\.\d+ MiB/);
    expect(info.out).toContain('writes through other nodes count from the next scan');
    const json = await cli(['admin', 'bucket', 'quota', 'info', 'quota', '--json']);
    expect(JSON.parse(json.out)).toMatchObject({ bucket: 'quota', size: 1024 * KiB });
    expect((await cli(['admin', 'bucket', 'quota', 'set', 'quota', '--size', 'lots'])).code).toBe(2);
    expect(await errorOf(put('e', 1))).toEqual(QUOTA_EXCEEDED);
    const clear = await cli(['admin', 'bucket', 'quota', 'clear', 'quota']);
    expect(clear.code, clear.err).toBe(0);
    await until('the cleared quota to apply', async () => ((await errorOf(put('e', 100 * KiB))) === undefined ? true : undefined), 10_000);
    const gone = await cli(['admin', 'bucket', 'quota', 'info', 'quota']);
    expect(gone.code).toBe(1);
    expect(gone.err).toContain('XSvcAdminNoSuchQuotaConfiguration');
  });
});

/**
 * Issue 27 item 5: a GET below read quorum is answered with a status and an
 * S3 error, not a dropped connection. The metadata vote passes (every
 * drive's xl.meta is intact) but the shards are gone or rotten on more
 * drives than parity covers; the first block is read before the response
 * head is written. A block that fails later cuts the response off (the only
 * honest signal once 200 is out) and says so in the log.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CREDS = { accessKey: 'quorumadmin', secretKey: 'quorum-admin-secret' };

/** The data dir (`<uuid>`) of `key` on drive `d`. */
function dataDir(base: string, d: number, bucket: string, key: string): string {
  const dir = join(base, `d${d}`, bucket, key);
  const dd = readdirSync(dir).find((n) => statSync(join(dir, n)).isDirectory());
  if (dd === undefined) throw new Error(`no data dir under ${dir}`);
  return join(dir, dd);
}

describe('GET below read quorum', () => {
  let run: SvcRun;
  let base: string;
  let s3: S3Client;

  beforeAll(async () => {
    base = tempDir('readq');
    for (let i = 1; i <= 4; i++) mkdirSync(join(base, `d${i}`));
    // The scanner and background heal must not repair what the test breaks.
    run = await runSvc(['server', `${base}/d{1...4}`], { SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false', SVC_SCANNER_INTERVAL: '1h', SVC_HEAL_SPEED: 'slowest' });
    expect(await run.started).toBe(true);
    s3 = new S3Client({
      requestHandler: keepAliveHandler(),
      endpoint: `http://127.0.0.1:${run.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey },
      maxAttempts: 1,
    });
    await s3.send(new CreateBucketCommand({ Bucket: 'quorum' }));
  }, 60_000);

  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
  });

  it('answers 503 ErasureReadQuorum with an S3 error body when the first block cannot be read', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'gone', Body: randomBytes(3 << 20) }));
    // 4 drives at EC:2 read 2 shards: with 3 of them gone only one is left.
    for (const d of [1, 2, 3]) rmSync(dataDir(base, d, 'quorum', 'gone'), { recursive: true });
    const res = await fetch(`http://127.0.0.1:${run.port}/quorum/gone`, { headers: await signedGetHeaders(run.port, '/quorum/gone') });
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toContain('<Code>ErasureReadQuorum</Code>');
    expect(res.headers.get('content-type')).toBe('application/xml');
    // The SDK sees the error code, not a network failure it would retry blindly.
    await expect(s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'gone' }))).rejects.toMatchObject({ name: 'ErasureReadQuorum', $metadata: { httpStatusCode: 503 } });
    // An operator learns of it from the log: one warning naming the request, not one per request
    // (the second answer within ten seconds is only counted).
    await expect.poll(() => run.logs().filter((l) => l.event === 's3_server_error').length, { timeout: 5_000 }).toBe(1);
    const warned = run.logs().find((l) => l.event === 's3_server_error')!;
    expect(warned).toMatchObject({ level: 'warn', code: 'ErasureReadQuorum', status: 503, method: 'GET', resource: '/quorum/gone' });
    expect(warned.requestId).toBe(res.headers.get('x-amz-request-id'));
  }, 30_000);

  it('cuts the response off, and logs it, when a later block fails', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'late', Body: randomBytes(3 << 20) }));
    // Rot the second erasure block (after the first 8-byte hash and 512 KiB shard) on 3 drives.
    for (const d of [1, 2, 3]) {
      const fd = openSync(join(dataDir(base, d, 'quorum', 'late'), 'part.1'), 'r+');
      writeSync(fd, randomBytes(64), 0, 64, 8 + (512 << 10) + 100);
      closeSync(fd);
    }
    const got = await s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'late' }));
    expect(got.$metadata.httpStatusCode).toBe(200);
    await expect(got.Body!.transformToByteArray()).rejects.toThrow();
    await expect.poll(() => run.logs().some((l) => l.event === 's3_response_cut_short' && l.level === 'warn' && l.code === 'ErasureReadQuorum'), { timeout: 5_000 }).toBe(true);
  }, 30_000);
});

/** SigV4 headers for a GET (UNSIGNED-PAYLOAD) from the SDK's own signer. */
async function signedGetHeaders(port: number, path: string): Promise<Record<string, string>> {
  const { signHeaders } = await import('./helpers/sigv4-signer.ts');
  const h = await signHeaders(`http://127.0.0.1:${port}`, CREDS, { method: 'GET', path, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
  delete h.host;
  return h;
}

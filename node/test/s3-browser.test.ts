/**
 * Browsers against the real server: CORS (bucket rules, preflight, headers on
 * real responses, the console's origin) with `@aws-sdk/client-s3` and fetch,
 * and a headless Chromium page that uploads with a POST form built from
 * minio-js `presignedPostPolicy` and reads a public-read object with no
 * credentials. Prints one skip line where Chromium is absent.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCorsCommand, GetBucketCorsCommand, GetObjectCommand, PutBucketCorsCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Runs in the page: an HTML form with a file input, submitted the way page scripts do; then anonymous reads. */
const PAGE_SCRIPT = `async ({ postURL, fields, endpoint }) => {
  const form = document.createElement('form');
  for (const [k, v] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = k;
    input.value = v;
    form.appendChild(input);
  }
  const file = document.createElement('input');
  file.type = 'file';
  file.name = 'file';
  const dt = new DataTransfer();
  dt.items.add(new File(['uploaded from Chromium'], 'note.txt', { type: 'text/plain' }));
  file.files = dt.files;
  form.appendChild(file);
  document.body.appendChild(form);
  const up = await fetch(postURL, { method: 'POST', body: new FormData(form) });
  const pub = await fetch(endpoint + '/web/public.txt');
  const priv = await fetch(endpoint + '/web/uploads/note.txt');
  return { upload: up.status, uploadText: await up.text(), etag: up.headers.get('etag'), public: [pub.status, await pub.text()], private: priv.status };
}`;
let srv: S3Server;
let s3: S3Client;
let page: Server;
let pageOrigin: string;

beforeAll(async () => {
  srv = await start();
  s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: srv.endpoint, region: srv.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey } });
  // the web app's own origin (another port): a blank page the test scripts run in
  page = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>app</title><body>app</body>');
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
  await new Promise((r) => page?.close(r));
});

describe('CORS', () => {
  it('Put/Get/DeleteBucketCors, preflight from the rules, headers on real responses', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'cors' }));
    const preflight = (origin: string, method: string, headers?: string) =>
      fetch(`${srv.endpoint}/cors/k`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, ...(headers ? { 'access-control-request-headers': headers } : {}) } });
    expect((await preflight(pageOrigin, 'PUT')).status).toBe(403);
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: 'cors',
        CORSConfiguration: {
          CORSRules: [
            { AllowedOrigins: ['http://127.0.0.1:*'], AllowedMethods: ['GET', 'PUT', 'POST'], AllowedHeaders: ['content-type', 'x-amz-*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 300 },
            { AllowedOrigins: ['*'], AllowedMethods: ['GET'] },
          ],
        },
      }),
    );
    const got = await s3.send(new GetBucketCorsCommand({ Bucket: 'cors' }));
    expect(got.CORSRules?.[0]).toMatchObject({ AllowedOrigins: ['http://127.0.0.1:*'], AllowedMethods: ['GET', 'PUT', 'POST'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 300 });
    const ok = await preflight(pageOrigin, 'PUT', 'Content-Type, X-Amz-Date');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(pageOrigin);
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, PUT, POST');
    expect(ok.headers.get('access-control-allow-headers')).toBe('content-type, x-amz-date');
    expect(ok.headers.get('access-control-max-age')).toBe('300');
    expect((await preflight(pageOrigin, 'DELETE')).status).toBe(403);
    expect((await preflight(pageOrigin, 'PUT', 'x-custom')).status).toBe(403);
    const any = await preflight('https://elsewhere.example', 'GET');
    expect(any.headers.get('access-control-allow-origin')).toBe('*');
    // a real (signed) response carries the headers too, errors included
    await s3.send(new PutObjectCommand({ Bucket: 'cors', Key: 'k', Body: 'v' }));
    const withOrigin = new S3Client({ requestHandler: keepAliveHandler(), endpoint: srv.endpoint, region: srv.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey } });
    withOrigin.middlewareStack.add((next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers.origin = pageOrigin;
      return next(args);
    }, { step: 'build' });
    try {
      const r = await withOrigin.send(new GetObjectCommand({ Bucket: 'cors', Key: 'k' }));
      await r.Body!.transformToString();
      const denied = await fetch(`${srv.endpoint}/cors/k`, { headers: { origin: pageOrigin } });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('access-control-allow-origin')).toBe(pageOrigin);
      expect(denied.headers.get('access-control-expose-headers')).toBe('ETag');
    } finally {
      withOrigin.destroy();
    }
    await s3.send(new DeleteBucketCorsCommand({ Bucket: 'cors' }));
    expect(((await s3.send(new GetBucketCorsCommand({ Bucket: 'cors' })).catch((e: S3ServiceException) => e)) as S3ServiceException).name).toBe('NoSuchCORSConfiguration');
    expect((await preflight(pageOrigin, 'GET')).status).toBe(403);
    // malformed configurations are the S3 error
    const bad = await s3.send(new PutBucketCorsCommand({ Bucket: 'cors', CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['PATCH'] }] } })).catch((e: S3ServiceException) => e);
    expect((bad as S3ServiceException).$metadata.httpStatusCode).toBe(400);
  });

  it("the console's origin is allowed on buckets without a configuration", async () => {
    const consolePort = 39001;
    const withConsole = await start({ consolePort });
    try {
      const r = await fetch(`${withConsole.endpoint}/any-bucket?list-type=2`, { method: 'OPTIONS', headers: { origin: `http://localhost:${consolePort}`, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,x-amz-date' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe(`http://localhost:${consolePort}`);
      const other = await fetch(`${withConsole.endpoint}/any-bucket`, { method: 'OPTIONS', headers: { origin: 'http://localhost:1234', 'access-control-request-method': 'GET' } });
      expect(other.status).toBe(403);
    } finally {
      await withConsole.stop();
    }
  });
});

describe('headless Chromium', () => {
  it('uploads with a presignedPostPolicy form and reads a public-read object with no credentials', async (t) => {
    if (!existsSync(CHROMIUM)) {
      console.log(`skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
      t.skip();
      return;
    }
    const { chromium } = await import('playwright-core');
    await s3.send(new CreateBucketCommand({ Bucket: 'web' }));
    await s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: [{ AllowedOrigins: [pageOrigin], AllowedMethods: ['GET', 'POST'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] }] } }));
    await s3.send(new PutObjectCommand({ Bucket: 'web', Key: 'public.txt', Body: 'hello, browser', ACL: 'public-read' }));
    const u = new URL(srv.endpoint);
    const mc = new Minio.Client({ endPoint: u.hostname, port: Number(u.port), useSSL: false, accessKey: srv.accessKey, secretKey: srv.secretKey, region: 'us-east-1' });
    const policy = mc.newPostPolicy();
    policy.setBucket('web');
    policy.setKeyStartsWith('uploads/');
    policy.setExpires(new Date(Date.now() + 600_000));
    policy.setContentLengthRange(1, 1024 * 1024);
    const { postURL, formData } = await mc.presignedPostPolicy(policy);

    const userData = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
    const ctx = await chromium.launchPersistentContext(userData, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const tab = await ctx.newPage();
      await tab.goto(pageOrigin);
      const args = { postURL, fields: { ...(formData as Record<string, string>), key: 'uploads/${filename}' }, endpoint: srv.endpoint };
      const result = (await tab.evaluate(`(${PAGE_SCRIPT})(${JSON.stringify(args)})`)) as {
        upload: number;
        uploadText: string;
        etag: string | null;
        public: [number, string];
        private: number;
      };
      expect([result.upload, result.uploadText]).toEqual([204, '']);
      expect(result.etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(result.public).toEqual([200, 'hello, browser']);
      expect(result.private).toBe(403);
      const stored = await s3.send(new GetObjectCommand({ Bucket: 'web', Key: 'uploads/note.txt' }));
      expect(await stored.Body!.transformToString()).toBe('uploaded from Chromium');
    } finally {
      await ctx.close();
      await rm(userData, { recursive: true, force: true });
    }
  }, 120_000);
});

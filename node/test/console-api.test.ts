/**
 * The web console's server side against a real `svc server`, over HTTP as a
 * browser (or an attacker) would call it: no route works without a session;
 * forged, signed-out and expired cookies are refused; cross-site writes are
 * refused; wrong keys get a clear message and then a rate limit; the secret
 * key never appears in anything the console sends; the pages' caching and
 * Content-Security-Policy; path prefixes behind a proxy; downloads that can
 * never run as pages; errors that say what to do; a bucket's data
 * protection settings as the admin API reports them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../src/api/console/console-handler.ts';
import type { BucketGovernance, ZipTicket } from '../src/api/console/wire.ts';
import { CONSOLE_ACCESS_KEY, CONSOLE_SECRET_KEY, ConsoleClient, type ConsoleNode, startConsoleNode } from './helpers/console.ts';
import { kmsKeyLine } from './helpers/governance.ts';
import { sha256, unzipTree } from './helpers/zip.ts';

let node: ConsoleNode;
let root: string;
beforeAll(async () => {
  // the test client stands in for a reverse proxy on loopback (X-Forwarded-* headers)
  node = await startConsoleNode(1, { SVC_KMS_SECRET_KEY: kmsKeyLine('console-key'), SVC_TRUSTED_PROXIES: 'loopback' });
  root = `${node.console}/svc/console/`;
}, 60_000);
afterAll(async () => {
  await node?.stop();
});

const bucketExists = (name: string) =>
  node.s3.send(new HeadBucketCommand({ Bucket: name })).then(
    () => true,
    () => false,
  );

/** Each API route as a request with plausible parameters. */
function routeRequests(bucket: string) {
  return API_ROUTES.map((r) => {
    const path = r.pattern.replace(':bucket', bucket).replace(':pool', '0').replace(':uploadId', 'upload-1').replace(':part', '1');
    const keyed = /^buckets\/[^/]+\/(object|versions|download|upload|multipart)/.test(path);
    const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : path.endsWith('/upload') || /multipart\/upload-1\/1$/.test(path) ? 'raw' : 'json';
    return { method: r.method, path: `api/${path}${keyed ? '?key=k' : ''}`, body };
  });
}

describe('console: pages and assets', () => {
  it('health needs no session; / and /svc/console redirect; the shell is static, cached by ETag, under a strict CSP', async () => {
    const health = await fetch(`${node.console}/svc/console/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    for (const [from, to] of [
      ['/', 'svc/console/'],
      ['/svc/console', 'console/'],
    ]) {
      const r = await fetch(`${node.console}${from}`, { redirect: 'manual' });
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe(to);
    }
    const shell = await fetch(root);
    const html = await shell.text();
    expect(shell.headers.get('cache-control')).toBe('no-cache');
    const csp = shell.headers.get('content-security-policy')!;
    for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"]) expect(csp).toContain(d);
    expect(shell.headers.get('x-frame-options')).toBe('DENY');
    expect(shell.headers.get('x-content-type-options')).toBe('nosniff');
    // no data, no inline code, nothing from elsewhere
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=|https?:\/\//);
    const again = await fetch(root, { headers: { 'if-none-match': shell.headers.get('etag')! } });
    expect(again.status).toBe(304);
    // assets: immutable, compressed when asked
    const js = /src="(assets\/[0-9a-f]{12}\/main\.js)"/.exec(html)![1]!;
    const a = await fetch(new URL(js, root), { headers: { 'accept-encoding': 'br, gzip' } });
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(a.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(a.headers.get('content-encoding')).toBe('br');
    const plain = await fetch(new URL(js, root), { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect((await plain.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${root}assets/000000000000/main.js`)).status).toBe(404);
    // no scrape endpoint on the console either (SPEC)
    expect((await fetch(`${node.console}/metrics`)).status).toBe(404);
    expect((await fetch(root, { method: 'POST' })).status).toBe(405);
  });
});

describe('console security', () => {
  it('no API route answers without a session, and nothing changes', async () => {
    const anon = new ConsoleClient(root);
    for (const r of routeRequests('sec-bucket')) {
      const res = await anon.call(r.method, r.path, r.body === 'json' ? { body: { name: 'sec-bucket' } } : r.body === 'raw' ? { raw: 'data' } : {});
      expect({ route: `${r.method} ${r.path}`, status: res.status, code: res.json().code }).toEqual({ route: `${r.method} ${r.path}`, status: 401, code: 'XSvcConsoleSignInRequired' });
      expect(res.json().action).toBe('Sign in with your access key and secret key.');
    }
    expect((await anon.call('GET', 'api/session')).status).toBe(401);
    expect(await bucketExists('sec-bucket')).toBe(false);
  });

  it('a forged or signed-out cookie is refused (and cleared)', async () => {
    const c = new ConsoleClient(root);
    expect((await c.signIn()).status).toBe(200);
    const good = c.cookie;
    expect((await c.call('GET', 'api/buckets')).status).toBe(200);
    for (const forged of ['svc_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `${good.slice(0, -1)}x`, 'svc_console=../../etc', `svc_console=${c.csrf}`]) {
      const f = new ConsoleClient(root);
      f.cookie = forged;
      f.csrf = c.csrf;
      const r = await f.call('GET', 'api/overview');
      expect(r.status).toBe(401);
      expect(r.json().code).toBe('XSvcConsoleSessionExpired');
      expect(r.headers.get('set-cookie')).toMatch(/^svc_console=; Path=\/svc\/console\/; Max-Age=0; HttpOnly; SameSite=Strict/);
      expect((await f.call('POST', 'api/buckets', { body: { name: 'forged-bucket' } })).status).toBe(401);
    }
    expect(await bucketExists('forged-bucket')).toBe(false);
    // sign out: the same cookie no longer works
    expect((await c.call('DELETE', 'api/session')).status).toBe(204);
    const stale = new ConsoleClient(root);
    stale.cookie = good;
    expect((await stale.call('GET', 'api/buckets')).json().code).toBe('XSvcConsoleSessionExpired');
  });

  it('a cross-site POST is refused: no CSRF token, another origin, or a cross-site fetch', async () => {
    const c = new ConsoleClient(root);
    await c.signIn();
    const refused = [
      await c.call('POST', 'api/buckets', { body: { name: 'csrf-a' }, csrf: false }),
      await c.call('POST', 'api/buckets', { body: { name: 'csrf-b' }, headers: { 'x-csrf-token': 'wrong' } }),
      await c.call('POST', 'api/buckets', { body: { name: 'csrf-c' }, headers: { 'sec-fetch-site': 'cross-site' } }),
      await c.call('POST', 'api/buckets', { body: { name: 'csrf-d' }, headers: { origin: 'https://evil.example' } }),
      await c.call('DELETE', 'api/session', { csrf: false }),
      await c.call('PUT', 'api/buckets/csrf-a/upload?key=k', { raw: 'x', headers: { 'sec-fetch-site': 'same-site' } }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({ code: 'XSvcConsoleCrossSiteRequest', action: 'Reload the console page and repeat the action from there.' });
    }
    for (const b of ['csrf-a', 'csrf-b', 'csrf-c', 'csrf-d']) expect(await bucketExists(b)).toBe(false);
    // sign-in from another site is refused too (login CSRF)
    const other = new ConsoleClient(root);
    const r = await other.call('POST', 'api/session', { body: { accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY }, headers: { 'sec-fetch-site': 'cross-site' } });
    expect(r.status).toBe(403);
    expect(other.cookie).toBe('');
    // the page's own request goes through
    const ok = await c.call('POST', 'api/buckets', { body: { name: 'csrf-ok' }, headers: { 'sec-fetch-site': 'same-origin', origin: node.console } });
    expect(ok.status).toBe(200);
    expect(await bucketExists('csrf-ok')).toBe(true);
  });

  it('the secret key never appears in anything the console sends', async () => {
    const c = new ConsoleClient(root);
    await c.signIn();
    await node.s3.send(new PutObjectCommand({ Bucket: 'csrf-ok', Key: 'dir/a.txt', Body: 'hello' }));
    const paths = [
      'api/session',
      'api/overview',
      'api/pools',
      'api/healing',
      'api/buckets',
      'api/buckets/csrf-ok',
      'api/buckets/csrf-ok/objects?prefix=dir/',
      'api/buckets/csrf-ok/object?key=dir/a.txt',
      'api/buckets/csrf-ok/versions?key=dir/a.txt',
      'api/buckets/csrf-ok/download?key=dir/a.txt',
    ];
    for (const p of paths) expect((await c.call('GET', p)).status).toBe(200);
    const share = await c.call('POST', 'api/buckets/csrf-ok/share', { body: { key: 'dir/a.txt', expiresSeconds: 600 } });
    expect(share.status).toBe(200);
    // the link works without the console, and carries a signature, not the key
    const url = share.json<{ url: string }>().url;
    expect(url).toContain('X-Amz-Signature=');
    expect(await (await fetch(url)).text()).toBe('hello');
    await c.call('POST', 'api/session', { body: { accessKey: CONSOLE_ACCESS_KEY, secretKey: `${CONSOLE_SECRET_KEY}-wrong` } });
    await c.call('PUT', 'api/buckets/csrf-ok/upload?key=dir/b.txt', { raw: 'x' });
    expect(c.seen.length).toBeGreaterThan(12);
    for (const s of c.seen) expect(`${s.headers}\n${s.text}`).not.toContain(CONSOLE_SECRET_KEY);
    // nor in the node's log (sign-in attempts are logged by access key only)
    expect(node.run.stdout()).not.toContain(CONSOLE_SECRET_KEY);
    expect(node.run.stdout()).toContain('"event":"console_signin"');
  });

  it('downloads are attachments that never run as pages of the console', async () => {
    const c = new ConsoleClient(root);
    await c.signIn();
    const up = await c.call('PUT', 'api/buckets/csrf-ok/upload?key=evil.html', { raw: '<script>alert(1)</script>', headers: { 'content-type': 'text/html' } });
    expect(up.status).toBe(200);
    const r = await c.call('GET', 'api/buckets/csrf-ok/download?key=evil.html');
    expect(r.text).toBe('<script>alert(1)</script>');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="evil.html"; filename*=UTF-8''evil.html`);
    expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const ranged = await c.call('GET', 'api/buckets/csrf-ok/download?key=evil.html', { headers: { range: 'bytes=0-7' } });
    expect(ranged.status).toBe(206);
    expect(ranged.text).toBe('<script>');
  });

  it('a folder downloads as one streamed ZIP with the download headers, its keys under the folder name; bad requests are refused', async () => {
    const c = new ConsoleClient(root);
    await c.signIn();
    await node.s3.send(new CreateBucketCommand({ Bucket: 'folder-zip' }));
    const files: Record<string, string> = {
      'top/a.txt': 'alpha',
      'top/nested/b.txt': 'bravo',
      'top/nested/ü ✓.txt': 'UTF-8 name',
      'top/nested/deeper/c.txt': 'charlie',
      'top/nested/marker/': '',
      'top/nestedness.txt': 'a sibling whose name starts the same',
    };
    for (const [k, body] of Object.entries(files)) await node.s3.send(new PutObjectCommand({ Bucket: 'folder-zip', Key: k, Body: Buffer.from(body) }));
    const asked = await c.call('POST', 'api/buckets/folder-zip/zip', { body: { prefix: 'top/nested/' } });
    expect(asked.status, asked.text).toBe(200);
    const z = asked.json<ZipTicket>();
    expect(z).toMatchObject({ name: 'nested.zip', objects: 4, bytes: 'bravo'.length + 'UTF-8 name'.length + 'charlie'.length });
    const res = await fetch(new URL(`api/buckets/folder-zip/zip/${z.ticket}`, root), { headers: { cookie: c.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="nested.zip"; filename*=UTF-8''nested.zip`);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // streamed as it is written: no length known up front
    expect(res.headers.get('content-length')).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'svc-folder-zip-'));
    try {
      writeFileSync(join(dir, 'nested.zip'), Buffer.from(await res.arrayBuffer()));
      expect(unzipTree(join(dir, 'nested.zip'), join(dir, 'out'))).toEqual({
        'nested/b.txt': sha256('bravo'),
        'nested/ü ✓.txt': sha256('UTF-8 name'),
        'nested/deeper/c.txt': sha256('charlie'),
        'nested/marker/': 'dir',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // the ticket was used
    expect((await fetch(new URL(`api/buckets/folder-zip/zip/${z.ticket}`, root), { headers: { cookie: c.cookie } })).status).toBe(400);
    for (const [body, says] of [
      [{ prefix: 'top/nested' }, 'ending in /'],
      [{ prefix: 'top/none/' }, 'nothing is stored under top/none/'],
      [{ prefix: 'top/', keys: ['top/a.txt'] }, 'either the keys of a selection or the prefix'],
    ] as const) {
      const r = await c.call('POST', 'api/buckets/folder-zip/zip', { body });
      expect(r.status).toBe(400);
      expect(r.json<{ code: string; message: string }>()).toMatchObject({ code: 'InvalidArgument', message: expect.stringContaining(says) });
    }
  });

  it('errors say what happened and what to do', async () => {
    const c = new ConsoleClient(root);
    await c.signIn();
    const notEmpty = await c.call('DELETE', 'api/buckets/csrf-ok');
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.json()).toMatchObject({ code: 'BucketNotEmpty', action: expect.stringContaining('Delete every object in it first') });
    const missing = await c.call('GET', 'api/buckets/no-such-bucket/objects');
    expect(missing.json()).toMatchObject({ code: 'NoSuchBucket', action: 'The bucket may have been deleted; go back to the bucket list.' });
    const badName = await c.call('POST', 'api/buckets', { body: { name: 'Bad_Name' } });
    expect(badName.status).toBe(400);
    expect(badName.json()).toMatchObject({ code: 'InvalidBucketName', action: expect.stringContaining('3 to 63 lowercase') });
    // a single-pool node cannot decommission: the admin API's refusal, passed through with advice
    const decom = await c.call('POST', 'api/pools/0/decommission');
    expect(decom.status).toBe(501);
    expect(decom.json()).toMatchObject({ code: 'NotImplemented', action: 'This build cannot do this yet; nothing was changed.' });
    const noRoute = await c.call('GET', 'api/nope');
    expect(noRoute.status).toBe(404);
    const wrongMethod = await c.call('PATCH', 'api/buckets');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
  });

  it("shows a bucket's object lock, default encryption and lifecycle rules; a plain bucket has none", async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'gov-worm', ObjectLockEnabledForBucket: true }));
    await node.s3.send(new PutObjectLockConfigurationCommand({ Bucket: 'gov-worm', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 2 } } } }));
    await node.s3.send(new PutBucketEncryptionCommand({ Bucket: 'gov-worm', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } }));
    await node.s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'gov-worm',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'old-logs', Status: 'Enabled', Filter: { And: { Prefix: 'logs/', Tags: [{ Key: 'env', Value: 'dev' }] } }, NoncurrentVersionExpiration: { NoncurrentDays: 30, NewerNoncurrentVersions: 2 } },
            { ID: 'uploads', Status: 'Disabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 } },
          ],
        },
      }),
    );
    await node.s3.send(new CreateBucketCommand({ Bucket: 'gov-plain' }));
    const c = new ConsoleClient(root);
    await c.signIn();
    const worm = await c.call('GET', 'api/buckets/gov-worm/governance');
    expect(worm.status, worm.text).toBe(200);
    expect(worm.json<BucketGovernance>()).toEqual({
      name: 'gov-worm',
      versioning: 'Enabled',
      objectLock: { enabled: true, defaultRetention: { mode: 'COMPLIANCE', years: 2 } },
      encryption: { algorithm: 'AES256' },
      lifecycle: {
        rules: [
          { id: 'old-logs', status: 'Enabled', filter: { prefix: 'logs/', tags: [{ key: 'env', value: 'dev' }] }, noncurrentVersionExpiration: { noncurrentDays: 30, newerNoncurrentVersions: 2 } },
          { id: 'uploads', status: 'Disabled', filter: { prefix: '' }, abortIncompleteMultipartUpload: { daysAfterInitiation: 3 } },
        ],
      },
    });
    expect((await c.call('GET', 'api/buckets/gov-plain/governance')).json()).toEqual({ name: 'gov-plain', versioning: 'Unversioned', objectLock: { enabled: false } });
    const missing = await c.call('GET', 'api/buckets/gov-none/governance');
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NoSuchBucket' });
  });

  it("shows, sets and clears a bucket's quota through the admin API, and says why a size is refused", async () => {
    await node.s3.send(new CreateBucketCommand({ Bucket: 'console-quota' }));
    const c = new ConsoleClient(root);
    await c.signIn();
    expect((await c.call('GET', 'api/buckets/console-quota/quota')).json()).toEqual({ bucket: 'console-quota', size: null, usage: null });
    const set = await c.call('PUT', 'api/buckets/console-quota/quota', { body: { size: '1MiB' } });
    expect(set.status, set.text).toBe(200);
    expect(set.json()).toEqual({ bucket: 'console-quota', size: 1024 * 1024, usage: 0 });
    // the quota is enforced: what the console set, S3 writes obey
    const over = await node.s3.send(new PutObjectCommand({ Bucket: 'console-quota', Key: 'big', Body: Buffer.alloc(1024 * 1024 + 1) })).then(
      () => 'stored',
      (err: { name?: string }) => err.name,
    );
    expect(over).toBe('XSvcAdminBucketQuotaExceeded');
    // an upload through the console over the quota: the browser gets the reason, not a reset
    const upload = await c.call('PUT', 'api/buckets/console-quota/upload?key=big', { raw: Buffer.alloc(16 << 20, 1) });
    expect(upload.status).toBe(400);
    expect(upload.json()).toMatchObject({ code: 'XSvcAdminBucketQuotaExceeded' });
    await node.s3.send(new PutObjectCommand({ Bucket: 'console-quota', Key: 'small', Body: Buffer.alloc(1000) }));
    expect((await c.call('GET', 'api/buckets/console-quota/quota')).json()).toEqual({ bucket: 'console-quota', size: 1024 * 1024, usage: 1000 });
    const bad = await c.call('PUT', 'api/buckets/console-quota/quota', { body: { size: 'lots' } });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'InvalidArgument' });
    const cleared = await c.call('PUT', 'api/buckets/console-quota/quota', { body: { size: null } });
    expect(cleared.json()).toEqual({ bucket: 'console-quota', size: null, usage: null });
  });

  it('the cookie follows the public prefix (X-Forwarded-Prefix from a trusted proxy); multipart uploads go through', async () => {
    const c = new ConsoleClient(root);
    const r = await c.call('POST', 'api/session', { body: { accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY }, headers: { 'x-forwarded-prefix': '/storage', 'x-forwarded-proto': 'https' } });
    expect(r.headers.get('set-cookie')).toMatch(/; Path=\/storage\/svc\/console\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
    c.csrf = r.json<{ csrfToken: string }>().csrfToken;
    const start = await c.call('POST', 'api/buckets/csrf-ok/multipart?key=big.bin&contentType=application/x-test');
    const { uploadId } = start.json<{ uploadId: string }>();
    const part1 = Buffer.alloc(5 * 1024 * 1024, 1);
    const part2 = Buffer.from('tail');
    const e1 = (await c.call('PUT', `api/buckets/csrf-ok/multipart/${encodeURIComponent(uploadId)}/1?key=big.bin`, { raw: part1 })).json<{ etag: string }>().etag;
    const e2 = (await c.call('PUT', `api/buckets/csrf-ok/multipart/${encodeURIComponent(uploadId)}/2?key=big.bin`, { raw: part2 })).json<{ etag: string }>().etag;
    const done = await c.call('POST', `api/buckets/csrf-ok/multipart/${encodeURIComponent(uploadId)}/complete?key=big.bin`, { body: { parts: [{ part: 1, etag: e1 }, { part: 2, etag: e2 }] } });
    expect(done.status).toBe(200);
    expect(done.json<{ etag: string }>().etag).toMatch(/-2$/);
    const meta = (await c.call('GET', 'api/buckets/csrf-ok/object?key=big.bin')).json<{ size: number; contentType: string }>();
    expect(meta).toMatchObject({ size: part1.length + part2.length, contentType: 'application/x-test' });
    // an aborted upload leaves nothing
    const aborted = (await c.call('POST', 'api/buckets/csrf-ok/multipart?key=gone.bin')).json<{ uploadId: string }>().uploadId;
    expect((await c.call('DELETE', `api/buckets/csrf-ok/multipart/${encodeURIComponent(aborted)}?key=gone.bin`)).status).toBe(204);
    const listed = await node.s3.send(new ListObjectsV2Command({ Bucket: 'csrf-ok', Prefix: 'gone' }));
    expect(listed.KeyCount).toBe(0);
  });
});

describe('console sessions on a node with a short timeout and a base path', () => {
  let short: ConsoleNode;
  beforeAll(async () => {
    short = await startConsoleNode(1, { SVC_CONSOLE_SESSION_TIMEOUT: '2s', SVC_CONSOLE_BASE_PATH: '/storage' });
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
  });

  it('a proxy that keeps the prefix: SVC_CONSOLE_BASE_PATH', async () => {
    const c = new ConsoleClient(`${short.console}/storage/svc/console/`);
    const r = await c.signIn();
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie')).toMatch(/; Path=\/storage\/svc\/console\/;/);
    expect((await c.call('GET', 'api/overview')).status).toBe(200);
    expect((await fetch(`${short.console}/storage/svc/console/`)).status).toBe(200);
  });

  it('X-Forwarded-* from an address that is not a trusted proxy are ignored (no Secure cookie, no forwarded prefix)', async () => {
    const c = new ConsoleClient(`${short.console}/storage/svc/console/`);
    const r = await c.call('POST', 'api/session', {
      body: { accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY },
      headers: { 'x-forwarded-prefix': '/elsewhere', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie')).toMatch(/; Path=\/storage\/svc\/console\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
  });

  it('an expired session is refused', async () => {
    const c = new ConsoleClient(`${short.console}/svc/console/`);
    await c.signIn();
    expect(c.cookie).not.toBe('');
    expect((await c.call('GET', 'api/buckets')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2300));
    const r = await c.call('GET', 'api/buckets');
    expect(r.status).toBe(401);
    expect(r.json()).toMatchObject({ code: 'XSvcConsoleSessionExpired', action: 'Sign in again.' });
    expect((await c.call('POST', 'api/buckets', { body: { name: 'after-expiry' } })).status).toBe(401);
    expect(await short.s3.send(new HeadBucketCommand({ Bucket: 'after-expiry' })).then(() => true, () => false)).toBe(false);
  });

  it('wrong keys: a clear message each time, then a rate limit with Retry-After', async () => {
    const c = new ConsoleClient(`${short.console}/svc/console/`);
    for (let i = 0; i < 10; i++) {
      const r = await c.signIn(CONSOLE_ACCESS_KEY, 'not-the-secret');
      expect(r.status).toBe(401);
      expect(r.json()).toEqual({ code: 'XSvcConsoleInvalidCredentials', message: 'The access key or the secret key is wrong.', action: 'Check both keys (they are case-sensitive) and try again.' });
    }
    const limited = await c.signIn(CONSOLE_ACCESS_KEY, 'not-the-secret');
    expect(limited.status).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'XSvcConsoleTooManySignIns', message: expect.stringMatching(/try again in \d+ s/) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(500);
    // even the right keys wait: guessing cannot go on by getting one right
    expect((await c.signIn()).status).toBe(429);
    expect(short.run.stdout()).toContain('"event":"console_signin_limited"');
  });
});

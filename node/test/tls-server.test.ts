/**
 * `svc server` with a certificate directory, as a real process:
 *
 * - start-up refuses an unusable certificate with one clear line (expired,
 *   mismatched key, a named directory that does not exist, https:// volume
 *   arguments without a certificate, http:// and https:// mixed);
 * - certificate rotation: the files are replaced while a client streams a
 *   large PUT; the PUT completes, new connections see the new certificate
 *   (`openssl s_client`), same process;
 * - the `svc` client verifies the server against ~/.svc/certs/CAs (or
 *   SVC_CERTS_DIR), refuses it without the CA (exit 3, what to do), and
 *   `--insecure` skips verification with a warning;
 * - the console calls its node over TLS and signs https share links;
 * - `X-Forwarded-Proto: https` satisfies `aws:SecureTransport` only from a
 *   trusted proxy (`SVC_TRUSTED_PROXIES`), `X-Forwarded-For` likewise for
 *   `aws:SourceIp`; a real TLS connection satisfies it directly.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, PutBucketPolicyCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC } from '../src/telemetry/names.ts';
import { issueLeaf, makeCa, presentedFingerprint, type TestCa } from './helpers/certs.ts';
import { OtlpReceiver } from './helpers/otlp-receiver.ts';
import { runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';

const ACCESS = 'tlsadmin';
const SECRET = 'tlsadmin-secret-key';
const CREDS = { SVC_ACCESS_KEY: ACCESS, SVC_SECRET_KEY: SECRET };

let root: string;
let ca: TestCa;

beforeAll(async () => {
  root = tempDir('tls-server');
  ca = await makeCa(join(root, 'ca'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function drives(name: string): Promise<string> {
  const d = join(root, name);
  for (let i = 1; i <= 4; i++) await mkdir(join(d, `d${i}`), { recursive: true });
  return d;
}

/** A certificate directory with a leaf for 127.0.0.1 / localhost and the CA in CAs/. */
async function certsDir(name: string, o: { start?: Date; end?: Date } = {}): Promise<string> {
  const dir = join(root, name);
  await issueLeaf(ca, dir, { dns: ['localhost'], ips: ['127.0.0.1'], ...o });
  await mkdir(join(dir, 'CAs'), { recursive: true });
  await copyFile(ca.certFile, join(dir, 'CAs', 'ca.crt'));
  return dir;
}

function s3Client(endpoint: string, trust?: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: ACCESS, secretAccessKey: SECRET },
    requestHandler: keepAliveHandler(trust ? { agent: { ca: trust } } : {}),
  });
}

async function until(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('start-up refuses unusable certificates with a clear message', () => {
  async function failsWith(args: string[], env: Record<string, string>, message: RegExp): Promise<void> {
    const run = await runSvc(['server', ...args], { ...CREDS, ...env });
    const code = await run.exited;
    expect(code).toBe(1);
    expect(run.stderr()).toMatch(message);
  }

  it('expired, mismatched key, missing named directory, https without a certificate, mixed schemes', async () => {
    const d = await drives('startup');
    const past = new Date(Date.now() - 40 * 86_400_000);
    const expired = await certsDir('expired', { start: past, end: new Date(past.getTime() + 10 * 86_400_000) });
    await failsWith(['--certs-dir', expired, `${d}/d{1...4}`], {}, /^ERROR: TlsCertificateInvalid: TLS: .*expired\/public\.crt expired on \d{4}-\d\d-\d\dT/m);

    const mismatched = await certsDir('mismatched');
    const other = await certsDir('other');
    await copyFile(join(other, 'private.key'), join(mismatched, 'private.key'));
    await failsWith([`${d}/d{1...4}`], { SVC_CERTS_DIR: mismatched }, /TLS: .*mismatched\/private\.key does not match .*mismatched\/public\.crt/);

    await failsWith([`${d}/d{1...4}`], { SVC_CERTS_DIR: join(root, 'no-such-dir') }, /TLS: the certificate directory .*no-such-dir does not exist/);

    const port = 19_000 + Math.floor(Math.random() * 1000);
    await failsWith([`https://127.0.0.1:${port}${d}/d{1...4}`], { SVC_ADDRESS: `127.0.0.1:${port}`, HOME: join(root, 'empty-home') }, /volume arguments use https:\/\/ .* but there is no certificate directory/);
    await failsWith(
      [`https://127.0.0.{1...2}:${port}${d}/d{1...2}`, `http://127.0.0.{3...4}:${port}${d}/d{3...4}`],
      { SVC_ADDRESS: `127.0.0.1:${port}` },
      /volume arguments mix http:\/\/ .* and https:\/\/ .* endpoints/,
    );
  }, 60_000);

  it('--help documents the certificate directory and trusted proxies', async () => {
    const r = await runSvcCommand(['server', '--help'], {});
    expect(r.out).toContain('--certs-dir <dir>');
    expect(r.out).toContain('SVC_CERTS_DIR');
    expect(r.out).toContain('SVC_TRUSTED_PROXIES');
    const top = await runSvcCommand(['--help'], {});
    expect(top.out).toContain('--insecure');
  });
});

describe('a TLS node (real process)', () => {
  let run: SvcRun;
  let certs: string;
  let url: string;
  let s3: S3Client;
  let receiver: OtlpReceiver;
  const DAY = 86_400_000;
  let firstEnd: number;

  /** A console session over TLS (the console trusts nothing but the node's CA set either). */
  async function consoleSession(): Promise<{ call: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: () => Promise<unknown> }>; cookie: string; close: () => Promise<void> }> {
    const agent = new Agent({ connect: { ca: ca.pem } });
    const consoleRoot = `https://127.0.0.1:${run.consolePort}/svc/console/`;
    const signIn = await request(new URL('api/session', consoleRoot), {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accessKey: ACCESS, secretKey: SECRET }),
    });
    expect(signIn.statusCode).toBe(200);
    const cookie = String(signIn.headers['set-cookie']);
    const { csrfToken } = (await signIn.body.json()) as { csrfToken: string };
    return {
      cookie,
      call: async (method, path, body) => {
        const r = await request(new URL(path, consoleRoot), {
          method: method as 'GET',
          dispatcher: agent,
          headers: { cookie: cookie.split(';')[0]!, 'x-csrf-token': csrfToken, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        return { status: r.statusCode, json: () => r.body.json() };
      },
      close: () => agent.close(),
    };
  }

  async function certificateAlert(): Promise<{ state: string; detail: string }> {
    const c = await consoleSession();
    try {
      const r = await c.call('GET', 'api/overview');
      expect(r.status).toBe(200);
      const { alerts } = (await r.json()) as { alerts: { id: string; state: string; detail: string }[] };
      return alerts.find((a) => a.id === 'certificates')!;
    } finally {
      await c.close();
    }
  }

  const notAfterPoints = (file: string) => receiver.points(METRIC.tlsCertificateNotAfter).filter((p) => p.resource['process.pid'] === run.child.pid && p.attributes.file === file);

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const d = await drives('node');
    // the first certificate ends in 10 days: inside the 21-day warning window
    firstEnd = Math.floor((Date.now() + 10 * DAY) / 1000) * 1000;
    certs = await certsDir('certs', { end: new Date(firstEnd) });
    run = await runSvc(['server', `${d}/d{1...4}`], { ...CREDS, SVC_CERTS_DIR: certs, SVC_OBS_ENDPOINT: receiver.url, SVC_OBS_METER_INTERVAL: '300ms' });
    if (!(await run.started)) throw new Error(`svc did not start: ${run.stderr()}${run.stdout().slice(-3000)}`);
    url = `https://127.0.0.1:${run.port}`;
    s3 = s3Client(url, ca.pem);
    await s3.send(new CreateBucketCommand({ Bucket: 'rot' }));
  }, 60_000);
  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
    await receiver?.close();
  });

  it('serves https only, and says so at start-up', async () => {
    const started = run.logs().find((l) => l.event === 'startup_address');
    expect(started).toMatchObject({ scheme: 'https' });
    expect(run.logs().find((l) => l.event === 'tls_enabled')).toMatchObject({ dir: certs });
    // a client without the CA fails cleanly on the certificate
    await expect(request(`${url}/health`)).rejects.toThrow(/certificate/);
  });

  it('a certificate close to its end: a warning in the log, the metric, the console alert', async () => {
    expect(run.logs().find((l) => l.event === 'tls_certificate_expiring')).toMatchObject({ level: 'warn', file: join(certs, 'public.crt'), kind: 'server', daysLeft: 9 });
    const point = await receiver.waitFor(() => notAfterPoints(join(certs, 'public.crt')).pop(), 20_000, 'certificate metric');
    expect(point).toMatchObject({ type: 'gauge', unit: 's', value: firstEnd / 1000, attributes: { kind: 'server' } });
    expect((await receiver.waitFor(() => notAfterPoints(join(certs, 'CAs', 'ca.crt')).pop(), 20_000, 'CA metric')).attributes.kind).toBe('ca');
    const alert = await certificateAlert();
    expect(alert.state).toBe('firing');
    expect(alert.detail).toContain(`${join(certs, 'public.crt')} (served) ends on ${new Date(firstEnd).toISOString().slice(0, 10)}, in 9 days`);
  });

  it('certificate rotation while a large PUT streams: the PUT completes, new connections get the new certificate, same process', async () => {
    const pid = run.child.pid;
    const oldFp = await presentedFingerprint('127.0.0.1', run.port);
    const chunk = 1024 * 1024;
    const chunks = 96;
    const hash = createHash('md5');
    let rotated!: () => void;
    const rotation = new Promise<void>((r) => {
      rotated = r;
    });
    let newFp = '';
    const rotate = async () => {
      // new pair staged aside, then moved in: certificate first, key second (a moment of mismatch the server rides out)
      const staging = join(root, 'staging');
      await issueLeaf(ca, staging, { dns: ['localhost'], ips: ['127.0.0.1'] });
      await rename(join(staging, 'public.crt'), join(certs, 'public.crt'));
      await rename(join(staging, 'private.key'), join(certs, 'private.key'));
      await until(async () => (newFp = await presentedFingerprint('127.0.0.1', run.port)) !== oldFp, 20_000, 'new certificate served');
      rotated();
    };
    async function* body(): AsyncGenerator<Buffer> {
      for (let i = 0; i < chunks; i++) {
        if (i === 16) void rotate();
        // the second half is sent only after new connections already see the new certificate
        if (i === chunks / 2) await rotation;
        const b = randomBytes(chunk);
        hash.update(b);
        yield b;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const put = await s3.send(new PutObjectCommand({ Bucket: 'rot', Key: 'large', Body: Readable.from(body()), ContentLength: chunk * chunks }));
    expect(put.ETag).toBe(`"${hash.digest('hex')}"`);
    expect(newFp).not.toBe(oldFp);
    expect(await presentedFingerprint('127.0.0.1', run.port)).toBe(newFp);
    // a fresh client on a new connection reads the object back under the new certificate
    const fresh = s3Client(url, ca.pem);
    const head = await fresh.send(new GetObjectCommand({ Bucket: 'rot', Key: 'large', Range: 'bytes=0-0' }));
    expect(head.ContentRange).toBe(`bytes 0-0/${chunk * chunks}`);
    fresh.destroy();
    expect(run.child.exitCode).toBeNull();
    expect(run.child.pid).toBe(pid);
    expect(run.logs().filter((l) => l.event === 'startup_begin')).toHaveLength(1);
    expect(run.logs().some((l) => l.event === 'tls_certificates_reloaded')).toBe(true);
    // the renewed certificate (30 days) clears the alert and moves the metric
    expect((await certificateAlert()).state).toBe('ok');
    await receiver.waitFor(() => (notAfterPoints(join(certs, 'public.crt')).pop()?.value ?? 0) > firstEnd / 1000 + 15 * 86_400, 20_000, 'metric follows the new certificate');
  }, 120_000);

  it('the svc client verifies with ~/.svc/certs/CAs or SVC_CERTS_DIR, refuses without, and --insecure warns', async () => {
    const home = join(root, 'client-home');
    await mkdir(home, { recursive: true });
    const env = { HOME: home, SVC_ENDPOINT: url, SVC_ACCESS_KEY: ACCESS, SVC_SECRET_KEY: SECRET };
    const refused = await runSvcCommand(['pool', 'list'], env);
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/TLS certificate was refused \(UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    expect(refused.err).toContain(`next: put the CA certificate that signed it in ${join(home, '.svc', 'certs', 'CAs')}/`);
    expect((await runSvcCommand(['ping', url], env)).code).toBe(3);

    const insecure = await runSvcCommand(['pool', 'list', '--insecure', '--json'], env);
    expect(insecure.code).toBe(0);
    expect(insecure.err).toContain('svc: warning: --insecure: TLS certificates are not verified');
    const insecureIam = await runSvcCommand(['admin', 'user', 'list', '--insecure'], env);
    expect(insecureIam.code, insecureIam.err).toBe(0);

    await mkdir(join(home, '.svc', 'certs', 'CAs'), { recursive: true });
    await writeFile(join(home, '.svc', 'certs', 'CAs', 'svc-ca.pem'), ca.pem);
    const trusted = await runSvcCommand(['pool', 'list', '--json'], env);
    expect(trusted.code).toBe(0);
    expect(trusted.err).toBe('');
    expect(JSON.parse(trusted.out)).toEqual([expect.objectContaining({ cmdline: expect.stringContaining('d{1...4}'), status: 'active' })]);
    // Every command group verifies the same way: identities, quotas, notification targets, replication
    // (the server answers each: a missing bucket is exit 1, never 3).
    for (const [args, code] of [
      [['admin', 'user', 'list'], 0],
      [['admin', 'policy', 'list'], 0],
      [['admin', 'notify', 'list'], 0],
      [['admin', 'bucket', 'quota', 'info', 'no-such-bucket'], 1],
      [['replicate', 'ls', 'no-such-bucket'], 1],
    ] as const) {
      const r = await runSvcCommand([...args], env);
      expect(r.code, `svc ${args.join(' ')}: ${r.err}`).toBe(code);
      expect(r.err).not.toContain('TLS certificate was refused');
    }
    expect((await runSvcCommand(['ready', url], env)).code).toBe(0);
    // the server's own directory works as well (CAs/ inside it)
    expect((await runSvcCommand(['ping', url], { HOME: join(root, 'nobody'), SVC_CERTS_DIR: certs })).code).toBe(0);

    // http:// to this https node: the TLS listener hangs up; both say to use https://
    const plain = url.replace('https://', 'http://');
    const hint = `if it serves TLS, use ${url}`;
    const pinged = await runSvcCommand(['ping', plain], env);
    expect(pinged.code).toBe(3);
    expect(pinged.out).toContain(hint);
    const listed = await runSvcCommand(['pool', 'list'], { ...env, SVC_ENDPOINT: plain });
    expect(listed.code).toBe(3);
    expect(listed.err).toContain(hint);
  }, 180_000);

  it('the console reaches its node over TLS and signs https share links', async () => {
    const c = await consoleSession();
    const agent = new Agent({ connect: { ca: ca.pem } });
    try {
      expect(c.cookie).toMatch(/; Secure$/);
      await s3.send(new PutObjectCommand({ Bucket: 'rot', Key: 'shared.txt', Body: 'shared over https' }));
      const share = await c.call('POST', 'api/buckets/rot/share', { key: 'shared.txt', expiresSeconds: 600 });
      expect(share.status).toBe(200);
      const link = ((await share.json()) as { url: string }).url;
      expect(link.startsWith(`https://127.0.0.1:${run.port}/rot/shared.txt?`)).toBe(true);
      const got = await request(link, { dispatcher: agent });
      expect(got.statusCode).toBe(200);
      expect(await got.body.text()).toBe('shared over https');
    } finally {
      await c.close();
      await agent.close();
    }
  });

  it('a real TLS connection satisfies aws:SecureTransport', async () => {
    await s3.send(
      new PutBucketPolicyCommand({
        Bucket: 'rot',
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::rot/public/*', Condition: { Bool: { 'aws:SecureTransport': 'true' } } }],
        }),
      }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'rot', Key: 'public/a.txt', Body: 'a' }));
    const agent = new Agent({ connect: { ca: ca.pem } });
    try {
      const r = await request(`${url}/rot/public/a.txt`, { dispatcher: agent });
      expect(r.statusCode).toBe(200);
      expect(await r.body.text()).toBe('a');
    } finally {
      await agent.close();
    }
  });
});

describe('trusted proxies decide X-Forwarded-* (real process, plain HTTP)', () => {
  let run: SvcRun;
  let s3: S3Client;

  /** An anonymous GET from a chosen loopback source address. */
  function getFrom(localAddress: string, path: string, headers: Record<string, string> = {}): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: run.port, path, localAddress, headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  }

  beforeAll(async () => {
    const d = await drives('proxied');
    // 127.0.0.3 is the reverse proxy; 127.0.0.2 is anyone else
    run = await runSvc(['server', `${d}/d{1...4}`], { ...CREDS, SVC_TRUSTED_PROXIES: '127.0.0.3/32', HOME: join(root, 'empty-home') });
    if (!(await run.started)) throw new Error(`svc did not start: ${run.stderr()}`);
    s3 = s3Client(`http://127.0.0.1:${run.port}`);
    await s3.send(new CreateBucketCommand({ Bucket: 'pub' }));
    await s3.send(
      new PutBucketPolicyCommand({
        Bucket: 'pub',
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::pub/secure/*', Condition: { Bool: { 'aws:SecureTransport': 'true' } } },
            { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::pub/office/*', Condition: { IpAddress: { 'aws:SourceIp': '198.51.100.0/24' } } },
          ],
        }),
      }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'secure/x', Body: 'x' }));
    await s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'office/y', Body: 'y' }));
  }, 60_000);
  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
  });

  it('X-Forwarded-Proto: https from an untrusted address does not satisfy aws:SecureTransport; from the trusted proxy it does', async () => {
    expect(run.logs().find((l) => l.event === 'startup_listening')).toMatchObject({ scheme: 'http', trustedProxies: ['127.0.0.3/32'] });
    expect(await getFrom('127.0.0.2', '/pub/secure/x', { 'x-forwarded-proto': 'https' })).toBe(403);
    expect(await getFrom('127.0.0.3', '/pub/secure/x', { 'x-forwarded-proto': 'https' })).toBe(200);
    // the proxy itself reached over plain HTTP without saying otherwise: not secure
    expect(await getFrom('127.0.0.3', '/pub/secure/x')).toBe(403);
    expect(await getFrom('127.0.0.3', '/pub/secure/x', { 'x-forwarded-proto': 'http' })).toBe(403);
  });

  it('aws:SourceIp is the connection, or the client a trusted proxy forwarded', async () => {
    expect(await getFrom('127.0.0.2', '/pub/office/y', { 'x-forwarded-for': '198.51.100.7' })).toBe(403);
    expect(await getFrom('127.0.0.3', '/pub/office/y', { 'x-forwarded-for': '198.51.100.7' })).toBe(200);
    // a forged left-most entry does not help: the proxy appended the real client
    expect(await getFrom('127.0.0.3', '/pub/office/y', { 'x-forwarded-for': '198.51.100.7, 203.0.113.5' })).toBe(403);
  });

  it('a server with no trusted proxies ignores the headers from loopback too', async () => {
    const d = await drives('unproxied');
    const plain = await runSvc(['server', `${d}/d{1...4}`], { ...CREDS, HOME: join(root, 'empty-home') });
    try {
      expect(await plain.started).toBe(true);
      const c = s3Client(`http://127.0.0.1:${plain.port}`);
      await c.send(new CreateBucketCommand({ Bucket: 'pub' }));
      await c.send(new PutBucketPolicyCommand({ Bucket: 'pub', Policy: await readFile(join(import.meta.dirname, 'fixtures', 'secure-transport-policy.json'), 'utf8') }));
      await c.send(new PutObjectCommand({ Bucket: 'pub', Key: 'secure/x', Body: 'x' }));
      c.destroy();
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: plain.port, path: '/pub/secure/x', headers: { 'x-forwarded-proto': 'https' }, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(403);
    } finally {
      await plain.stop();
    }
  });
});

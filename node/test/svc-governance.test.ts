/**
 * Data governance with the real `svc server` process: a restart keeps
 * encrypted objects (SSE-C, SSE-S3, SSE-KMS, bucket default) readable and
 * locked versions locked; a configured key file that is not there leaves the
 * node up and not ready (`kms_not_ready`) until it appears; a malformed key
 * stops start-up before any disk is touched; the node's own scanner applies
 * a lifecycle rule with nothing but its cycles.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import type { BucketGovernanceReport, KmsStatusReport } from '../src/object/admin/governance-admin.ts';
import { admin } from './helpers/admin.ts';
import { DAY_MS, kmsKeyLine, s3Error } from './helpers/governance.ts';
import { type CommandRun, runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

/** The real `svc` command (its admin client), with a private HOME. */
function svcCli(args: string[], env: Record<string, string>): Promise<CommandRun> {
  const home = tempDir('cli-home');
  dirs.push(home);
  return runSvcCommand(args, { HOME: home, ...env });
}

const dirs: string[] = [];
const runs: SvcRun[] = [];
afterAll(async () => {
  for (const r of runs) await r.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function drives(n: number): string {
  const base = tempDir('governance');
  dirs.push(base);
  for (let i = 1; i <= n; i++) mkdirSync(join(base, `d${i}`));
  return base;
}

async function start(base: string, env: Record<string, string>): Promise<{ run: SvcRun; s3: S3Client; url: string }> {
  const run = await runSvc(['server', `${base}/d{1...4}`], env);
  runs.push(run);
  expect(await run.started).toBe(true);
  const url = `http://127.0.0.1:${run.port}`;
  const s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin' } });
  return { run, s3, url };
}

async function readyBody(url: string): Promise<{ status: number; body: { ready: boolean; details: Record<string, { ready: boolean; detail?: string }>; degradedReasons: string[] } }> {
  const r = await fetch(`${url}/health/ready`);
  return { status: r.status, body: (await r.json()) as never };
}

const text = async (r: { Body?: { transformToString(): Promise<string> } }) => r.Body!.transformToString();

describe('svc server: encryption and object lock across a restart', () => {
  it('keeps every encrypted object readable and every lock in force', async () => {
    const base = drives(4);
    const env = { SVC_KMS_SECRET_KEY: kmsKeyLine('node-key') };
    const customer = randomBytes(32).toString('base64');
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customer };
    let { run, s3, url } = await start(base, env);
    const r0 = await readyBody(url);
    expect(r0.status).toBe(200);
    expect(r0.body.details.kms).toMatchObject({ ready: true });
    await s3.send(new CreateBucketCommand({ Bucket: 'enc' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'worm', ObjectLockEnabledForBucket: true }));
    await s3.send(
      new PutObjectLockConfigurationCommand({ Bucket: 'worm', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 30 } } } }),
    );
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'enc',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 7 } },
            { ID: 'old', Status: 'Enabled', Filter: {}, NoncurrentVersionExpiration: { NoncurrentDays: 30, NewerNoncurrentVersions: 2 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 } },
          ],
        },
      }),
    );
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'enc', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } }));
    const big = randomBytes(3 * 1024 * 1024 + 5);
    await s3.send(new PutObjectCommand({ Bucket: 'enc', Key: 'default', Body: big }));
    await s3.send(new PutObjectCommand({ Bucket: 'enc', Key: 'kms', Body: 'kms body', ServerSideEncryption: 'aws:kms' }));
    await s3.send(new PutObjectCommand({ Bucket: 'enc', Key: 'ssec', Body: 'customer body', ...ssec }));
    const locked = await s3.send(
      new PutObjectCommand({ Bucket: 'worm', Key: 'k', Body: 'kept', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + DAY_MS) }),
    );
    s3.destroy();
    expect(await run.stop()).toBe(0);

    ({ run, s3, url } = await start(base, env));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'enc', Key: 'default' }));
    expect(got.ServerSideEncryption).toBe('AES256');
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(big)).toBe(true);
    expect(await text(await s3.send(new GetObjectCommand({ Bucket: 'enc', Key: 'kms' })))).toBe('kms body');
    expect(await text(await s3.send(new GetObjectCommand({ Bucket: 'enc', Key: 'ssec', ...ssec })))).toBe('customer body');
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: 'enc', Key: 'ssec' })))).status).toBe(400);
    expect((await s3Error(s3.send(new DeleteObjectCommand({ Bucket: 'worm', Key: 'k', VersionId: locked.VersionId, BypassGovernanceRetention: true })))).code).toBe('AccessDenied');
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'worm', Key: 'k', VersionId: locked.VersionId }))).ObjectLockMode).toBe('COMPLIANCE');
    // the drives hold no plaintext of the default-encrypted object
    const sample = big.subarray(1000, 1064);
    const hits: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (readFileSync(p).includes(sample)) hits.push(p);
      }
    };
    walk(base);
    expect(hits).toEqual([]);

    // admin visibility: the route the console reads, and `svc bucket info` / `svc admin kms`
    const creds = { accessKey: 'svcadmin', secretKey: 'svcadmin' };
    const gov = (await admin(url, creds, { method: 'GET', path: 'v3/bucket/governance' })).json() as BucketGovernanceReport;
    const byName = Object.fromEntries(gov.buckets.map((b) => [b.name, b]));
    expect(byName.worm).toMatchObject({ versioning: 'Enabled', objectLock: { enabled: true, defaultRetention: { mode: 'GOVERNANCE', days: 30 } } });
    expect(byName.enc).toMatchObject({ versioning: 'Unversioned', objectLock: { enabled: false }, encryption: { algorithm: 'AES256' } });
    expect(byName.enc!.lifecycle?.rules.map((r) => r.id)).toEqual(['logs', 'old']);
    expect(byName.enc!.lifecycle?.rules[1]).toMatchObject({ noncurrentVersionExpiration: { noncurrentDays: 30, newerNoncurrentVersions: 2 }, abortIncompleteMultipartUpload: { daysAfterInitiation: 3 } });
    const one = await admin(url, creds, { method: 'GET', path: 'v3/bucket/governance', query: { bucket: 'missing-bucket' } });
    expect(one.status).toBe(404);
    const kms = (await admin(url, creds, { method: 'GET', path: 'v3/kms/status' })).json() as KmsStatusReport;
    expect(kms).toMatchObject({ configured: true, ready: true, source: 'env', defaultKeyId: 'node-key', keyIds: ['node-key'] });
    const cliEnv = { SVC_ENDPOINT: url, SVC_ACCESS_KEY: 'svcadmin', SVC_SECRET_KEY: 'svcadmin' };
    const info = await svcCli(['bucket', 'info', 'enc'], cliEnv);
    expect(info.code, info.err).toBe(0);
    for (const text of ['SSE-S3 (AES256)', 'Unversioned', 'prefix "logs/"', 'expire current after 7d', 'delete noncurrent after 30d (keep 2 newest)', 'abort uploads after 3d']) {
      expect(info.out).toContain(text);
    }
    const all = await svcCli(['bucket', 'info'], cliEnv);
    expect(all.out).toContain('on, default GOVERNANCE 30 day(s)');
    const k = await svcCli(['admin', 'kms'], cliEnv);
    expect(k.out).toContain('node-key');
    s3.destroy();
  });
});

describe('svc server: the key store', () => {
  it('a key file that is not there yet: up, not ready (kms_not_ready), ready once it appears', async () => {
    const base = drives(4);
    const keyFile = join(base, 'keys');
    const { s3, url } = await start(base, { SVC_KMS_SECRET_KEY_FILE: keyFile, SVC_STARTUP_READINESS_MAX_WAIT_SECS: '1' });
    const before = await readyBody(url);
    expect(before.status).toBe(503);
    expect(before.body.degradedReasons).toContain('kms_not_ready');
    expect(before.body.details.kms).toMatchObject({ ready: false });
    expect(before.body.details.kms!.detail).toContain('ENOENT');
    writeFileSync(keyFile, `# svc keys\n${kmsKeyLine('file-key')}\n`);
    let ready = before;
    for (let i = 0; i < 40 && ready.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      ready = await readyBody(url);
    }
    expect(ready.status).toBe(200);
    expect(ready.body.details.kms!.detail).toContain('file-key');
    await s3.send(new CreateBucketCommand({ Bucket: 'kms-bucket' }));
    const put = await s3.send(new PutObjectCommand({ Bucket: 'kms-bucket', Key: 'k', Body: 'x', ServerSideEncryption: 'AES256' }));
    expect(put.ServerSideEncryption).toBe('AES256');
    s3.destroy();
  });

  it('a malformed SVC_KMS_SECRET_KEY stops start-up before any disk is touched; both variables are refused', async () => {
    const base = drives(4);
    const bad = await runSvc(['server', `${base}/d{1...4}`], { SVC_KMS_SECRET_KEY: 'no-key-here' });
    expect(await bad.exited).not.toBe(0);
    expect(bad.stdout() + bad.stderr()).toContain('SVC_KMS_SECRET_KEY');
    expect(readdirSync(join(base, 'd1'))).toEqual([]);
    const both = await runSvc(['server', `${base}/d{1...4}`], { SVC_KMS_SECRET_KEY: kmsKeyLine('a'), SVC_KMS_SECRET_KEY_FILE: join(base, 'k') });
    expect(await both.exited).not.toBe(0);
    expect(both.stdout() + both.stderr()).toContain('not both');
  });
});

describe('svc server: lifecycle on the node scanner', () => {
  it('a rule whose date has passed expires what it selects on the scanner cycles, nothing else', async () => {
    const base = drives(4);
    const { s3 } = await start(base, { SVC_SCANNER_INTERVAL: '1s', SVC_SCANNER_SPEED: 'fastest' });
    await s3.send(new CreateBucketCommand({ Bucket: 'lc-node' }));
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'lc-node',
        LifecycleConfiguration: { Rules: [{ ID: 'old', Status: 'Enabled', Filter: { Prefix: 'old/' }, Expiration: { Date: new Date('2024-01-01T00:00:00Z') } }] },
      }),
    );
    for (const k of ['old/a', 'old/b', 'oldx', 'keep/a']) await s3.send(new PutObjectCommand({ Bucket: 'lc-node', Key: k, Body: k }));
    const keys = async () => ((await s3.send(new ListObjectsV2Command({ Bucket: 'lc-node' }))).Contents ?? []).map((c) => c.Key!).sort();
    let left = await keys();
    const end = Date.now() + 120_000;
    while (left.some((k) => k.startsWith('old/')) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      left = await keys();
    }
    expect(left).toEqual(['keep/a', 'oldx']);
    // A few more cycles take nothing the rule does not select.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await keys()).toEqual(['keep/a', 'oldx']);
    s3.destroy();
  }, 180_000);
});

/**
 * Identity and access against a real `svc server` process, driven by the
 * real clients: the `svc admin` client creates users, policies, groups and
 * access keys (madmin's encrypted bodies); `@aws-sdk/client-s3` (root), the
 * AWS CLI (a user with a read-only policy on one bucket) and minio-js (an
 * access key with an inline policy) then find exactly what each identity
 * may do allowed, and everything else refused with AccessDenied, on S3 and
 * on the admin API. Cross-account grants (ACL, bucket policy Principal),
 * disabling a user and removing an access key are checked here too.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCliHome, runCli } from './helpers/cli.ts';
import { runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { admin } from './helpers/admin.ts';

const ROOT = { accessKey: 'iamroot', secretKey: 'iamroot-secret-key' };
let srv: SvcRun;
let work: string;
let endpoint: string;

const s3 = (ak: string, sk: string, token?: string) =>
  new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: ak, secretAccessKey: sk, ...(token ? { sessionToken: token } : {}) } });

async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException || (err instanceof Error && '$metadata' in err)) return err.name;
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    throw err;
  }
  return 'OK';
}

/** `svc admin ...` as an identity; the parsed --json output and the exit code. */
async function svcAdmin(creds: { accessKey: string; secretKey: string }, args: string[]): Promise<{ code: number | null; json: unknown; out: string; err: string }> {
  const r = await runSvcCommand([...args, '--json'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: creds.accessKey, SVC_SECRET_KEY: creds.secretKey, HOME: join(work, 'home') });
  let json: unknown;
  try {
    json = JSON.parse(r.out);
  } catch {
    json = undefined;
  }
  return { code: r.code, json, out: r.out, err: r.err };
}

async function ok(creds: { accessKey: string; secretKey: string }, args: string[]): Promise<unknown> {
  const r = await svcAdmin(creds, args);
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.code}: ${r.out}${r.err}`);
  return r.json;
}

async function waitReady(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${endpoint}/health/ready`).catch(() => undefined);
    if (r?.status === 200) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`server never became ready:\n${srv.stdout().slice(-3000)}`);
}

beforeAll(async () => {
  work = tempDir('iam');
  for (let i = 1; i <= 4; i++) mkdirSync(join(work, `d${i}`));
  await prepareCliHome(work);
  srv = await runSvc(['server', join(work, 'd{1...4}')], { SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey });
  expect(await srv.started).toBe(true);
  endpoint = `http://127.0.0.1:${srv.port}`;
  await waitReady();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
});

const ALICE = { accessKey: 'alice', secretKey: 'alice-secret-1' };
const CAROL = { accessKey: 'carol', secretKey: 'carol-secret-1' };

describe('three identities, three real clients', () => {
  let keyOfCarol: { accessKey: string; secretKey: string };

  it('the root sets up buckets, a policy, users and an access key through svc admin', async () => {
    const root = s3(ROOT.accessKey, ROOT.secretKey);
    for (const b of ['photos', 'finance']) await root.send(new CreateBucketCommand({ Bucket: b }));
    await root.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));
    await root.send(new PutObjectCommand({ Bucket: 'finance', Key: 'q1.csv', Body: 'money' }));
    const readPhotos = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBucket', 's3:GetBucketLocation'], Resource: ['arn:aws:s3:::photos', 'arn:aws:s3:::photos/*'] },
      ],
    };
    writeFileSync(join(work, 'read-photos.json'), JSON.stringify(readPhotos));
    expect(await ok(ROOT, ['admin', 'policy', 'create', 'read-photos', join(work, 'read-photos.json')])).toMatchObject({ status: 'success' });
    expect(await ok(ROOT, ['admin', 'user', 'add', ALICE.accessKey, ALICE.secretKey])).toMatchObject({ status: 'success' });
    expect(await ok(ROOT, ['admin', 'policy', 'attach', 'read-photos', '--user', 'alice'])).toMatchObject({ policiesAttached: ['read-photos'] });
    await ok(ROOT, ['admin', 'user', 'add', CAROL.accessKey, CAROL.secretKey]);
    await ok(ROOT, ['admin', 'policy', 'attach', 'readwrite', '--user', 'carol']);
    // carol's access key may only upload under photos/uploads/
    const uploadsOnly = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::photos/uploads/*'] }] };
    writeFileSync(join(work, 'uploads-only.json'), JSON.stringify(uploadsOnly));
    keyOfCarol = (await ok(ROOT, ['admin', 'accesskey', 'create', 'carol', '--policy', join(work, 'uploads-only.json'), '--name', 'uploader'])) as { accessKey: string; secretKey: string };
    expect(keyOfCarol.accessKey).toMatch(/^[A-Z0-9]{20}$/);
    expect(keyOfCarol.secretKey.length).toBe(40);
    const users = (await ok(ROOT, ['admin', 'user', 'list'])) as { accessKey: string; policyName: string; status: string }[];
    expect(users.map((u) => [u.accessKey, u.policyName, u.status])).toEqual([
      ['alice', 'read-photos', 'enabled'],
      ['carol', 'readwrite', 'enabled'],
    ]);
    const keys = (await ok(ROOT, ['admin', 'accesskey', 'list', 'carol'])) as { accessKey: string; parentUser: string; impliedPolicy: boolean; name: string }[];
    expect(keys).toEqual([expect.objectContaining({ accessKey: keyOfCarol.accessKey, parentUser: 'carol', impliedPolicy: false, name: 'uploader' })]);
    // Without a user the list is the caller's own keys, and an empty one says so.
    const own = await runSvcCommand(['admin', 'accesskey', 'list'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });
    expect(own.code, own.err).toBe(0);
    expect(own.out.trim()).toBe(`No access keys of your own (${ROOT.accessKey}); svc admin accesskey list ALIAS USER lists a user's.`);
    // every change is an audit event naming the caller; no secret in the log
    const changes = srv.logs().filter((l) => l.event === 'iam_change');
    expect(changes.map((l) => l.op)).toEqual(['policy.create', 'user.add', 'policy.attach', 'user.add', 'policy.attach', 'accesskey.create']);
    expect(changes.every((l) => l.actor === ROOT.accessKey)).toBe(true);
    expect(srv.stdout()).not.toContain(ALICE.secretKey);
    expect(srv.stdout()).not.toContain(keyOfCarol.secretKey);
  });

  it('the root (AWS SDK v3) may do anything', async () => {
    const root = s3(ROOT.accessKey, ROOT.secretKey);
    expect((await root.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['finance', 'photos']);
    expect(await errorCode(root.send(new GetObjectCommand({ Bucket: 'finance', Key: 'q1.csv' })))).toBe('OK');
    expect((await svcAdmin(ROOT, ['admin', 'info'])).code).toBe(0);
  });

  it('alice (AWS CLI) reads and lists photos; everything else is AccessDenied', async () => {
    const env = { work, target: { endpoint, ...ALICE } };
    expect(await runCli(env, 'aws', ['s3api', 'get-object', '--bucket', 'photos', '--key', 'cat.jpg', join(work, 'cat.out')])).toContain('ContentLength');
    expect(await runCli(env, 'aws', ['s3', 'ls', 's3://photos/'])).toContain('cat.jpg');
    // ListBuckets shows the buckets she may list
    expect(JSON.parse(await runCli(env, 'aws', ['s3api', 'list-buckets'])).Buckets.map((b: { Name: string }) => b.Name)).toEqual(['photos']);
    const refused = async (args: string[]) => {
      const e = await runCli(env, 'aws', args).then(
        () => 'succeeded',
        (err: Error) => err.message,
      );
      expect(e, args.join(' ')).toContain('AccessDenied');
    };
    writeFileSync(join(work, 'up.txt'), 'upload');
    await refused(['s3api', 'put-object', '--bucket', 'photos', '--key', 'new.txt', '--body', join(work, 'up.txt')]);
    await refused(['s3api', 'delete-object', '--bucket', 'photos', '--key', 'cat.jpg']);
    await refused(['s3api', 'get-object', '--bucket', 'finance', '--key', 'q1.csv', join(work, 'q1.out')]);
    await refused(['s3api', 'list-objects-v2', '--bucket', 'finance']);
    await refused(['s3api', 'create-bucket', '--bucket', 'alices']);
    await refused(['s3api', 'put-bucket-policy', '--bucket', 'photos', '--policy', '{"Version":"2012-10-17","Statement":[]}']);
    // the admin API: no admin permission
    const info = await svcAdmin(ALICE, ['admin', 'info']);
    expect([info.code, (info.json as { Code?: string }).Code]).toEqual([1, 'AccessDenied']);
    const add = await svcAdmin(ALICE, ['admin', 'user', 'add', 'mallory', 'mallory-secret']);
    expect((add.json as { Code?: string }).Code).toBe('AccessDenied');
    // but her own user info is hers to read
    expect(await ok(ALICE, ['admin', 'user', 'info', 'alice'])).toMatchObject({ policyName: 'read-photos', status: 'enabled' });
  }, 180_000);

  it("carol's access key (minio-js) may only upload under photos/uploads/", async () => {
    const mc = new Minio.Client({ endPoint: '127.0.0.1', port: srv.port, useSSL: false, accessKey: keyOfCarol.accessKey, secretKey: keyOfCarol.secretKey, region: 'us-east-1', pathStyle: true });
    await mc.putObject('photos', 'uploads/dog.jpg', Buffer.from('woof'));
    const code = (p: Promise<unknown>) => p.then(() => 'OK', (e: { code?: string }) => e.code ?? String(e));
    expect(await code(mc.putObject('photos', 'elsewhere.jpg', Buffer.from('x')))).toBe('AccessDenied');
    expect(await code(mc.getObject('photos', 'uploads/dog.jpg'))).toBe('AccessDenied');
    expect(await code(mc.removeObject('photos', 'uploads/dog.jpg'))).toBe('AccessDenied');
    expect(await code(mc.listBuckets())).toBe('OK');
    expect(await mc.listBuckets()).toEqual([]);
    expect(await code(mc.makeBucket('carols', 'us-east-1'))).toBe('AccessDenied');
    // carol herself (readwrite) reads what her key uploaded
    expect(await (await s3(CAROL.accessKey, CAROL.secretKey).send(new GetObjectCommand({ Bucket: 'photos', Key: 'uploads/dog.jpg' }))).Body!.transformToString()).toBe('woof');
    const info = await svcAdmin(keyOfCarol, ['admin', 'info']);
    expect((info.json as { Code?: string }).Code).toBe('AccessDenied');
  });

  it('disabling a user and removing an access key refuse their next request', async () => {
    const alice = s3(ALICE.accessKey, ALICE.secretKey);
    expect(await errorCode(alice.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' })))).toBe('OK');
    await ok(ROOT, ['admin', 'user', 'disable', 'alice']);
    expect(await errorCode(alice.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' })))).toBe('InvalidAccessKeyId');
    await ok(ROOT, ['admin', 'user', 'enable', 'alice']);
    expect(await errorCode(alice.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' })))).toBe('OK');
    const key = s3(keyOfCarol.accessKey, keyOfCarol.secretKey);
    expect(await errorCode(key.send(new PutObjectCommand({ Bucket: 'photos', Key: 'uploads/a', Body: 'a' })))).toBe('OK');
    await ok(ROOT, ['admin', 'accesskey', 'remove', keyOfCarol.accessKey]);
    expect(await errorCode(key.send(new PutObjectCommand({ Bucket: 'photos', Key: 'uploads/b', Body: 'b' })))).toBe('InvalidAccessKeyId');
    // disabling carol also stops her access keys
    const k2 = (await ok(ROOT, ['admin', 'accesskey', 'create', 'carol'])) as { accessKey: string; secretKey: string };
    expect(await errorCode(s3(k2.accessKey, k2.secretKey).send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' })))).toBe('OK');
    await ok(ROOT, ['admin', 'user', 'disable', 'carol']);
    expect(await errorCode(s3(k2.accessKey, k2.secretKey).send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' })))).toBe('InvalidAccessKeyId');
  });
});

describe('cross-account access', () => {
  const DAVE = { accessKey: 'dave', secretKey: 'dave-secret-1' };
  const ERIN = { accessKey: 'erin', secretKey: 'erin-secret-1' };

  it("a private bucket of one user is refused to another; an ACL grant and a bucket-policy Principal open exactly what they say", async () => {
    writeFileSync(join(work, 'own-buckets.json'), JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:CreateBucket'], Resource: ['arn:aws:s3:::*'] }] }));
    await ok(ROOT, ['admin', 'policy', 'create', 'own-buckets', join(work, 'own-buckets.json')]);
    for (const u of [DAVE, ERIN]) {
      await ok(ROOT, ['admin', 'user', 'add', u.accessKey, u.secretKey]);
      await ok(ROOT, ['admin', 'policy', 'attach', 'own-buckets', '--user', u.accessKey]);
    }
    const dave = s3(DAVE.accessKey, DAVE.secretKey);
    const erin = s3(ERIN.accessKey, ERIN.secretKey);
    await dave.send(new CreateBucketCommand({ Bucket: 'daves' }));
    await dave.send(new PutObjectCommand({ Bucket: 'daves', Key: 'shared.txt', Body: 'for erin' }));
    await dave.send(new PutObjectCommand({ Bucket: 'daves', Key: 'secret.txt', Body: 'for dave' }));
    // the owner has full control of its bucket; the other user nothing
    expect(await errorCode(dave.send(new GetObjectCommand({ Bucket: 'daves', Key: 'secret.txt' })))).toBe('OK');
    for (const call of [
      () => erin.send(new GetObjectCommand({ Bucket: 'daves', Key: 'shared.txt' })),
      () => erin.send(new ListObjectsV2Command({ Bucket: 'daves' })),
      () => erin.send(new PutObjectCommand({ Bucket: 'daves', Key: 'x', Body: 'x' })),
      () => erin.send(new DeleteObjectCommand({ Bucket: 'daves', Key: 'secret.txt' })),
    ]) {
      expect(await errorCode(call())).toBe('AccessDenied');
    }
    // the name is taken
    expect(await errorCode(erin.send(new CreateBucketCommand({ Bucket: 'daves' })))).toBe('BucketAlreadyExists');
    // an ACL grant to erin on one object: that object, read only
    await dave.send(new PutObjectAclCommand({ Bucket: 'daves', Key: 'shared.txt', GrantRead: 'id="erin"' }));
    expect(await (await erin.send(new GetObjectCommand({ Bucket: 'daves', Key: 'shared.txt' }))).Body!.transformToString()).toBe('for erin');
    expect(await errorCode(erin.send(new GetObjectCommand({ Bucket: 'daves', Key: 'secret.txt' })))).toBe('AccessDenied');
    expect(await errorCode(erin.send(new ListObjectsV2Command({ Bucket: 'daves' })))).toBe('AccessDenied');
    // a bucket policy naming erin: listing, nothing more
    await dave.send(
      new PutBucketPolicyCommand({
        Bucket: 'daves',
        Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/erin'] }, Action: 's3:ListBucket', Resource: 'arn:aws:s3:::daves' }] }),
      }),
    );
    expect((await erin.send(new ListObjectsV2Command({ Bucket: 'daves' }))).Contents?.map((o) => o.Key)).toEqual(['secret.txt', 'shared.txt']);
    expect(await errorCode(erin.send(new GetObjectCommand({ Bucket: 'daves', Key: 'secret.txt' })))).toBe('AccessDenied');
    expect(await errorCode(erin.send(new PutObjectCommand({ Bucket: 'daves', Key: 'y', Body: 'y' })))).toBe('AccessDenied');
    // without s3:ListAllMyBuckets, ListBuckets shows the buckets one may list: her own (none) and dave's now
    expect((await erin.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['daves']);
    expect((await dave.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['daves']);
  });
});

describe('STS AssumeRole', () => {
  const FRANK = { accessKey: 'frank', secretKey: 'frank-secret-1' };

  it('a user assumes a session (AWS SDK STS client); a session policy narrows it; the credentials need their token; disabling the user ends them', async () => {
    const root = s3(ROOT.accessKey, ROOT.secretKey);
    for (const b of ['sts-data', 'sts-other']) await root.send(new CreateBucketCommand({ Bucket: b }));
    await root.send(new PutObjectCommand({ Bucket: 'sts-data', Key: 'k', Body: 'k' }));
    await root.send(new PutObjectCommand({ Bucket: 'sts-other', Key: 'o', Body: 'o' }));
    await ok(ROOT, ['admin', 'user', 'add', FRANK.accessKey, FRANK.secretKey]);
    await ok(ROOT, ['admin', 'policy', 'attach', 'readwrite', '--user', 'frank']);
    const sts = new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: FRANK.accessKey, secretAccessKey: FRANK.secretKey } });
    const narrow = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::sts-data/*'] }] });
    const r = await sts.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 's1', DurationSeconds: 900, Policy: narrow }));
    const c = r.Credentials!;
    expect(c.Expiration!.getTime() - Date.now()).toBeGreaterThan(880_000);
    expect(c.Expiration!.getTime() - Date.now()).toBeLessThanOrEqual(900_000);
    const session = s3(c.AccessKeyId!, c.SecretAccessKey!, c.SessionToken!);
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('OK');
    // the session policy narrows frank's readwrite to reading photos
    expect(await errorCode(session.send(new PutObjectCommand({ Bucket: 'sts-data', Key: 'f', Body: 'f' })))).toBe('AccessDenied');
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'sts-other', Key: 'o' })))).toBe('AccessDenied');
    // past the expiry the credentials fail: a client whose clock runs 900 s ahead (the edge of SigV4's
    // 15-minute skew) signs, a second after the session began, past its 900 s expiry
    await new Promise((r) => setTimeout(r, 1_200));
    const later = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, systemClockOffset: 900_000, credentials: { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! } });
    expect(await errorCode(later.send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('ExpiredToken');
    const before = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, systemClockOffset: 880_000, credentials: { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! } });
    expect(await errorCode(before.send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('OK');
    // without a session policy the session has frank's rights
    const full = (await sts.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 's2' }))).Credentials!;
    expect(await errorCode(s3(full.AccessKeyId!, full.SecretAccessKey!, full.SessionToken!).send(new PutObjectCommand({ Bucket: 'sts-data', Key: 'by-frank', Body: 'f' })))).toBe('OK');
    // the token is part of the credential: missing or another session's is refused
    expect(await errorCode(s3(c.AccessKeyId!, c.SecretAccessKey!).send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('InvalidAccessKeyId');
    expect(await errorCode(s3(c.AccessKeyId!, c.SecretAccessKey!, full.SessionToken!).send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('InvalidToken');
    // a session cannot assume further; bad input is refused
    const fromSession = new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! } });
    expect(await errorCode(fromSession.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 's3' })))).toBe('AccessDenied');
    expect(await errorCode(sts.send(new AssumeRoleCommand({ RoleArn: 'x', RoleSessionName: 's', DurationSeconds: 60 })))).toBe('InvalidParameterValue');
    expect(await errorCode(sts.send(new AssumeRoleCommand({ RoleArn: 'x', RoleSessionName: 's', Policy: '{"Statement":' })))).toBe('MalformedPolicyDocumentException');
    const typo = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObjcet'], Resource: ['arn:aws:s3:::sts-data/*'] }] });
    expect(await errorCode(sts.send(new AssumeRoleCommand({ RoleArn: 'x', RoleSessionName: 's', Policy: typo })))).toBe('MalformedPolicyDocumentException');
    const wrong = new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: FRANK.accessKey, secretAccessKey: 'not-his-secret' } });
    expect(await errorCode(wrong.send(new AssumeRoleCommand({ RoleArn: 'x', RoleSessionName: 's' })))).toBe('SignatureDoesNotMatch');
    // disabling frank ends his sessions at once
    await ok(ROOT, ['admin', 'user', 'disable', 'frank']);
    expect(await errorCode(session.send(new GetObjectCommand({ Bucket: 'sts-data', Key: 'k' })))).toBe('InvalidToken');
    const sessionLogs = srv.logs().filter((l) => l.event === 'sts_session');
    expect(sessionLogs.map((l) => [l.action, l.parent])).toEqual([
      ['AssumeRole', 'frank'],
      ['AssumeRole', 'frank'],
    ]);
  });
});

describe('policy documents and action names', () => {
  const doc = (action: string | string[], resource = 'arn:aws:s3:::photos/*') => ({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: action, Resource: [resource] }] });
  const file = (name: string, body: unknown) => {
    const path = join(work, `${name}.json`);
    writeFileSync(path, JSON.stringify(body));
    return path;
  };

  it('svc admin policy create and the admin API refuse a misspelled action, naming it; nothing is stored', async () => {
    const good = doc(['s3:GetObject']);
    await ok(ROOT, ['admin', 'policy', 'create', 'pol-typo', file('pol-good', good)]);
    const typo = file('pol-typo', doc(['s3:GetObject', 's3:GetObjcet']));
    for (const name of ['pol-typo', 'pol-new']) {
      const r = await svcAdmin(ROOT, ['admin', 'policy', 'create', name, typo]);
      expect(r.code, name).not.toBe(0);
      expect(r.out + r.err).toContain("Policy has invalid action 's3:GetObjcet': no s3 action has that name (did you mean s3:GetObject?)");
    }
    // the existing policy is as it was; the new one does not exist
    expect(((await ok(ROOT, ['admin', 'policy', 'info', 'pol-typo'])) as { Policy: unknown }).Policy).toEqual(good);
    expect(((await ok(ROOT, ['admin', 'policy', 'list'])) as { policy: string }[]).map((p) => p.policy)).not.toContain('pol-new');
    // the admin API itself (AddCannedPolicy): 400 MalformedPolicy, the action named
    const res = await admin(endpoint, ROOT, { method: 'PUT', path: 'v3/add-canned-policy', query: { name: 'pol-api' }, body: JSON.stringify(doc('admin:ServerInfos', '*')) });
    expect([res.status, res.json()]).toEqual([400, expect.objectContaining({ Code: 'MalformedPolicy', Message: expect.stringContaining("Policy has invalid action 'admin:ServerInfos'") })]);
    // an access key's own policy is checked the same way
    const ak = await svcAdmin(ROOT, ['admin', 'accesskey', 'create', '--access-key', 'AKTYPO01', '--policy', file('ak-typo', doc('s3:Get*Objekt'))]);
    expect(ak.code).not.toBe(0);
    expect(ak.out + ak.err).toContain("Policy has invalid action 's3:Get*Objekt'");
  });

  it('policies written for AWS and MinIO that name actions svc does not implement are accepted as written', async () => {
    const aws = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:GetStorageLensConfiguration', 's3:PutAccessPointPolicy', 's3:ListAllMyBuckets', 'S3:getobject'], Resource: ['*'] },
        { Effect: 'Allow', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Resource: ['*'] },
        { Effect: 'Allow', Action: ['sts:AssumeRole'], Resource: ['*'] },
        { Effect: 'Allow', Action: ['admin:SiteReplicationInfo', 'admin:ServerInfo'], Resource: ['arn:aws:s3:::*'] },
      ],
    };
    await ok(ROOT, ['admin', 'policy', 'create', 'pol-aws', file('pol-aws', aws)]);
    expect(((await ok(ROOT, ['admin', 'policy', 'info', 'pol-aws'])) as { Policy: unknown }).Policy).toEqual(aws);
  });
});

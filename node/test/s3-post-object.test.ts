/**
 * POST Object (browser uploads) against the real server: forms built by
 * minio-js `presignedPostPolicy` and by hand, sent as multipart/form-data
 * with fetch, as a browser sends them.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, GetObjectTaggingCommand, HeadObjectCommand, PutBucketAclCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKey } from '../src/api/s3/auth/sigv4.ts';
import { checksumBase64 } from '../src/api/s3/checksum.ts';
import { kmsKeyLine, s3Error, testKms } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let srv: S3Server;
let s3: S3Client;
let mc: Minio.Client;

beforeAll(async () => {
  srv = await start({ kms: testKms(kmsKeyLine('cluster-key'), kmsKeyLine('second')) });
  s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: srv.endpoint, region: srv.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey } });
  const u = new URL(srv.endpoint);
  mc = new Minio.Client({ endPoint: u.hostname, port: Number(u.port), useSSL: false, accessKey: srv.accessKey, secretKey: srv.secretKey, region: 'us-east-1' });
  await s3.send(new CreateBucketCommand({ Bucket: 'post' }));
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

async function exists(key: string, bucket = 'post'): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return false;
    throw err;
  }
}

/** A SigV4-signed form over an arbitrary policy document (what a web backend computes). */
function signedForm(policy: object, fields: Record<string, string>, secret = srv.secretKey): Record<string, string> {
  const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const credential = `${srv.accessKey}/${date.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const all = { ...fields, 'x-amz-algorithm': 'AWS4-HMAC-SHA256', 'x-amz-credential': credential, 'x-amz-date': date };
  const doc = {
    ...policy,
    conditions: [...((policy as { conditions: unknown[] }).conditions ?? []), { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' }, { 'x-amz-credential': credential }, { 'x-amz-date': date }],
  };
  const b64 = Buffer.from(JSON.stringify(doc)).toString('base64');
  const sig = createHmac('sha256', signingKey(secret, date.slice(0, 8), 'us-east-1', 's3')).update(b64).digest('hex');
  return { ...all, policy: b64, 'x-amz-signature': sig };
}

async function post(fields: Record<string, string>, file: string | undefined, bucket = 'post', filename = 'upload.txt') {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  if (file !== undefined) fd.append('file', new Blob([file]), filename);
  const r = await fetch(`${srv.endpoint}/${bucket}`, { method: 'POST', body: fd, redirect: 'manual' });
  const text = await r.text();
  return { status: r.status, text, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? '', headers: r.headers };
}

const future = () => new Date(Date.now() + 600_000).toISOString();

describe('POST Object', () => {
  it('a presignedPostPolicy form uploads; metadata, ${filename}, success_action_status 201 and redirects', async () => {
    const p = mc.newPostPolicy();
    p.setBucket('post');
    p.setKeyStartsWith('user/');
    p.setExpires(new Date(Date.now() + 600_000));
    p.setContentType('text/plain');
    p.setContentLengthRange(1, 1024);
    p.setUserMetaData({ origin: 'browser' });
    const { formData } = await mc.presignedPostPolicy(p);
    const ok = await post({ ...formData, key: 'user/${filename}' }, 'hello from a form', 'post', 'greeting.txt');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'post', Key: 'user/greeting.txt' }));
    expect(await got.Body!.transformToString()).toBe('hello from a form');
    expect(got.ContentType).toBe('text/plain');
    expect(got.Metadata).toEqual({ origin: 'browser' });

    const form = signedForm(
      { expiration: future(), conditions: [{ bucket: 'post' }, ['starts-with', '$key', 'x/'], { success_action_status: '201' }, ['starts-with', '$x-amz-meta-tag', ''], { tagging: '<Tagging><TagSet><Tag><Key>k</Key><Value></Value></Tag></TagSet></Tagging>' }, { 'x-amz-storage-class': 'REDUCED_REDUNDANCY' }] },
      { key: 'x/201', success_action_status: '201', 'x-amz-meta-tag': 'v', tagging: '<Tagging><TagSet><Tag><Key>k</Key><Value></Value></Tag></TagSet></Tagging>', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
    );
    const created = await post(form, 'data');
    expect(created.status).toBe(201);
    expect(created.text).toContain('<Key>x/201</Key>');
    expect(created.text).toContain('<Bucket>post</Bucket>');
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'post', Key: 'x/201' }))).StorageClass).toBe('REDUCED_REDUNDANCY');
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'post', Key: 'x/201' }))).TagSet).toEqual([{ Key: 'k', Value: '' }]);

    const redirect = signedForm({ expiration: future(), conditions: [{ bucket: 'post' }, ['starts-with', '$key', ''], ['starts-with', '$success_action_redirect', 'https://app.example/']] }, { key: 'r', success_action_redirect: 'https://app.example/done?x=1' });
    const r = await post(redirect, 'r');
    expect(r.status).toBe(303);
    const loc = new URL(r.headers.get('location')!);
    expect([loc.origin + loc.pathname, loc.searchParams.get('x'), loc.searchParams.get('bucket'), loc.searchParams.get('key'), loc.searchParams.get('etag')]).toEqual([
      'https://app.example/done',
      '1',
      'post',
      'r',
      r.headers.get('etag'),
    ]);
  });

  it('checksums, content-length-range and every condition are enforced before anything is stored', async () => {
    const base = (extra: unknown[] = []) => ({ expiration: future(), conditions: [{ bucket: 'post' }, ['starts-with', '$key', 'c/'], ...extra] });
    const crc = checksumBase64('CRC32', Buffer.from('hello'));
    const good = await post(signedForm(base([{ 'x-amz-checksum-algorithm': 'CRC32' }, { 'x-amz-checksum-crc32': crc }]), { key: 'c/ok', 'x-amz-checksum-algorithm': 'CRC32', 'x-amz-checksum-crc32': crc }), 'hello');
    expect(good.status).toBe(204);
    const cases: [string, Record<string, string>, string | undefined, number, string][] = [
      ['bad checksum', signedForm(base([{ 'x-amz-checksum-algorithm': 'CRC32' }, { 'x-amz-checksum-crc32': crc }]), { key: 'c/1', 'x-amz-checksum-algorithm': 'CRC32', 'x-amz-checksum-crc32': crc }), 'jello', 400, 'BadDigest'],
      ['too large', signedForm(base([['content-length-range', 0, 3]]), { key: 'c/2' }), 'four', 400, 'EntityTooLarge'],
      ['too small', signedForm(base([['content-length-range', 10, 20]]), { key: 'c/3' }), 'tiny', 400, 'EntityTooSmall'],
      ['key condition', signedForm(base(), { key: 'elsewhere/4' }), 'x', 403, 'AccessDenied'],
      ['extra field', signedForm(base(), { key: 'c/5', 'x-amz-meta-sneaky': '1' }), 'x', 403, 'AccessDenied'],
      ['expired', signedForm({ ...base(), expiration: new Date(Date.now() - 1000).toISOString() }, { key: 'c/6' }), 'x', 403, 'AccessDenied'],
      ['wrong secret', signedForm(base(), { key: 'c/7' }, 'not-the-secret'), 'x', 403, 'SignatureDoesNotMatch'],
      ['tampered policy', { ...signedForm(base(), { key: 'c/8' }), policy: Buffer.from(JSON.stringify(base([['starts-with', '$key', '']]))).toString('base64') }, 'x', 403, 'SignatureDoesNotMatch'],
      ['policy not JSON', (() => { const f = signedForm(base(), { key: 'c/9' }); const b64 = Buffer.from('{nope').toString('base64'); return { ...f, policy: b64, 'x-amz-signature': createHmac('sha256', signingKey(srv.secretKey, f['x-amz-date']!.slice(0, 8), 'us-east-1', 's3')).update(b64).digest('hex') }; })(), 'x', 400, 'InvalidPolicyDocument'],
      ['no key', signedForm(base(), {}), 'x', 400, 'InvalidArgument'],
      ['no file', signedForm(base(), { key: 'c/10' }), undefined, 400, 'InvalidArgument'],
      ['anonymous on a private bucket', { key: 'c/11' }, 'x', 403, 'AccessDenied'],
    ];
    for (const [name, fields, file, status, code] of cases) {
      const r = await post(fields, file);
      expect([name, r.status, r.code]).toEqual([name, status, code]);
    }
    for (let i = 1; i <= 11; i++) expect(await exists(`c/${i}`)).toBe(false);
    // not multipart at all, and a broken multipart body
    const junk = await fetch(`${srv.endpoint}/post`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, body: 'garbage without boundaries' });
    expect([junk.status, /<Code>([^<]+)</.exec(await junk.text())?.[1]]).toEqual([400, 'MalformedPOSTRequest']);
    const noBoundary = await fetch(`${srv.endpoint}/post`, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    expect(noBoundary.status).toBe(400);
  });

  it('a form asks for SSE-S3, SSE-KMS or SSE-C by the PUT header names, as S3 forms do', async () => {
    const base = (extra: unknown[]) => ({ expiration: future(), conditions: [{ bucket: 'post' }, ['starts-with', '$key', 'enc/'], ...extra] });
    const s3Form = await post(signedForm(base([{ 'x-amz-server-side-encryption': 'AES256' }]), { key: 'enc/s3', 'x-amz-server-side-encryption': 'AES256' }), 'sealed by the cluster key');
    expect(s3Form.status).toBe(204);
    expect(s3Form.headers.get('x-amz-server-side-encryption')).toBe('AES256');
    expect(await s3.send(new HeadObjectCommand({ Bucket: 'post', Key: 'enc/s3' }))).toMatchObject({ ServerSideEncryption: 'AES256' });

    const kmsFields = { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'second' };
    const kmsForm = await post(signedForm(base(Object.entries(kmsFields).map(([k, v]) => ({ [k]: v }))), { key: 'enc/kms', ...kmsFields }), 'sealed by a named key');
    expect(kmsForm.status).toBe(204);
    expect(await s3.send(new HeadObjectCommand({ Bucket: 'post', Key: 'enc/kms' }))).toMatchObject({ ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'second' });
    const body = await s3.send(new GetObjectCommand({ Bucket: 'post', Key: 'enc/kms' }));
    expect(await body.Body!.transformToString()).toBe('sealed by a named key');

    const key = randomBytes(32);
    const cFields = {
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-server-side-encryption-customer-key': key.toString('base64'),
      'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(key).digest('base64'),
    };
    const cForm = await post(signedForm(base(Object.entries(cFields).map(([k, v]) => ({ [k]: v }))), { key: 'enc/c', ...cFields }), 'sealed by my own key');
    expect(cForm.status).toBe(204);
    expect(cForm.headers.get('x-amz-server-side-encryption-customer-key-md5')).toBe(cFields['x-amz-server-side-encryption-customer-key-md5']);
    // without its key the object is not readable; with it, it is
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: 'post', Key: 'enc/c' })))).toMatchObject({ code: 'InvalidRequest', status: 400 });
    const got = await s3.send(new GetObjectCommand({ Bucket: 'post', Key: 'enc/c', SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64') }));
    expect(await got.Body!.transformToString()).toBe('sealed by my own key');

    // a wrong key MD5 or an unknown method is refused, and nothing is stored
    const bad = await post(signedForm(base(Object.entries({ ...cFields, 'x-amz-server-side-encryption-customer-key-md5': 'AAAA' }).map(([k, v]) => ({ [k]: v }))), { key: 'enc/bad', ...cFields, 'x-amz-server-side-encryption-customer-key-md5': 'AAAA' }), 'x');
    expect([bad.status, bad.code]).toEqual([400, 'InvalidArgument']);
    const odd = await post(signedForm(base([{ 'x-amz-server-side-encryption': 'rot13' }]), { key: 'enc/odd', 'x-amz-server-side-encryption': 'rot13' }), 'x');
    expect([odd.status, odd.code]).toEqual([400, 'InvalidArgument']);
    expect(await exists('enc/bad')).toBe(false);
    expect(await exists('enc/odd')).toBe(false);
  });

  it('an anonymous form may write where the bucket ACL allows it', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'post-open' }));
    await s3.send(new PutBucketAclCommand({ Bucket: 'post-open', ACL: 'public-read-write' }));
    const r = await post({ key: 'dropbox/${filename}', 'Content-Type': 'text/plain' }, 'anonymous', 'post-open', 'a.txt');
    expect(r.status).toBe(204);
    expect(await exists('dropbox/a.txt', 'post-open')).toBe(true);
  });
});

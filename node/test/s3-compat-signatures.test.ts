/**
 * Older signatures and request details, with the real clients that showed
 * them (issue 28, items 1-2): Signature Version 2 presigned URLs from the AWS
 * CLI v1 (`aws s3 presign` signs v2 by default) and `s3cmd signurl`, fetched
 * with curl; v2 header auth from `s3cmd --signature-v2`; an HTML POST form
 * signed with the v2 policy scheme; boto3 sending non-ASCII user metadata.
 */
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLI_TIMEOUT, fileData, runCli, s3cmdArgs, useCliFixture } from './helpers/cli.ts';

const fx = useCliFixture('s3-sigv2');

function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  return runCli(fx.cli, cmd, args, extraEnv);
}

/** curl a URL: status and body. */
async function curl(url: string, extra: string[] = []): Promise<{ status: number; body: string }> {
  const out = await run('curl', ['-sS', '-g', '-w', '\n%{http_code}', ...extra, url]);
  const nl = out.lastIndexOf('\n');
  return { status: Number(out.slice(nl + 1)), body: out.slice(0, nl) };
}

async function exists(bucket: string, key: string): Promise<boolean> {
  try {
    await fx.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return false;
    throw err;
  }
}

describe('Signature Version 2 presigned URLs', () => {
  it('AWS CLI v1 `aws s3 presign` (v2 by default) + curl: served; tampered or expired URLs say why', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'v2-presign' }));
    const key = 'dir/a b+c é.txt';
    await writeFile(join(fx.work, 'p.txt'), 'presigned v2 body');
    await run('aws', ['--endpoint-url', fx.srv.endpoint, '--only-show-errors', 's3', 'cp', join(fx.work, 'p.txt'), `s3://v2-presign/${key}`]);
    const url = (await run('aws', ['--endpoint-url', fx.srv.endpoint, 's3', 'presign', `s3://v2-presign/${key}`])).trim();
    // the CLI signed it with Signature Version 2
    expect(url).toMatch(/[?&]AWSAccessKeyId=/);
    expect(url).not.toMatch(/X-Amz-Algorithm/);
    expect(await curl(url)).toEqual({ status: 200, body: 'presigned v2 body' });

    const tampered = await curl(url.replace(/Signature=[^&]+/, 'Signature=AAAAAAAAAAAAAAAAAAAAAAAAAAA%3D'));
    expect(tampered.status).toBe(403);
    expect(tampered.body).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(tampered.body).toMatch(/<Message>The request signature we calculated does not match/);

    const shortLived = (await run('aws', ['--endpoint-url', fx.srv.endpoint, 's3', 'presign', '--expires-in', '1', `s3://v2-presign/${key}`])).trim();
    const expiresAt = Number(/Expires=(\d+)/.exec(shortLived)![1]) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 1100));
    const expired = await curl(shortLived);
    expect(expired.status).toBe(403);
    expect(expired.body).toContain('<Code>AccessDenied</Code>');
    expect(expired.body).toContain('<Message>Request has expired.</Message>');
  }, CLI_TIMEOUT);

  it('`s3cmd signurl` + curl: a GET URL is served, the same URL for another key is refused', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'v2-signurl' }));
    await writeFile(join(fx.work, 's.txt'), 's3cmd signurl body');
    await run('s3cmd', [...s3cmdArgs(fx.cli), 'put', join(fx.work, 's.txt'), 's3://v2-signurl/k/s.txt']);
    const url = (await run('s3cmd', [...s3cmdArgs(fx.cli), 'signurl', 's3://v2-signurl/k/s.txt', '+600'])).trim();
    expect(url).toMatch(/[?&]AWSAccessKeyId=.*Signature=/);
    expect(await curl(url)).toEqual({ status: 200, body: 's3cmd signurl body' });
    const other = await curl(url.replace('/k/s.txt', '/k/t.txt'));
    expect(other.status).toBe(403);
    expect(other.body).toContain('<Code>SignatureDoesNotMatch</Code>');
  }, CLI_TIMEOUT);
});

describe('Signature Version 2 header authentication', () => {
  it('`s3cmd --signature-v2`: mb, multipart put, get, setacl, info, del', async () => {
    const v2 = [...s3cmdArgs(fx.cli), '--signature-v2'];
    const big = fileData(11 * 1024 * 1024, 'v2-multipart');
    await writeFile(join(fx.work, 'v2-big.bin'), big);
    await run('s3cmd', [...v2, 'mb', 's3://v2-header']);
    await run('s3cmd', [...v2, '--multipart-chunk-size-mb=5', 'put', join(fx.work, 'v2-big.bin'), 's3://v2-header/x/big é.bin']);
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'v2-header', Key: 'x/big é.bin' }));
    expect(head.ContentLength).toBe(big.length);
    expect(head.ETag).toMatch(/-3"$/);
    await run('s3cmd', [...v2, '--force', 'get', 's3://v2-header/x/big é.bin', join(fx.work, 'v2-back.bin')]);
    const back = await fx.s3.send(new GetObjectCommand({ Bucket: 'v2-header', Key: 'x/big é.bin' }));
    expect(Buffer.from(await back.Body!.transformToByteArray()).equals(big)).toBe(true);
    await run('s3cmd', [...v2, 'setacl', '--acl-public', 's3://v2-header/x/big é.bin']);
    const anonymous = await curl(`${fx.srv.endpoint}/v2-header/x/big%20%C3%A9.bin`, ['-o', '/dev/null']);
    expect(anonymous.status).toBe(200);
    expect(await run('s3cmd', [...v2, 'info', 's3://v2-header/x/big é.bin'])).toMatch(/File size: 11534336/);
    await run('s3cmd', [...v2, 'del', 's3://v2-header/x/big é.bin']);
    expect(await exists('v2-header', 'x/big é.bin')).toBe(false);
    // a wrong secret is refused before anything is stored
    const wrong = v2.map((a) => (a.startsWith('--secret_key=') ? '--secret_key=not-the-secret' : a));
    await expect(run('s3cmd', [...wrong, 'put', join(fx.work, 's.txt'), 's3://v2-header/wrong.txt'])).rejects.toThrow(/SignatureDoesNotMatch/);
    expect(await exists('v2-header', 'wrong.txt')).toBe(false);
  }, CLI_TIMEOUT);
});

describe('POST form signed with the v2 policy scheme', () => {
  /** The fields a web backend computes for a v2 form: base64 policy, HMAC-SHA1 signature. */
  function v2Form(conditions: unknown[], fields: Record<string, string>, secret = fx.srv.secretKey): Record<string, string> {
    const policy = Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + 600_000).toISOString(), conditions })).toString('base64');
    return { ...fields, AWSAccessKeyId: fx.srv.accessKey, policy, signature: createHmac('sha1', secret).update(policy).digest('base64') };
  }

  async function post(fields: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    fd.append('file', new Blob([body]), 'photo.txt');
    const r = await fetch(`${fx.srv.endpoint}/v2-post`, { method: 'POST', body: fd });
    return { status: r.status, text: await r.text() };
  }

  it('stores the file under the policy; a bad signature or a broken condition stores nothing', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'v2-post' }));
    const conditions = [{ bucket: 'v2-post' }, ['starts-with', '$key', 'uploads/'], ['content-length-range', 1, 100], { 'x-amz-meta-from': 'form' }, { success_action_status: '201' }];
    const ok = await post(v2Form(conditions, { key: 'uploads/${filename}', 'x-amz-meta-from': 'form', success_action_status: '201' }), 'v2 form body');
    expect(ok.status).toBe(201);
    expect(ok.text).toContain('<Key>uploads/photo.txt</Key>');
    const got = await fx.s3.send(new GetObjectCommand({ Bucket: 'v2-post', Key: 'uploads/photo.txt' }));
    expect(await got.Body!.transformToString()).toBe('v2 form body');
    expect(got.Metadata).toEqual({ from: 'form' });

    const badSig = await post(v2Form(conditions, { key: 'uploads/bad.txt', 'x-amz-meta-from': 'form', success_action_status: '201' }, 'wrong-secret'), 'x');
    expect(badSig.status).toBe(403);
    expect(badSig.text).toContain('<Code>SignatureDoesNotMatch</Code>');
    const outside = await post(v2Form(conditions, { key: 'elsewhere/x.txt', 'x-amz-meta-from': 'form', success_action_status: '201' }), 'x');
    expect(outside.status).toBe(403);
    expect(outside.text).toContain('<Code>AccessDenied</Code>');
    const unknownKey = await post({ ...v2Form(conditions, { key: 'uploads/u.txt', 'x-amz-meta-from': 'form', success_action_status: '201' }), AWSAccessKeyId: 'nobody' }, 'x');
    expect(unknownKey.text).toContain('<Code>InvalidAccessKeyId</Code>');
    expect(await exists('v2-post', 'uploads/bad.txt')).toBe(false);
    expect(await exists('v2-post', 'elsewhere/x.txt')).toBe(false);
    expect(await exists('v2-post', 'uploads/u.txt')).toBe(false);
  });
});

describe('non-ASCII user metadata', () => {
  it('boto3 PUT with x-amz-meta-* values outside ASCII verifies, stores the text and returns the same bytes', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'unicode-meta' }));
    // botocore refuses non-ASCII Metadata by default; scripts that need it unregister that check, and then
    // botocore signs the UTF-8 text and sends its UTF-8 bytes.
    const script = `
import sys, json, boto3
from botocore.config import Config
from botocore.handlers import validate_ascii_metadata
s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
s3.meta.events.unregister('before-parameter-build.s3.PutObject', validate_ascii_metadata)
out = {}
for i, v in enumerate(['café', '日本語 ✓', 'ascii']):
    s3.put_object(Bucket='unicode-meta', Key='k%d' % i, Body=b'x', Metadata={'note': v})
    got = s3.head_object(Bucket='unicode-meta', Key='k%d' % i)['Metadata']['note']
    # http.client reads header bytes as latin-1: the bytes are the UTF-8 that was sent
    out[v] = got.encode('latin-1').decode('utf-8')
print(json.dumps(out))
`;
    await writeFile(join(fx.work, 'meta.py'), script);
    const out = JSON.parse(await run('python3', [join(fx.work, 'meta.py'), fx.srv.endpoint]));
    expect(out).toEqual({ café: 'café', '日本語 ✓': '日本語 ✓', ascii: 'ascii' });
    // stored as text, counted in UTF-8 bytes against the 2 KiB limit
    const info = await fx.srv.objectLayer.getObjectInfo('unicode-meta', 'k1', {});
    expect(info.userMeta).toEqual({ note: '日本語 ✓' });
  }, CLI_TIMEOUT);
});

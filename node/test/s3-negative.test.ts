/**
 * Bad input gets its S3 error and changes nothing: every rejected upload is
 * followed by a HEAD that must answer 404. Requests are hand-crafted (signed
 * with @smithy/signature-v4) where the SDK would refuse to send them.
 */
import { createHash, createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';
import { errorCode, type RawRequest, rawRequest, signedRequest, signHeaders } from './helpers/sigv4-signer.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let srv: S3Server;
let s3: S3Client;
const BUCKET = 'neg-bucket';

beforeAll(async () => {
  srv = await start();
  s3 = client(srv.secretKey);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

function client(secret: string): S3Client {
  return new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint: srv.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: srv.accessKey, secretAccessKey: secret },
    maxAttempts: 1,
  });
}

async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode };
    throw err;
  }
  throw new Error('expected the call to fail');
}

async function expectAbsent(key: string): Promise<void> {
  const r = await s3Error(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })));
  expect(r.status).toBe(404);
}

const creds = () => ({ accessKey: srv.accessKey, secretKey: srv.secretKey });

// ---- independent aws-chunked encoder (AWS SigV4 streaming spec)

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}
function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function chunkedBody(
  authorization: string,
  amzDate: string,
  chunks: Buffer[],
  opts: { tamperChunk?: number; trailer?: string; tamperTrailer?: boolean } = {},
): Buffer {
  const seed = /Signature=([0-9a-f]{64})/.exec(authorization)![1]!;
  const scope = /Credential=[^/]+\/([^,]+)/.exec(authorization)![1]!;
  const [date, region, service] = scope.split('/') as [string, string, string];
  let key = hmac(`AWS4${srv.secretKey}`, date);
  key = hmac(key, region);
  key = hmac(key, service);
  key = hmac(key, 'aws4_request');
  let prev = seed;
  const out: Buffer[] = [];
  for (const [i, c] of [...chunks, Buffer.alloc(0)].entries()) {
    const sts = ['AWS4-HMAC-SHA256-PAYLOAD', amzDate, scope, prev, sha256(''), sha256(c)].join('\n');
    let sig = hmac(key, sts).toString('hex');
    prev = sig;
    if (opts.tamperChunk === i) sig = sig.replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    out.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${sig}\r\n`));
    if (c.length > 0) out.push(c, Buffer.from('\r\n'));
  }
  if (opts.trailer !== undefined) {
    // signed trailer: x-amz-trailer-signature over the canonical trailer lines
    const sts = ['AWS4-HMAC-SHA256-TRAILER', amzDate, scope, prev, sha256(`${opts.trailer}\n`)].join('\n');
    let tsig = hmac(key, sts).toString('hex');
    if (opts.tamperTrailer) tsig = tsig.replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    out.push(Buffer.from(`${opts.trailer}\r\nx-amz-trailer-signature:${tsig}\r\n`));
  }
  out.push(Buffer.from('\r\n'));
  return Buffer.concat(out);
}

async function signedStreamingPut(key: string, data: Buffer[], tamperChunk?: number) {
  const size = data.reduce((n, b) => n + b.length, 0);
  const r: RawRequest = {
    method: 'PUT',
    path: `/${BUCKET}/${key}`,
    headers: {
      'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(size),
    },
  };
  const headers = await signHeaders(srv.endpoint, creds(), r);
  const body = chunkedBody(headers.authorization!, headers['x-amz-date']!, data, tamperChunk !== undefined ? { tamperChunk } : {});
  headers['content-length'] = String(body.length);
  return rawRequest(srv.endpoint, { ...r, body }, headers);
}

async function unsignedTrailerPut(key: string, data: Buffer, crcB64: string, mangle?: (body: string) => string) {
  const r: RawRequest = {
    method: 'PUT',
    path: `/${BUCKET}/${key}`,
    headers: {
      'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(data.length),
      'x-amz-trailer': 'x-amz-checksum-crc32',
    },
  };
  const headers = await signHeaders(srv.endpoint, creds(), r);
  let text = `${data.length.toString(16)}\r\n${data.toString('latin1')}\r\n0\r\nx-amz-checksum-crc32:${crcB64}\r\n\r\n`;
  if (mangle) text = mangle(text);
  const body = Buffer.from(text, 'latin1');
  headers['content-length'] = String(body.length);
  return rawRequest(srv.endpoint, { ...r, body }, headers);
}

function crcB64(data: Buffer): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32(data));
  return b.toString('base64');
}

async function signedTrailerPut(key: string, data: Buffer, crc: string, tamperTrailer = false) {
  const r: RawRequest = {
    method: 'PUT',
    path: `/${BUCKET}/${key}`,
    headers: {
      'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(data.length),
      'x-amz-trailer': 'x-amz-checksum-crc32',
    },
  };
  const headers = await signHeaders(srv.endpoint, creds(), r);
  const body = chunkedBody(headers.authorization!, headers['x-amz-date']!, [data], { trailer: `x-amz-checksum-crc32:${crc}`, tamperTrailer });
  headers['content-length'] = String(body.length);
  return rawRequest(srv.endpoint, { ...r, body }, headers);
}

describe('rejected requests change nothing', () => {
  it('wrong secret → SignatureDoesNotMatch (403)', async () => {
    const bad = client('not-the-secret');
    const r = await s3Error(bad.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wrong-secret', Body: 'x' })));
    bad.destroy();
    expect(r).toEqual({ code: 'SignatureDoesNotMatch', status: 403 });
    await expectAbsent('wrong-secret');
  });

  it('expired presigned PUT → AccessDenied (403)', async () => {
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: 'expired' }), {
      expiresIn: 60,
      signingDate: new Date(Date.now() - 3600_000),
    });
    const res = await fetch(url, { method: 'PUT', body: 'late' });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(errorCode(text)).toBe('AccessDenied');
    expect(text).toContain('expired');
    await expectAbsent('expired');
  });

  it('presign beyond 7 days is refused', async () => {
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: 'too-long' }), { expiresIn: 604800 });
    const longer = url.replace('X-Amz-Expires=604800', 'X-Amz-Expires=604801');
    const res = await fetch(longer, { method: 'PUT', body: 'x' });
    expect(res.status).toBe(403);
    expect(errorCode(await res.text())).toBe('AccessDenied');
    await expectAbsent('too-long');
  });

  it('signed aws-chunked: valid body stores, tampered chunk signature → SignatureDoesNotMatch', async () => {
    const data = [Buffer.alloc(70_000, 'a'), Buffer.alloc(1000, 'b')];
    const ok = await signedStreamingPut('chunked-ok', data);
    expect(ok.status).toBe(200);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'chunked-ok' }));
    expect(head.ContentLength).toBe(71_000);
    for (const i of [0, 1, 2]) {
      const bad = await signedStreamingPut(`chunked-bad-${i}`, data, i);
      expect(bad.status).toBe(403);
      expect(errorCode(bad.body)).toBe('SignatureDoesNotMatch');
      await expectAbsent(`chunked-bad-${i}`);
    }
  });

  it('truncated aws-chunked body → IncompleteBody', async () => {
    const r: RawRequest = {
      method: 'PUT',
      path: `/${BUCKET}/truncated`,
      headers: { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '5000' },
    };
    const headers = await signHeaders(srv.endpoint, creds(), r);
    const full = chunkedBody(headers.authorization!, headers['x-amz-date']!, [Buffer.alloc(5000, 'z')]);
    const body = full.subarray(0, 3000);
    headers['content-length'] = String(body.length);
    const res = await rawRequest(srv.endpoint, { ...r, body }, headers);
    expect(res.status).toBe(400);
    expect(errorCode(res.body)).toBe('IncompleteBody');
    await expectAbsent('truncated');
  });

  it('unsigned trailer: right CRC32 stores, wrong CRC32 → BadDigest, missing trailer → IncompleteBody', async () => {
    const data = Buffer.from('trailer checked body');
    const ok = await unsignedTrailerPut('trailer-ok', data, crcB64(data));
    expect(ok.status).toBe(200);
    expect(ok.headers['x-amz-checksum-crc32']).toBe(crcB64(data));
    const bad = await unsignedTrailerPut('trailer-bad', data, crcB64(Buffer.from('something else')));
    expect(bad.status).toBe(400);
    expect(errorCode(bad.body)).toBe('BadDigest');
    await expectAbsent('trailer-bad');
    const missing = await unsignedTrailerPut('trailer-missing', data, crcB64(data), (t) => t.replace(/x-amz-checksum-crc32:[^\r]*\r\n/, ''));
    expect(missing.status).toBe(400);
    expect(errorCode(missing.body)).toBe('IncompleteBody');
    await expectAbsent('trailer-missing');
  });

  it('signed aws-chunked with a signed trailer: stores; forged trailer signature and wrong CRC are refused', async () => {
    const data = Buffer.alloc(100_000, 'q');
    const ok = await signedTrailerPut('signed-trailer-ok', data, crcB64(data));
    expect(ok.status).toBe(200);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'signed-trailer-ok', ChecksumMode: 'ENABLED' }));
    expect(head.ChecksumCRC32).toBe(crcB64(data));
    const forged = await signedTrailerPut('signed-trailer-forged', data, crcB64(data), true);
    expect(forged.status).toBe(403);
    expect(errorCode(forged.body)).toBe('SignatureDoesNotMatch');
    await expectAbsent('signed-trailer-forged');
    const wrong = await signedTrailerPut('signed-trailer-wrong', data, crcB64(Buffer.from('x')));
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong.body)).toBe('BadDigest');
    await expectAbsent('signed-trailer-wrong');
  });

  it('bad Content-MD5 → BadDigest; malformed Content-MD5 → InvalidDigest', async () => {
    const wrong = createHash('md5').update('other').digest('base64');
    const r = await s3Error(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'bad-md5', Body: 'body', ContentMD5: wrong })));
    expect(r).toEqual({ code: 'BadDigest', status: 400 });
    await expectAbsent('bad-md5');
    const res = await signedRequest(srv.endpoint, creds(), {
      method: 'PUT',
      path: `/${BUCKET}/malformed-md5`,
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-md5': 'nope', 'content-length': '4' },
      body: 'body',
    });
    expect(errorCode(res.body)).toBe('InvalidDigest');
    await expectAbsent('malformed-md5');
    const right = createHash('md5').update('body').digest('base64');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'good-md5', Body: 'body', ContentMD5: right }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'good-md5' }))).ContentLength).toBe(4);
  });

  it('unknown storage class → InvalidStorageClass', async () => {
    const r = await s3Error(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'glacier', Body: 'x', StorageClass: 'GLACIER' })));
    expect(r).toEqual({ code: 'InvalidStorageClass', status: 400 });
    await expectAbsent('glacier');
  });

  it('hex x-amz-content-sha256 that does not match the body → XAmzContentSHA256Mismatch', async () => {
    const res = await signedRequest(srv.endpoint, creds(), {
      method: 'PUT',
      path: `/${BUCKET}/sha-mismatch`,
      headers: { 'x-amz-content-sha256': sha256('declared'), 'content-length': '6' },
      body: 'actual',
    });
    expect(res.status).toBe(400);
    expect(errorCode(res.body)).toBe('XAmzContentSHA256Mismatch');
    await expectAbsent('sha-mismatch');
  });

  it('clock skew over 15 minutes → RequestTimeTooSkewed', async () => {
    const res = await signedRequest(
      srv.endpoint,
      creds(),
      { method: 'PUT', path: `/${BUCKET}/skewed`, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': '1' }, body: 'x' },
      new Date(Date.now() - 16 * 60_000),
    );
    expect(res.status).toBe(403);
    expect(errorCode(res.body)).toBe('RequestTimeTooSkewed');
    await expectAbsent('skewed');
  });

  it('anonymous requests → AccessDenied; limits on keys and metadata', async () => {
    const anon = await fetch(`${srv.endpoint}/${BUCKET}/anon`, { method: 'PUT', body: 'x' });
    expect(anon.status).toBe(403);
    expect(errorCode(await anon.text())).toBe('AccessDenied');
    await expectAbsent('anon');
    const longKey = 'k'.repeat(1025);
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: longKey, Body: 'x' })))).code).toBe('KeyTooLongError');
    const meta = { big: 'v'.repeat(2100) };
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'meta', Body: 'x', Metadata: meta })))).code).toBe('MetadataTooLarge');
    await expectAbsent('meta');
  });

  it('error bodies carry Code, Message, Resource, RequestId, HostId; HEAD errors have no body', async () => {
    const res = await signedRequest(srv.endpoint, creds(), { method: 'GET', path: `/${BUCKET}/missing`, headers: { 'x-amz-content-sha256': sha256('') } });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/xml');
    for (const el of ['Code', 'Message', 'Resource', 'RequestId', 'HostId']) expect(res.body).toMatch(new RegExp(`<${el}>[^<]+</${el}>`));
    expect(res.body).toContain(`<Resource>/${BUCKET}/missing</Resource>`);
    expect(res.body).toContain(`<RequestId>${res.headers['x-amz-request-id']}</RequestId>`);
    const head = await signedRequest(srv.endpoint, creds(), { method: 'HEAD', path: `/${BUCKET}/missing`, headers: { 'x-amz-content-sha256': sha256('') } });
    expect(head.status).toBe(404);
    expect(head.body).toBe('');
    expect(head.headers['x-amz-request-id']).toMatch(/^[0-9A-F]{16}$/);
  });

  it('malformed XML and bad listing arguments are refused', async () => {
    const xml = '<Delete><Object><Key>a</Key></Object>';
    const res = await signedRequest(srv.endpoint, creds(), {
      method: 'POST',
      path: `/${BUCKET}`,
      query: { delete: '' },
      headers: { 'x-amz-content-sha256': sha256(xml), 'content-length': String(xml.length), 'content-md5': createHash('md5').update(xml).digest('base64') },
      body: xml,
    });
    expect(res.status).toBe(400);
    expect(errorCode(res.body)).toBe('MalformedXML');
    const list = await signedRequest(srv.endpoint, creds(), {
      method: 'GET',
      path: `/${BUCKET}`,
      query: { 'list-type': '2', 'max-keys': '-1' },
      headers: { 'x-amz-content-sha256': sha256('') },
    });
    expect(errorCode(list.body)).toBe('InvalidArgument');
    const versioning = '<VersioningConfiguration><Status>Sometimes</Status></VersioningConfiguration>';
    const v = await signedRequest(srv.endpoint, creds(), {
      method: 'PUT',
      path: `/${BUCKET}`,
      query: { versioning: '' },
      headers: { 'x-amz-content-sha256': sha256(versioning), 'content-length': String(versioning.length) },
      body: versioning,
    });
    expect(errorCode(v.body)).toBe('MalformedXML');
  });
});

import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { code } from '../../../../test/helpers/error-code.ts';
import { ERRORS } from '../../../util/errors.ts';
import { ManualClock } from '../../../util/clock.ts';
import { Sha256 } from '../../../../test/helpers/sigv4-signer.ts';
import { verifyRequest } from './verify.ts';


const CREDS = { accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

function signer(secret = CREDS.secretKey) {
  return new SignatureV4({
    credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: secret },
    region: 'us-east-1',
    service: 's3',
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
}

interface Req {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

async function signed(r: Req, secret?: string) {
  const headers: Record<string, string> = { host: '127.0.0.1:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...r.headers };
  const s = await signer(secret).sign(
    { method: r.method, protocol: 'http:', hostname: '127.0.0.1', port: 9000, path: r.path, query: r.query ?? {}, headers },
    { signingDate: new Date(NOW) },
  );
  const qs = new URLSearchParams(s.query as Record<string, string>).toString().replace(/\+/g, '%20');
  return { method: r.method, url: qs ? `${r.path}?${qs}` : r.path, headers: lower(s.headers) };
}

async function presigned(r: Req, expiresIn: number, secret?: string) {
  // as @aws-sdk/s3-request-presigner does: the payload is unsigned
  const headers: Record<string, string> = { host: '127.0.0.1:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...r.headers };
  const s = await signer(secret).presign(
    { method: r.method, protocol: 'http:', hostname: '127.0.0.1', port: 9000, path: r.path, query: r.query ?? {}, headers },
    { signingDate: new Date(NOW), expiresIn },
  );
  const qs = Object.entries(s.query as Record<string, string>)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  return { method: r.method, url: `${r.path}?${qs}`, headers: lower(s.headers) };
}

function lower(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

const opts = (now = NOW) => ({
  credentials: (k: string) => (k === CREDS.accessKey ? CREDS : undefined),
  region: 'us-east-1',
  clock: new ManualClock(now),
});

describe('SigV4 header authentication', () => {
  it('accepts requests signed by @smithy/signature-v4, including encoded keys and query strings', async () => {
    const r = await signed({ method: 'GET', path: '/bucket/dir/a%20b%2Bc%21.txt', query: { 'list-type': '2', prefix: 'x y/z' } });
    const ctx = verifyRequest(r, opts());
    expect(ctx.accessKey).toBe(CREDS.accessKey);
    expect(ctx.payload).toEqual({ kind: 'unsigned' });
    expect(ctx.scope).toBe('20260115/us-east-1/s3/aws4_request');
  });

  it('classifies hex and streaming payload hashes', async () => {
    const hex = 'a'.repeat(64);
    const r = await signed({ method: 'PUT', path: '/b/k', headers: { 'x-amz-content-sha256': hex } });
    expect(verifyRequest(r, opts()).payload).toEqual({ kind: 'sha256', hex });
    const s = await signed({ method: 'PUT', path: '/b/k', headers: { 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER' } });
    expect(verifyRequest(s, opts()).payload).toEqual({ kind: 'streaming', signed: false, trailer: true });
  });

  it('rejects a wrong secret, an unknown key, tampering and skew', async () => {
    const bad = await signed({ method: 'GET', path: '/bucket' }, 'wrong-secret');
    expect(code(() => verifyRequest(bad, opts()))).toBe('SignatureDoesNotMatch');
    const good = await signed({ method: 'GET', path: '/bucket' });
    expect(code(() => verifyRequest({ ...good, url: '/bucket2' }, opts()))).toBe('SignatureDoesNotMatch');
    expect(code(() => verifyRequest({ ...good, method: 'DELETE' }, opts()))).toBe('SignatureDoesNotMatch');
    const unknown = { ...good, headers: { ...good.headers, authorization: good.headers.authorization!.replace('AKIDEXAMPLE', 'NOPE') } };
    expect(code(() => verifyRequest(unknown, opts()))).toBe('InvalidAccessKeyId');
    expect(code(() => verifyRequest(good, opts(NOW + 16 * 60_000)))).toBe('RequestTimeTooSkewed');
    expect(code(() => verifyRequest(good, opts(NOW - 16 * 60_000)))).toBe('RequestTimeTooSkewed');
    expect(code(() => verifyRequest(good, opts(NOW + 14 * 60_000)))).toBeUndefined();
    expect(code(() => verifyRequest({ ...good, headers: { host: 'x' } }, opts()))).toBe('AccessDenied');
    const otherRegion = { ...opts(), region: 'eu-west-1' };
    expect(code(() => verifyRequest(good, otherRegion))).toBe('AuthorizationHeaderMalformed');
  });

  it('accepts a scope naming another region only when the operator opted in to any region', async () => {
    const good = await signed({ method: 'GET', path: '/bucket' });
    expect(code(() => verifyRequest(good, { ...opts(), region: 'dc1.example' }))).toBe('AuthorizationHeaderMalformed');
    expect(verifyRequest(good, { ...opts(), region: 'dc1.example', anyRegion: true }).scope).toBe('20260115/us-east-1/s3/aws4_request');
    // the key still comes from the scope's own region: a signature for another region does not pass as this one's
    const forged = { ...good, headers: { ...good.headers, authorization: good.headers.authorization!.replace('/us-east-1/', '/eu-west-1/') } };
    expect(code(() => verifyRequest(forged, { ...opts(), anyRegion: true }))).toBe('SignatureDoesNotMatch');
  });

  it('verifies non-ASCII header values as the UTF-8 text the client signed (boto3 metadata)', async () => {
    const s = await signed({ method: 'PUT', path: '/b/k', headers: { 'x-amz-meta-note': 'café 日本語' } });
    // node:http hands the UTF-8 bytes over one byte per character
    const wire = { ...s, headers: { ...s.headers, 'x-amz-meta-note': Buffer.from('café 日本語', 'utf8').toString('latin1') } };
    expect(verifyRequest(wire, opts()).accessKey).toBe(CREDS.accessKey);
    const other = { ...wire, headers: { ...wire.headers, 'x-amz-meta-note': Buffer.from('cafe 日本語', 'utf8').toString('latin1') } };
    expect(code(() => verifyRequest(other, opts()))).toBe('SignatureDoesNotMatch');
  });
});

describe('SigV4 presigned URLs', () => {
  it('accepts a valid presigned GET and PUT', async () => {
    const g = await presigned({ method: 'GET', path: '/bucket/key.txt' }, 3600);
    expect(verifyRequest(g, opts(NOW + 1000)).presigned).toBe(true);
    const p = await presigned({ method: 'PUT', path: '/bucket/key.txt' }, 600);
    expect(verifyRequest(p, opts()).payload).toEqual({ kind: 'unsigned' });
  });

  it('rejects expired, over-7-days, not-yet-valid and tampered URLs', async () => {
    const g = await presigned({ method: 'GET', path: '/bucket/key.txt' }, 60);
    expect(code(() => verifyRequest(g, opts(NOW + 61_000)))).toBe('AccessDenied');
    expect(code(() => verifyRequest(g, opts(NOW - 20 * 60_000)))).toBe('AccessDenied');
    expect(code(() => verifyRequest({ ...g, url: g.url.replace('key.txt', 'other.txt') }, opts()))).toBe('SignatureDoesNotMatch');
    const long = { ...g, url: g.url.replace('X-Amz-Expires=60', `X-Amz-Expires=${7 * 24 * 3600 + 1}`) };
    // out of range is S3's 403, not a malformed query's 400
    expect(code(() => verifyRequest(long, opts()))).toBe('AccessDenied');
    expect(ERRORS.AccessDenied.status).toBe(403);
    const zero = { ...g, url: g.url.replace('X-Amz-Expires=60', 'X-Amz-Expires=0') };
    expect(code(() => verifyRequest(zero, opts()))).toBe('AccessDenied');
    const wrong = await presigned({ method: 'GET', path: '/bucket/key.txt' }, 60, 'nope');
    expect(code(() => verifyRequest(wrong, opts()))).toBe('SignatureDoesNotMatch');
  });

  it('rejects anonymous requests and two auth mechanisms at once', async () => {
    expect(code(() => verifyRequest({ method: 'GET', url: '/', headers: { host: 'h' } }, opts()))).toBe('AccessDenied');
    const g = await presigned({ method: 'GET', path: '/b/k' }, 60);
    expect(code(() => verifyRequest({ ...g, headers: { ...g.headers, authorization: 'AWS4-HMAC-SHA256 x' } }, opts()))).toBe('InvalidArgument');
  });
});

describe('the credential seam: session tokens and expiry', () => {
  const TOKEN = 'session-token-of-the-temporary-credential';
  const temp = { ...CREDS, sessionToken: TOKEN, expiresAt: NOW + 600_000 };
  const lookup = (ak: string, token?: string) => (ak === CREDS.accessKey ? { ...temp, ...(token === 'other-session' ? { sessionToken: 'other-session' } : {}) } : undefined);
  const opts = (now = NOW) => ({ credentials: lookup, region: 'us-east-1', clock: new ManualClock(now) });
  const withToken = (token?: string) => signed({ method: 'GET', path: '/b/k', headers: token !== undefined ? { 'x-amz-security-token': token } : {} });

  it('a temporary credential needs its own token, on headers and presigned URLs', async () => {
    expect(verifyRequest(await withToken(TOKEN), opts()).accessKey).toBe(CREDS.accessKey);
    const noToken = await withToken();
    expect(code(() => verifyRequest(noToken, opts()))).toBe('InvalidToken');
    const forged = await withToken('forged');
    expect(code(() => verifyRequest(forged, opts()))).toBe('InvalidToken');
    const pre = await presigned({ method: 'GET', path: '/b/k', query: { 'X-Amz-Security-Token': TOKEN } }, 600);
    expect(verifyRequest(pre, opts()).presigned).toBe(true);
    const preNoToken = await presigned({ method: 'GET', path: '/b/k' }, 600);
    expect(code(() => verifyRequest(preNoToken, opts()))).toBe('InvalidToken');
  });

  it('expiry: the server clock decides, and a request signed after the expiry fails too', async () => {
    const req = await withToken(TOKEN);
    expect(verifyRequest(req, opts(NOW + 599_000)).accessKey).toBe(CREDS.accessKey);
    expect(code(() => verifyRequest(req, opts(NOW + 600_000)))).toBe('ExpiredToken');
    // signed by a client whose clock runs 10 minutes ahead, at its expiry: within SigV4's skew, still refused
    const ahead = { credentials: (ak: string) => (ak === CREDS.accessKey ? { ...temp, expiresAt: NOW } : undefined), region: 'us-east-1', clock: new ManualClock(NOW - 600_000) };
    expect(code(() => verifyRequest(req, ahead))).toBe('ExpiredToken');
  });

  it('a long-term credential carries no token', async () => {
    const plain = { credentials: (ak: string) => (ak === CREDS.accessKey ? CREDS : undefined), region: 'us-east-1', clock: new ManualClock(NOW) };
    expect(verifyRequest(await withToken(), plain).accessKey).toBe(CREDS.accessKey);
    const any = await withToken('anything');
    expect(code(() => verifyRequest(any, plain))).toBe('InvalidToken');
  });
});

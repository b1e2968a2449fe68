import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { code } from '../../../../test/helpers/error-code.ts';
import { ManualClock } from '../../../util/clock.ts';
import { canonicalResourceV2, stringToSignV2 } from './sigv2.ts';
import { authenticateRequest, verifyRequest } from './verify.ts';

// The worked examples of AWS's Signature Version 2 documentation ("Signing and authenticating REST requests").
const CREDS = { accessKey: 'AKIAIOSFODNN7EXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const credentials = (k: string) => (k === CREDS.accessKey ? CREDS : undefined);
const opts = (now: number, more: Record<string, unknown> = {}) => ({
  credentials,
  region: 'us-east-1',
  clock: new ManualClock(now),
  signatureV2: true,
  domains: ['s3.amazonaws.com'],
  ...more,
});

const GET_OBJECT = {
  method: 'GET',
  url: '/photos/puppy.jpg',
  headers: { host: 'awsexamplebucket1.us-west-1.s3.amazonaws.com', date: 'Tue, 27 Mar 2007 19:36:42 +0000' },
};
const PUT_OBJECT = {
  method: 'PUT',
  url: '/photos/puppy.jpg',
  headers: { host: 'awsexamplebucket1.s3.us-west-1.amazonaws.com', 'content-type': 'image/jpeg', 'content-length': '94328', date: 'Tue, 27 Mar 2007 21:15:45 +0000' },
};

function sign(stringToSign: string, secret = CREDS.secretKey): string {
  return createHmac('sha1', secret).update(stringToSign).digest('base64');
}

describe('SigV2 string to sign', () => {
  it('matches the documented examples: virtual-host resource, sub-resources, amz headers', () => {
    expect(stringToSignV2(GET_OBJECT, GET_OBJECT.headers.date, ['us-west-1.s3.amazonaws.com'])).toBe(
      'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg',
    );
    expect(sign('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg')).toBe('qgk2+6Sv9/oM7G3qLEjTH1a1l1g=');
    expect(stringToSignV2(PUT_OBJECT, PUT_OBJECT.headers.date, [])).toBe('PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/photos/puppy.jpg');
    const acl = { method: 'GET', url: '/b/k?versionId=3%2F4&acl&prefix=x&response-content-type=text%2Fplain', headers: { host: 'h' } };
    expect(canonicalResourceV2(acl)).toBe('/b/k?acl&response-content-type=text/plain&versionId=3/4');
    const amz = {
      method: 'PUT',
      url: '/b/k',
      headers: { host: 'h', 'x-amz-meta-b': ' two ', 'x-amz-acl': 'public-read', 'x-amz-meta-a': Buffer.from('café', 'utf8').toString('latin1'), 'content-md5': 'MD5==' },
    };
    expect(stringToSignV2(amz, 'D')).toBe('PUT\nMD5==\n\nD\nx-amz-acl:public-read\nx-amz-meta-a:café\nx-amz-meta-b:two\n/b/k');
  });
});

describe('SigV2 header authentication', () => {
  const now = Date.parse('Tue, 27 Mar 2007 19:36:42 +0000');
  const signedGet = (secret?: string) => ({
    ...GET_OBJECT,
    headers: { ...GET_OBJECT.headers, authorization: `AWS ${CREDS.accessKey}:${sign(stringToSignV2(GET_OBJECT, GET_OBJECT.headers.date, ['us-west-1.s3.amazonaws.com']), secret)}` },
  });

  it('accepts a correctly signed request through the same credential lookup as SigV4', () => {
    const o = opts(now, { domains: ['us-west-1.s3.amazonaws.com'] });
    const ctx = authenticateRequest(signedGet(), o);
    expect(ctx).toMatchObject({ accessKey: CREDS.accessKey, signatureV2: true, presigned: false, payload: { kind: 'unsigned' } });
    const looked: string[] = [];
    authenticateRequest(signedGet(), { ...o, credentials: (k: string) => (looked.push(k), credentials(k)) });
    expect(looked).toEqual([CREDS.accessKey]);
  });

  it('refuses a wrong secret, an unknown key, tampering, skew, and SigV2 where only SigV4 is allowed', () => {
    const o = opts(now, { domains: ['us-west-1.s3.amazonaws.com'] });
    expect(code(() => authenticateRequest(signedGet('nope'), o))).toBe('SignatureDoesNotMatch');
    const good = signedGet();
    expect(code(() => authenticateRequest({ ...good, url: '/photos/kitten.jpg' }, o))).toBe('SignatureDoesNotMatch');
    expect(code(() => authenticateRequest({ ...good, headers: { ...good.headers, authorization: good.headers.authorization.replace('AKIA', 'XKIA') } }, o))).toBe('InvalidAccessKeyId');
    expect(code(() => authenticateRequest(good, { ...o, clock: new ManualClock(now + 16 * 60_000) }))).toBe('RequestTimeTooSkewed');
    expect(code(() => authenticateRequest({ ...good, headers: { ...good.headers, authorization: 'AWS nocolon' } }, o))).toBe('AuthorizationHeaderMalformed');
    const { date: _d, ...noDate } = good.headers;
    expect(code(() => authenticateRequest({ ...good, headers: noDate }, o))).toBe('AccessDenied');
    // the admin API verifies with SigV4 only
    expect(code(() => verifyRequest(good, { ...o, signatureV2: false }))).toBe('AccessDenied');
  });

  it('accepts x-amz-date with the Date line signed empty, and refuses streaming payloads', () => {
    const req = { method: 'DELETE', url: '/b/k', headers: { host: 'h', 'x-amz-date': 'Tue, 27 Mar 2007 21:20:26 +0000' } as Record<string, string> };
    req.headers.authorization = `AWS ${CREDS.accessKey}:${sign(stringToSignV2(req, ''))}`;
    const t = Date.parse('Tue, 27 Mar 2007 21:20:26 +0000');
    expect(authenticateRequest(req, opts(t)).signatureV2).toBe(true);
    const streaming = { ...req, headers: { ...req.headers, 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' } as Record<string, string> };
    streaming.headers.authorization = `AWS ${CREDS.accessKey}:${sign(stringToSignV2(streaming, ''))}`;
    expect(code(() => authenticateRequest(streaming, opts(t)))).toBe('InvalidRequest');
  });
});

describe('SigV2 presigned URLs', () => {
  const expires = 1175139620;
  const url = (sig: string, path = '/b/photos/puppy.jpg') => `${path}?AWSAccessKeyId=${CREDS.accessKey}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
  const sig = sign(`GET\n\n\n${expires}\n/b/photos/puppy.jpg`);

  it('accepts a URL before Expires and refuses it after, or tampered', () => {
    const req = { method: 'GET', url: url(sig), headers: { host: 'h' } };
    expect(authenticateRequest(req, opts(expires * 1000 - 1000))).toMatchObject({ presigned: true, signatureV2: true });
    expect(code(() => authenticateRequest(req, opts(expires * 1000 + 1000)))).toBe('AccessDenied');
    expect(code(() => authenticateRequest({ ...req, url: url(sig, '/b/photos/kitten.jpg') }, opts(expires * 1000 - 1000)))).toBe('SignatureDoesNotMatch');
    expect(code(() => authenticateRequest({ ...req, method: 'PUT' }, opts(expires * 1000 - 1000)))).toBe('SignatureDoesNotMatch');
    expect(code(() => authenticateRequest({ ...req, headers: { ...req.headers, authorization: 'AWS a:b' } }, opts(0)))).toBe('InvalidArgument');
  });
});

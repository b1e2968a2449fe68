import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { IpSet } from '../util/ip-set.ts';
import { requestOrigin, resolveOrigin, tagTrustedProxies } from './request-origin.ts';

function req(remoteAddress: string, headers: Record<string, string | string[]>, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress, ...(encrypted ? { encrypted: true } : {}) }, headers: { host: 'svc.local:9000', ...headers } } as unknown as IncomingMessage;
}

const proxy = IpSet.parse('10.0.0.1, 10.0.0.2');

describe('resolveOrigin', () => {
  it('an untrusted peer: X-Forwarded-* ignored, the connection decides', () => {
    const r = req('203.0.113.9', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '1.2.3.4', 'x-forwarded-host': 'evil.example', 'x-forwarded-prefix': '/x' });
    expect(resolveOrigin(r, proxy)).toEqual({
      sourceIp: '203.0.113.9',
      secure: false,
      direct: { ip: '203.0.113.9', secure: false },
      viaTrustedProxy: false,
      host: 'svc.local:9000',
      prefix: undefined,
    });
    expect(resolveOrigin(req('203.0.113.9', {}, true), proxy).secure).toBe(true);
  });

  it('with no trusted proxies (the default) even loopback is not trusted', () => {
    expect(resolveOrigin(req('127.0.0.1', { 'x-forwarded-proto': 'https' }), IpSet.EMPTY).secure).toBe(false);
  });

  it('a trusted proxy: proto, host and prefix from its headers (first value)', () => {
    const o = resolveOrigin(req('::ffff:10.0.0.1', { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'public.example, inner', 'x-forwarded-prefix': '/storage', 'x-forwarded-for': '198.51.100.7' }), proxy);
    expect(o).toMatchObject({ sourceIp: '198.51.100.7', secure: true, viaTrustedProxy: true, host: 'public.example', prefix: '/storage', direct: { ip: '10.0.0.1', secure: false } });
    // a trusted proxy saying http over a TLS connection: the client used http
    expect(resolveOrigin(req('10.0.0.1', { 'x-forwarded-proto': 'http' }, true), proxy).secure).toBe(false);
    // no proto header: the connection itself
    expect(resolveOrigin(req('10.0.0.1', {}, true), proxy).secure).toBe(true);
  });

  it('X-Forwarded-For is walked from the right through trusted hops only', () => {
    // client forged "6.6.6.6"; proxy chain 10.0.0.2 -> 10.0.0.1 -> us
    const o = resolveOrigin(req('10.0.0.1', { 'x-forwarded-for': ['6.6.6.6, 198.51.100.7', '10.0.0.2'] }), proxy);
    expect(o.sourceIp).toBe('198.51.100.7');
    // every hop trusted: the left-most address
    expect(resolveOrigin(req('10.0.0.1', { 'x-forwarded-for': '10.0.0.2' }), proxy).sourceIp).toBe('10.0.0.2');
    // a hop that is not an IP stops the walk at the proxy that added it
    expect(resolveOrigin(req('10.0.0.1', { 'x-forwarded-for': '1.1.1.1, unknown' }), proxy).sourceIp).toBe('10.0.0.1');
    // bracketed IPv6 with a port, as some proxies write it
    expect(resolveOrigin(req('10.0.0.1', { 'x-forwarded-for': '[2001:db8::7]:4711' }), proxy).sourceIp).toBe('2001:db8::7');
  });
});

describe('requestOrigin', () => {
  it('uses the trusted set the listener tagged, once per request', () => {
    const r = req('10.0.0.1', { 'x-forwarded-proto': 'https' });
    tagTrustedProxies(r, proxy);
    const o = requestOrigin(r);
    expect(o.secure).toBe(true);
    expect(requestOrigin(r)).toBe(o);
  });
  it('an untagged request trusts no header', () => {
    expect(requestOrigin(req('10.0.0.1', { 'x-forwarded-proto': 'https' })).secure).toBe(false);
  });
});

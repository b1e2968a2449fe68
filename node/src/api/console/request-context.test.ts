import { describe, expect, it } from 'vitest';
import { parseCookies, serializeCookie } from './cookies.ts';
import { cookiePath, requestInfo, sameSiteRequest } from './request-context.ts';
import { connectHost } from './upstream.ts';

const direct = (host: string) => ({ prefix: undefined, secure: false, host });

describe('requestInfo', () => {
  it('direct: no prefix', () => {
    const i = requestInfo('/svc/console/api/session?x=1', direct('node1:9001'), '');
    expect(i).toEqual({ path: '/svc/console/api/session', query: 'x=1', prefix: '', secure: false, host: 'node1:9001' });
    expect(cookiePath(i)).toBe('/svc/console/');
  });

  it('a (trusted) proxy that strips the prefix says so with X-Forwarded-Prefix', () => {
    const i = requestInfo('/svc/console/', { prefix: '/storage/', secure: true, host: 'example.com' }, '');
    expect(i.path).toBe('/svc/console/');
    expect(i.prefix).toBe('/storage');
    expect(i.secure).toBe(true);
    expect(i.host).toBe('example.com');
    expect(cookiePath(i)).toBe('/storage/svc/console/');
  });

  it('a proxy that keeps the prefix: SVC_CONSOLE_BASE_PATH strips it', () => {
    const i = requestInfo('/storage/svc/console/api/pools', direct('h'), '/storage');
    expect(i.path).toBe('/svc/console/api/pools');
    expect(i.prefix).toBe('/storage');
    expect(requestInfo('/storage', direct('h'), '/storage').path).toBe('/');
    // a path that merely starts with the same letters is not under the prefix
    expect(requestInfo('/storagex/svc/console/', direct('h'), '/storage').path).toBe('/storagex/svc/console/');
  });

  it('ignores a forwarded prefix that is not a plain path', () => {
    for (const bad of ['/a/../b', '//evil', '/a?b', '/a;Path=/', '/a\r\nSet-Cookie: x', 'a b']) {
      expect(requestInfo('/svc/console/', { prefix: bad, secure: false, host: '' }, '/base').prefix).toBe('/base');
    }
  });
});

describe('sameSiteRequest', () => {
  const info = requestInfo('/svc/console/api/buckets', direct('console.local:9001'), '');
  it('Sec-Fetch-Site decides when the browser sends it', () => {
    expect(sameSiteRequest({ 'sec-fetch-site': 'same-origin' }, info)).toBe(true);
    for (const s of ['cross-site', 'same-site', 'none']) expect(sameSiteRequest({ 'sec-fetch-site': s, origin: 'http://console.local:9001' }, info)).toBe(false);
  });
  it('else Origin must name the host reached', () => {
    expect(sameSiteRequest({ host: 'console.local:9001', origin: 'http://console.local:9001' }, info)).toBe(true);
    expect(sameSiteRequest({ host: 'console.local:9001', origin: 'https://evil.example' }, info)).toBe(false);
    expect(sameSiteRequest({ host: 'console.local:9001', origin: 'null' }, info)).toBe(false);
    const proxied = requestInfo('/svc/console/api/buckets', { prefix: undefined, secure: false, host: 'example.com' }, '');
    expect(sameSiteRequest({ host: 'svc:9001', 'x-forwarded-host': 'example.com', origin: 'https://example.com' }, proxied)).toBe(true);
  });
  it('no browser headers at all: left to the CSRF token', () => {
    expect(sameSiteRequest({ host: 'console.local:9001' }, info)).toBe(true);
  });
});

describe('cookies', () => {
  it('parse and serialise', () => {
    expect([...parseCookies('a=1; svc_console="tok"; b=2; a=3')]).toEqual([
      ['a', '1'],
      ['svc_console', 'tok'],
      ['b', '2'],
    ]);
    expect(parseCookies(undefined).size).toBe(0);
    expect(serializeCookie('svc_console', 'v', { path: '/p/svc/console/', maxAge: 3600.7, secure: true })).toBe('svc_console=v; Path=/p/svc/console/; Max-Age=3600; HttpOnly; SameSite=Strict; Secure');
    expect(serializeCookie('svc_console', '', { path: '/', maxAge: 0, secure: false })).toBe('svc_console=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
  });
});

describe('connectHost', () => {
  it('reaches any-address binds on loopback, specific ones as they are', () => {
    expect(['', '0.0.0.0', '::', '::0'].map(connectHost)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(connectHost('127.0.0.2')).toBe('127.0.0.2');
    expect(connectHost('::1')).toBe('[::1]');
  });
});

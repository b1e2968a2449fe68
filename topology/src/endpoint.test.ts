import { describe, expect, it } from 'vitest';
import { TopologyError } from './errors.ts';
import { endpointKey, isLocalEndpoint, parseEndpoint } from './endpoint.ts';

describe('endpoint parsing', () => {
  it('parses local paths, resolving relative ones against cwd', () => {
    expect(parseEndpoint('/mnt/d1/', '/x')).toMatchObject({ kind: 'path', path: '/mnt/d1' });
    expect(parseEndpoint('./data/d1', '/srv')).toMatchObject({ kind: 'path', path: '/srv/data/d1', raw: './data/d1' });
  });
  it('parses URLs with default ports', () => {
    expect(parseEndpoint('http://Node1:9000/mnt/d1', '/')).toEqual({
      kind: 'url',
      raw: 'http://Node1:9000/mnt/d1',
      scheme: 'http',
      host: 'node1',
      port: 9000,
      path: '/mnt/d1',
    });
    expect(parseEndpoint('https://h/d', '/')).toMatchObject({ port: 443 });
    expect(parseEndpoint('http://[::1]:9000/d', '/')).toMatchObject({ host: '::1' });
  });
  it.each(['', 'http://h:9000', 'http://h:9000/', 'ftp://h/d', 'http://u:p@h/d', 'http://h/d?x=1', '/'])('rejects %j', (raw) => {
    let err: unknown;
    try {
      parseEndpoint(raw, '/');
    } catch (e) {
      err = e;
    }
    expect(err instanceof TopologyError && err.code === 'InvalidTopology').toBe(true);
  });
  it('keys identify drives', () => {
    expect(endpointKey(parseEndpoint('http://h:9000/d/', '/'))).toBe(endpointKey(parseEndpoint('http://H:9000/d', '/')));
  });
  it('decides locality from host set and listen port', () => {
    const local = new Set(['127.0.0.1', 'node1', '::1']);
    expect(isLocalEndpoint(parseEndpoint('/d', '/'), local, 9000)).toBe(true);
    expect(isLocalEndpoint(parseEndpoint('http://node1:9000/d', '/'), local, 9000)).toBe(true);
    expect(isLocalEndpoint(parseEndpoint('http://[::1]:9000/d', '/'), local, 9000)).toBe(true);
    expect(isLocalEndpoint(parseEndpoint('http://node1:9001/d', '/'), local, 9000)).toBe(false);
    expect(isLocalEndpoint(parseEndpoint('http://node2:9000/d', '/'), local, 9000)).toBe(false);
  });
});

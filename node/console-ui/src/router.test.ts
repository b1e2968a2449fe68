import { describe, expect, it } from 'vitest';
import { href, parseRoute, type Route } from './router.ts';

describe('routes', () => {
  it('round-trip through the URL fragment', () => {
    const routes: Route[] = [
      { page: 'overview' },
      { page: 'pools' },
      { page: 'healing' },
      { page: 'buckets' },
      { page: 'bucket', bucket: 'photos', prefix: '' },
      { page: 'bucket', bucket: 'photos', prefix: '2024/a b&c/' },
      { page: 'object', bucket: 'photos', key: 'dir/ü ?#.bin' },
    ];
    for (const r of routes) expect(parseRoute(href(r))).toEqual(r);
  });
  it('unknown fragments are not-found; empty is the overview', () => {
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('#/')).toEqual({ page: 'overview' });
    expect(parseRoute('#/nope')).toEqual({ page: 'not-found', path: '/nope' });
    expect(parseRoute('#/buckets/b/object')).toEqual({ page: 'not-found', path: '/buckets/b/object' });
  });
});

/**
 * Pages are addressed by the URL fragment (`#/buckets/photos?prefix=2024/`),
 * so the server and any proxy in front of it only ever see the console's
 * root: deep links work under any path prefix without server rules.
 */

export type Route =
  | { readonly page: 'overview' }
  | { readonly page: 'pools' }
  | { readonly page: 'healing' }
  | { readonly page: 'metrics' }
  | { readonly page: 'buckets' }
  | { readonly page: 'identity' }
  | { readonly page: 'bucket'; readonly bucket: string; readonly prefix: string }
  | { readonly page: 'object'; readonly bucket: string; readonly key: string }
  | { readonly page: 'not-found'; readonly path: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const path = (q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, '') || '/';
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const seg = path.split('/').filter((s) => s !== '').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  if (seg.length === 0) return { page: 'overview' };
  if (seg.length === 1 && (seg[0] === 'pools' || seg[0] === 'healing' || seg[0] === 'metrics' || seg[0] === 'buckets' || seg[0] === 'identity')) return { page: seg[0] };
  if (seg[0] === 'buckets' && seg.length === 2) return { page: 'bucket', bucket: seg[1]!, prefix: query.get('prefix') ?? '' };
  if (seg[0] === 'buckets' && seg.length === 3 && seg[2] === 'object' && query.get('key')) return { page: 'object', bucket: seg[1]!, key: query.get('key')! };
  return { page: 'not-found', path };
}

export function href(r: Route): string {
  switch (r.page) {
    case 'overview':
      return '#/';
    case 'pools':
    case 'healing':
    case 'metrics':
    case 'buckets':
    case 'identity':
      return `#/${r.page}`;
    case 'bucket':
      return `#/buckets/${encodeURIComponent(r.bucket)}${r.prefix ? `?${new URLSearchParams({ prefix: r.prefix })}` : ''}`;
    case 'object':
      return `#/buckets/${encodeURIComponent(r.bucket)}/object?${new URLSearchParams({ key: r.key })}`;
    case 'not-found':
      return `#${r.path}`;
  }
}

/** The top-level section a route belongs to (for the navigation's current item). */
export function sectionOf(r: Route): 'overview' | 'pools' | 'healing' | 'metrics' | 'buckets' | 'identity' | undefined {
  if (r.page === 'bucket' || r.page === 'object') return 'buckets';
  if (r.page === 'not-found') return undefined;
  return r.page;
}

/**
 * The console's static files, as `node/scripts/build-console.mjs` wrote them
 * (at `npm ci` time) into `node/build/console/`: a shell page (`index.html`)
 * and the scripts, styles and icons under `assets/<buildId>/`, each with
 * Brotli and gzip variants. Loaded into memory once (they are small), served
 * with a strict Content-Security-Policy:
 *
 * - the shell: `Cache-Control: no-cache` and an ETag (revalidated each visit,
 *   so a new build is picked up at once);
 * - assets: `immutable` for a year: their URL changes with every build.
 *
 * Every link in them is relative, so they work under any path prefix.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the build writes the console (relative to this file: node/build/console). */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../../build/console/', import.meta.url));

/** What a console page may do: scripts, styles and calls of its own origin only; no inline code, frames of its own preview route only, DOM sinks locked by Trusted Types. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  // the one frame: an object's PDF preview (the console's own preview route, itself sandboxed)
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Headers every console response carries. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** What a download (an object, a ZIP of objects) carries besides its type and name: its bytes never run as a page of the console, sandboxed, never sniffed, never cached. */
export const DOWNLOAD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** `filename*` (RFC 6266/5987) for the key's last segment, and an ASCII fallback. */
export function attachmentDisposition(key: string): string {
  const name = key.split('/').filter((s) => s !== '').pop() ?? 'download';
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export interface Asset {
  readonly type: string;
  readonly etag: string;
  readonly body: Buffer;
  readonly br: Buffer | undefined;
  readonly gzip: Buffer | undefined;
}

interface Manifest {
  readonly version: 1;
  readonly buildId: string;
  readonly files: readonly { readonly path: string; readonly type: string; readonly sha256: string; readonly encodings: readonly ('br' | 'gzip')[] }[];
}

export interface ConsoleAssets {
  /** Empty when the build is missing. */
  readonly buildId: string;
  /** Why the console cannot be shown (no build), else undefined. */
  readonly problem: string | undefined;
  /** By path relative to the build root (`index.html`, `assets/<id>/main.js`). */
  get(path: string): Asset | undefined;
}

export function loadConsoleAssets(dir = DEFAULT_ASSETS_DIR): ConsoleAssets {
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) {
    return {
      buildId: '',
      problem: `the console's pages are not built (no ${manifestPath}); run \`npm ci\`, or \`npm run -w node build:console\` in a checkout`,
      get: () => undefined,
    };
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const files = new Map<string, Asset>();
  for (const f of manifest.files) {
    const p = join(dir, f.path);
    files.set(f.path, {
      type: f.type,
      etag: `"${f.sha256.slice(0, 32)}"`,
      body: readFileSync(p),
      br: f.encodings.includes('br') ? readFileSync(`${p}.br`) : undefined,
      gzip: f.encodings.includes('gzip') ? readFileSync(`${p}.gz`) : undefined,
    });
  }
  return { buildId: manifest.buildId, problem: undefined, get: (path) => files.get(path) };
}

/** Best encoding the client accepts (`br` > `gzip` > none), by q-values. */
export function pickEncoding(acceptEncoding: string | undefined, a: Asset): 'br' | 'gzip' | undefined {
  if (acceptEncoding === undefined) return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    q.set(name!.trim(), qp === undefined ? 1 : Number(qp.slice(2)) || 0);
  }
  const ok = (n: string) => (q.get(n) ?? q.get('*') ?? 0) > 0;
  if (a.br !== undefined && ok('br')) return 'br';
  if (a.gzip !== undefined && ok('gzip')) return 'gzip';
  return undefined;
}

export function serveAsset(req: IncomingMessage, res: ServerResponse, a: Asset, cacheControl: string, extra: Readonly<Record<string, string>> = {}): void {
  const headers: Record<string, string> = { ...SECURITY_HEADERS, ...extra, 'content-type': a.type, 'cache-control': cacheControl, etag: a.etag, vary: 'accept-encoding' };
  const inm = req.headers['if-none-match'];
  if (inm !== undefined && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === a.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const enc = pickEncoding(req.headers['accept-encoding'], a);
  const body = enc === 'br' ? a.br! : enc === 'gzip' ? a.gzip! : a.body;
  if (enc !== undefined) headers['content-encoding'] = enc;
  headers['content-length'] = String(body.length);
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

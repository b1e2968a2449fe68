/**
 * The console's build (node/scripts/build-console.mjs, run at `npm ci`):
 * deterministic, self-contained (nothing fetched from elsewhere: the console
 * works offline), compatible with the pages' strict Content-Security-Policy
 * (no inline code, no HTML sinks), and refusing modules a browser could not
 * load. The server loads exactly what the manifest lists.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConsoleAssets, pickEncoding } from '../src/api/console/assets.ts';
import { runConsoleBuild } from './helpers/build-console-setup.ts';
import { REPO } from './svc-process.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-console-build-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Manifest {
  buildId: string;
  files: { path: string; type: string; sha256: string; size: number; encodings: string[] }[];
}
const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;

describe('console build', () => {
  it('is deterministic, self-contained and fit for the strict CSP', () => {
    const a = join(tmp, 'a');
    const b = join(tmp, 'b');
    runConsoleBuild(a);
    runConsoleBuild(b);
    const m = manifestOf(a);
    expect(manifestOf(b)).toEqual(m);
    expect(m.buildId).toMatch(/^[0-9a-f]{12}$/);
    const paths = m.files.map((f) => f.path);
    expect(paths).toContain('index.html');
    for (const p of ['main.js', 'api.js', 'upload.js', 'pages/pools.js', 'console.css', 'logo.svg']) expect(paths).toContain(`assets/${m.buildId}/${p}`);
    for (const f of m.files) {
      const body = readFileSync(join(a, f.path));
      expect(body.length).toBe(f.size);
      expect(brotliDecompressSync(readFileSync(join(a, `${f.path}.br`))).equals(body)).toBe(true);
      expect(gunzipSync(readFileSync(join(a, `${f.path}.gz`))).equals(body)).toBe(true);
      const text = body.toString('utf8');
      // nothing loaded from elsewhere (the SVG namespace is a name, not a fetch)
      expect(text.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:\/\/|\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
      if (f.path.endsWith('.js')) {
        expect(text).not.toMatch(/\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setAttribute\(\s*['"]style/);
        // type stripping keeps positions: no TypeScript left
        expect(text).not.toMatch(/^\s*(interface|type)\s+\w+/m);
      }
    }
    const html = readFileSync(join(a, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|\sstyle=|\son[a-z]+=/);
    for (const ref of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(paths).toContain(ref[1]);
    // the server serves what the manifest lists, compressed for those who accept it
    const assets = loadConsoleAssets(a);
    expect(assets.buildId).toBe(m.buildId);
    const main = assets.get(`assets/${m.buildId}/main.js`)!;
    expect(main.type).toBe('text/javascript; charset=utf-8');
    expect(pickEncoding('gzip, deflate, br', main)).toBe('br');
    expect(pickEncoding('gzip', main)).toBe('gzip');
    expect(pickEncoding('br;q=0, gzip;q=0.5', main)).toBe('gzip');
    expect(pickEncoding(undefined, main)).toBeUndefined();
    expect(loadConsoleAssets(join(tmp, 'none')).problem).toMatch(/not built.*npm ci/);
  });

  it('refuses a module a browser could not load, naming the file', () => {
    const src = join(tmp, 'src');
    cpSync(join(REPO, 'node', 'console-ui'), src, { recursive: true });
    writeFileSync(join(src, 'src', 'bad.ts'), "import { pino } from 'pino';\nexport const x: number = pino.length;\n");
    // the build script takes its sources from its own package: run a copy of it next to the bad sources
    const script = join(tmp, 'scripts', 'build-console.mjs');
    cpSync(join(REPO, 'node', 'scripts', 'build-console.mjs'), script);
    cpSync(src, join(tmp, 'console-ui'), { recursive: true });
    expect(() => runConsoleBuild(join(tmp, 'out-bad'), script)).toThrow(/console-ui\/src\/bad\.ts: import "pino" is not a module of the console/);
  });
});

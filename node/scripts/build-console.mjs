// Builds the web console's static files (node/console-ui → node/build/console).
// Runs at `npm ci` (this package's postinstall) and before the tests; plain
// JS with no dependencies, so it runs wherever the server does.
//
// The browser code is TypeScript written with erasable syntax only (the
// project's rule): Node's own type stripper (`module.stripTypeScriptTypes`)
// turns each file into the JavaScript module the browser loads, position for
// position, so no bundler, no source maps and no third-party code are
// needed. Imports between modules are relative `.js` paths; type-only
// imports (the API's wire types) disappear. Output:
//
//   index.html                 the shell (links carry the build id)
//   assets/<buildId>/...       modules, stylesheet, icon (immutable URLs)
//   *.br, *.gz                 precompressed variants
//   manifest.json              every file, its type, hash and variants
//
// The build id is a hash of the assets, so a new build gets new URLs and
// browsers may cache assets for a year. The output replaces the old one
// atomically (a running server keeps what it loaded at start).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_SRC = join(PKG, 'console-ui');
export const DEFAULT_OUT = join(PKG, 'build', 'console');

const TYPES = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

const posix = (p) => p.split(sep).join('/');
const extOf = (p) => p.slice(p.lastIndexOf('.'));

/** Relative module specifiers of a stripped module (static imports and re-exports, dynamic imports). */
function specifiers(js) {
  const out = [];
  for (const m of js.matchAll(/(?:^|[;\n])\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g)) {
    out.push(m[1] ?? m[2] ?? m[3]);
  }
  return out;
}

/**
 * Builds into `out` and returns the manifest. Throws with the file and the
 * reason when a module cannot run in a browser as built.
 */
export function buildConsole({ src = DEFAULT_SRC, out = DEFAULT_OUT } = {}) {
  const { stripTypeScriptTypes } = nodeModule;
  if (typeof stripTypeScriptTypes !== 'function') {
    throw new Error(`building the console needs Node.js 24 (module.stripTypeScriptTypes); this is ${process.version}`);
  }
  const assets = new Map();
  for (const file of walk(join(src, 'src'))) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const rel = posix(relative(join(src, 'src'), file)).replace(/\.ts$/, '.js');
    let js;
    try {
      js = stripTypeScriptTypes(readFileSync(file, 'utf8'), { mode: 'strip' });
    } catch (err) {
      throw new Error(`console-ui/src/${rel.replace(/\.js$/, '.ts')}: ${err.message}`);
    }
    assets.set(rel, Buffer.from(js));
  }
  for (const [rel, body] of assets) {
    for (const spec of specifiers(body.toString('utf8'))) {
      const target = posix(join(dirname(rel), spec));
      if (!spec.startsWith('.') || !spec.endsWith('.js') || !assets.has(target)) {
        throw new Error(`console-ui/src/${rel.replace(/\.js$/, '.ts')}: import "${spec}" is not a module of the console (browser imports must be relative .js paths; use \`import type\` for server types)`);
      }
    }
  }
  if (!assets.has('main.js')) throw new Error('console-ui/src/main.ts is missing');
  for (const file of walk(join(src, 'static'))) assets.set(posix(relative(join(src, 'static'), file)), readFileSync(file));

  const h = createHash('sha256');
  for (const [rel, body] of [...assets].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(rel).update('\0').update(body).update('\0');
  const buildId = h.digest('hex').slice(0, 12);

  const preloads = [...assets.keys()]
    .filter((p) => p.endsWith('.js') && p !== 'main.js')
    .sort()
    .map((p) => `<link rel="modulepreload" href="assets/${buildId}/${p}">`)
    .join('\n');
  const shell = readFileSync(join(src, 'index.html'), 'utf8').replaceAll('%BUILD%', buildId).replace('%PRELOADS%', preloads);

  const files = [['index.html', Buffer.from(shell)], ...[...assets].map(([rel, body]) => [`assets/${buildId}/${rel}`, body])];
  const tmp = `${out}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const manifest = { version: 1, buildId, files: [] };
  try {
    for (const [rel, body] of files) {
      const type = TYPES[extOf(rel)];
      if (type === undefined) throw new Error(`console-ui: no content type for ${rel}`);
      const p = join(tmp, rel);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, body);
      writeFileSync(`${p}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
      writeFileSync(`${p}.gz`, gzipSync(body, { level: 9 }));
      manifest.files.push({ path: rel, type, sha256: createHash('sha256').update(body).digest('hex'), size: body.length, encodings: ['br', 'gzip'] });
    }
    writeFileSync(join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const old = `${out}.old-${process.pid}-${randomBytes(4).toString('hex')}`;
    if (existsSync(out)) renameSync(out, old);
    try {
      renameSync(tmp, out);
    } catch (err) {
      // another build (same sources) put its output in place between the two renames
      if (!existsSync(join(out, 'manifest.json')) || JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).buildId !== buildId) throw err;
    }
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return manifest;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : DEFAULT_OUT;
  try {
    const m = buildConsole({ out });
    console.log(`svc: web console built (${m.files.length} files, build ${m.buildId}) in ${relative(process.cwd(), out) || '.'}`);
  } catch (err) {
    console.error(`svc: building the web console failed: ${err.message}`);
    process.exit(1);
  }
}

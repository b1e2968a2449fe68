// Builds the optional native addon (node/native → node/build/Release/svc_native.node)
// with node-gyp. Plain JS so it runs under whichever node npm uses.
//
// A failed build is not an install failure: the server falls back to the
// TypeScript codec (slower, same bytes on disk) and logs which kernel it runs.
// Set SVC_SKIP_NATIVE=1 to skip the build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function warn(reason) {
  console.warn(
    `svc: WARNING: native erasure codec not built (${reason}); the pure-TypeScript codec will be used (much slower encode/decode).`,
  );
  process.exit(0);
}

if (process.env.SVC_SKIP_NATIVE === '1') warn('SVC_SKIP_NATIVE=1');

// npm exports the path of its bundled node-gyp to lifecycle scripts; outside
// npm, fall back to a node-gyp on PATH.
const gypJs = process.env.npm_config_node_gyp;
const cmd = gypJs && existsSync(gypJs) ? process.execPath : 'node-gyp';
const args = gypJs && existsSync(gypJs) ? [gypJs, 'rebuild'] : ['rebuild'];

// The addon uses only Node-API (ABI-stable), so any installed Node headers
// do. Point node-gyp at installed ones, when npm's config names none, so it
// never needs to download headers (image builds may have no network).
if (!process.env.npm_config_nodedir) {
  const candidates = [resolve(dirname(process.execPath), '..'), '/usr/local', '/usr'];
  const nodedir = candidates.find((d) => existsSync(join(d, 'include', 'node', 'node_api.h')) && existsSync(join(d, 'include', 'node', 'common.gypi')));
  if (nodedir) args.push(`--nodedir=${nodedir}`);
}

const res = spawnSync(cmd, args, { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
if (res.error) warn(`could not run node-gyp: ${res.error.message}`);
if (res.status !== 0) {
  const tail = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
  console.warn(tail);
  warn(`node-gyp exited with status ${res.status}`);
}
if (!existsSync(join(pkgDir, 'build', 'Release', 'svc_native.node'))) warn('node-gyp produced no svc_native.node');
console.log('svc: native erasure codec built (build/Release/svc_native.node)');

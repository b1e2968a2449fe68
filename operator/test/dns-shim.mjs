// Test-only preload (NODE_OPTIONS=--import <this file>): resolves the names
// listed in the JSON file named by SVC_TEST_DNS_MAP (host → IPv4), for
// dns.lookup and dns.promises.lookup, which is what http, fetch (undici) and
// the server's locality check use. Everything else resolves as usual, so
// production code carries no test hook. The file is re-read when it changes
// (pods get addresses as they are created).
import dns from 'node:dns';
import { readFileSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const file = process.env.SVC_TEST_DNS_MAP;
let cache = { mtime: -1, map: {} };

function table() {
  if (!file) return {};
  try {
    const m = statSync(file).mtimeMs;
    if (m !== cache.mtime) cache = { mtime: m, map: JSON.parse(readFileSync(file, 'utf8')) };
  } catch {
    // not written yet
  }
  return cache.map;
}

function find(host) {
  if (typeof host !== 'string') return undefined;
  return table()[host.toLowerCase().replace(/\.$/, '')];
}

const original = dns.lookup;
dns.lookup = function lookup(host, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'function' ? {} : typeof options === 'number' ? { family: options } : (options ?? {});
  const ip = find(host);
  if (ip === undefined) return original.call(dns, host, options, callback);
  process.nextTick(() => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)));
  return undefined;
};

const originalPromise = dns.promises.lookup;
dns.promises.lookup = async function lookup(host, options) {
  const ip = find(host);
  if (ip === undefined) return originalPromise.call(dns.promises, host, options);
  return options?.all ? [{ address: ip, family: 4 }] : { address: ip, family: 4 };
};
syncBuiltinESMExports();

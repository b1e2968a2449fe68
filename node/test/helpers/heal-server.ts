/**
 * Test helpers for healing against a real `svc server`: one pool of temp-dir
 * drives, an S3 client, signed admin calls, and what a heal test looks at on
 * the drives (shard files by shard number, the tree of what a drive holds,
 * drives taken away the way an operator loses them).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { decodeXlMeta } from '../../src/storage/xl-meta.ts';
import { START_COUNT_FILE } from '../../src/server/start-counter.ts';
import { spawn } from 'node:child_process';
import { NODE, REPO, runSvc, SVC, type SvcRun, tempDir, waitReady } from '../svc-process.ts';
import { admin, type Creds } from './admin.ts';
import { keepAliveHandler } from './s3-client.ts';

export interface HealServer {
  readonly base: string;
  readonly roots: string[];
  readonly creds: Creds;
  run: SvcRun;
  url: string;
  s3: S3Client;
  call(method: 'GET' | 'POST', path: string, query?: Record<string, string>, body?: string): ReturnType<typeof admin>;
  /** Runs the `svc` client against this server (SVC_ENDPOINT and keys in the environment). */
  cli(args: string[]): Promise<{ code: number | null; out: string; err: string }>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const CREDS: Creds = { accessKey: 'healadmin', secretKey: 'heal-admin-secret' };

/** A real `svc server` over `drives` temp-dir drives (one set), with a fast scanner. */
export async function startHealServer(drives = 4, env: Record<string, string> = {}): Promise<HealServer> {
  const base = tempDir('heal');
  const roots = Array.from({ length: drives }, (_, i) => join(base, `d${i + 1}`));
  for (const r of roots) mkdirSync(r);
  const fullEnv = { SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey, SVC_CONSOLE_ENABLE: 'false', SVC_SCANNER_INTERVAL: '1s', ...env };
  const args = ['server', `${base}/d{1...${drives}}`];
  const make = async () => {
    const run = await runSvc(args, fullEnv);
    const url = `http://127.0.0.1:${run.port}`;
    await waitReady(run, url);
    return { run, url };
  };
  const first = await make();
  const client = (url: string) =>
    new S3Client({ requestHandler: keepAliveHandler(), endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey } });
  const s: HealServer = {
    base,
    roots,
    creds: CREDS,
    run: first.run,
    url: first.url,
    s3: client(first.url),
    call: (method, path, query = {}, body) => admin(s.url, CREDS, { method, path, query, ...(body !== undefined ? { body } : {}) }),
    cli: (cliArgs) =>
      new Promise((resolve, reject) => {
        const child = spawn(NODE, [SVC, ...cliArgs], {
          cwd: REPO,
          env: { PATH: process.env['PATH'] ?? '', HOME: base, SVC_ENDPOINT: s.url, SVC_ACCESS_KEY: CREDS.accessKey, SVC_SECRET_KEY: CREDS.secretKey },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('error', reject);
        child.on('exit', (code) => resolve({ code, out, err }));
      }),
    async restart() {
      await s.run.stop();
      s.s3.destroy();
      const next = await make();
      s.run = next.run;
      s.url = next.url;
      s.s3 = client(next.url);
    },
    async stop() {
      s.s3.destroy();
      await s.run.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
  return s;
}

export async function getBytes(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

/** The newest version of `bucket/key` as drive `root` holds it. */
export function versionOn(root: string, bucket: string, key: string) {
  return decodeXlMeta(readFileSync(join(root, bucket, key, 'xl.meta')))[0]!;
}

/** The shard file of shard number `shard` (1-based) of `bucket/key`: [drive index, path]. */
export function shardFile(roots: readonly string[], bucket: string, key: string, shard: number, part = 1): [number, string] {
  for (const [i, root] of roots.entries()) {
    if (!existsSync(join(root, bucket, key, 'xl.meta'))) continue;
    const v = versionOn(root, bucket, key);
    if (v.erasure?.index === shard) return [i, join(root, bucket, key, v.dataDir, `part.${part}`)];
  }
  throw new Error(`no drive holds shard ${shard} of ${bucket}/${key}`);
}

/** Flips one byte of a file in place (bitrot). */
export function flipByte(file: string, at: number): void {
  const b = readFileSync(file);
  b[at] = b[at]! ^ 0xff;
  writeFileSync(file, b);
}

/** A drive lost the way an operator loses one: its root replaced by a plain file. */
export function takeAway(root: string): void {
  renameSync(root, `${root}.away`);
  writeFileSync(root, 'not a drive');
}

export function giveBack(root: string): void {
  rmSync(root, { force: true });
  renameSync(`${root}.away`, root);
}

/** Empties a drive (its root stays: a wiped or swapped disk mounted at the same path). */
export function wipe(root: string): void {
  for (const e of readdirSync(root)) rmSync(join(root, e), { recursive: true, force: true, maxRetries: 20, retryDelay: 20 });
}

/**
 * What a drive holds for the object namespace: every file under the bucket
 * volumes and the bucket records (path → size and SHA-256), leaving out
 * staging, trash, the scanner's usage records, the recovery tracker and the
 * node's start count (drive-local state of the node, not of the set: a
 * rebuild does not bring it back, the next start writes it anew).
 */
export function holdings(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = p.slice(root.length + 1);
      if (e.isDirectory()) {
        if (['.svc.sys/tmp', '.svc.sys/multipart', '.svc.sys/usage'].includes(rel)) continue;
        walk(p);
      } else {
        if (rel === '.svc.sys/healing.json' || rel === `.svc.sys/${START_COUNT_FILE}`) continue;
        out.set(rel, `${statSync(p).size}:${createHash('sha256').update(readFileSync(p)).digest('hex').slice(0, 16)}`);
      }
    }
  };
  walk(root);
  return out;
}

export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

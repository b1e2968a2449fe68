/**
 * Test helpers for the web console: a real `svc server` with one or more
 * pools of four temp-dir drives (its console on its own port), an S3 client
 * for checking what the console did, and a small console API client that
 * keeps the session cookie and CSRF token as the page does.
 *
 * A node of several pools keeps all its drives on one small file system of
 * its own when it can (tmpfs, as root): still one file system shared by every
 * drive, but its capacity no longer follows the host disk, whose fill would
 * decide whether a decommission passes its capacity rule (free of the
 * remaining pools >= 1.3 x use of the drained one).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AdminClient } from '../../src/cli/admin/client.ts';
import { runSvc, type SvcRun, tempDir, waitReady } from '../svc-process.ts';
import { canMountTmpfs, mountTmpfs, unmountUnder } from './tmpfs.ts';
import { keepAliveHandler } from './s3-client.ts';

export const CONSOLE_ACCESS_KEY = 'console-admin';
/** Distinctive, so a test can look for it in everything the console sends. */
export const CONSOLE_SECRET_KEY = 'Zq9-console-secret-NEVER-shown-7f3a';

export interface ConsoleNode {
  readonly run: SvcRun;
  /** Drive directories per pool (`base/p<i>/d<j>`). */
  readonly drives: string[][];
  /** `http://127.0.0.1:<console port>`. */
  readonly console: string;
  readonly s3Url: string;
  readonly s3: S3Client;
  stop(): Promise<void>;
}

export async function startConsoleNode(pools = 1, env: Record<string, string> = {}): Promise<ConsoleNode> {
  const base = tempDir('console');
  if (pools > 1 && canMountTmpfs()) mountTmpfs(base, 2 * 1024 * 1024 * 1024);
  const drives = Array.from({ length: pools }, (_, p) =>
    Array.from({ length: 4 }, (_, d) => {
      const dir = join(base, `p${p}`, `d${d + 1}`);
      mkdirSync(dir, { recursive: true });
      return dir;
    }),
  );
  const run = await runSvc(['server', ...drives.map((_, p) => `${base}/p${p}/d{1...4}`)], { SVC_ACCESS_KEY: CONSOLE_ACCESS_KEY, SVC_SECRET_KEY: CONSOLE_SECRET_KEY, ...env });
  if (!(await run.started)) throw new Error(`svc did not start: ${run.stderr()}${run.stdout().slice(-2000)}`);
  const s3Url = `http://127.0.0.1:${run.port}`;
  // listening is not ready: until the node is (format, IAM loaded), the console answers 503
  await waitReady(run, s3Url).catch(async (err: unknown) => {
    await run.stop();
    throw err;
  });
  const s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: s3Url, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: CONSOLE_ACCESS_KEY, secretAccessKey: CONSOLE_SECRET_KEY } });
  return {
    run,
    drives,
    console: `http://127.0.0.1:${run.consolePort}`,
    s3Url,
    s3,
    async stop() {
      s3.destroy();
      await run.stop();
      unmountUnder(base);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/**
 * What the sign-in tests of external identities look at: bucket `reports` (object `q3.csv`), bucket
 * `private`, and policy `read-reports` (list and read `reports` only); returns an admin client as root.
 */
export async function seedReports(node: ConsoleNode): Promise<AdminClient> {
  await node.s3.send(new CreateBucketCommand({ Bucket: 'reports' }));
  await node.s3.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q3.csv', Body: 'a,b' }));
  await node.s3.send(new CreateBucketCommand({ Bucket: 'private' }));
  const admin = new AdminClient({ name: 't', url: node.s3Url, accessKey: CONSOLE_ACCESS_KEY, secretKey: CONSOLE_SECRET_KEY });
  await admin.request('PUT', 'v3/add-canned-policy', { name: 'read-reports' }, JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBucket'], Resource: ['arn:aws:s3:::reports', 'arn:aws:s3:::reports/*'] }] }));
  return admin;
}

export interface ConsoleAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

/** The console API as the page calls it: cookie jar of one, CSRF header on writes. */
export class ConsoleClient {
  readonly root: string;
  cookie = '';
  csrf = '';
  /** Every answer seen (for "the secret never appears" checks). */
  readonly seen: { url: string; status: number; headers: string; text: string }[] = [];

  /** `root`: the console's public root, e.g. `http://127.0.0.1:9001/svc/console/`. */
  constructor(root: string) {
    this.root = root;
  }

  async call(method: string, path: string, o: { body?: unknown; raw?: Buffer | string; headers?: Record<string, string>; csrf?: boolean } = {}): Promise<ConsoleAnswer> {
    const headers: Record<string, string> = { ...(this.cookie ? { cookie: this.cookie } : {}), ...o.headers };
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && o.csrf !== false && this.csrf && headers['x-csrf-token'] === undefined) headers['x-csrf-token'] = this.csrf;
    const res = await fetch(new URL(path, this.root), {
      method,
      headers,
      redirect: 'manual',
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : o.raw !== undefined ? { body: o.raw } : {}),
    });
    const text = await res.text();
    const set = res.headers.get('set-cookie');
    if (set !== null) {
      const m = /^svc_console=([^;]*)/.exec(set);
      if (m) this.cookie = m[1] === '' ? '' : `svc_console=${m[1]}`;
    }
    this.seen.push({ url: path, status: res.status, headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n'), text });
    return { status: res.status, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
  }

  async signIn(accessKey = CONSOLE_ACCESS_KEY, secretKey = CONSOLE_SECRET_KEY): Promise<ConsoleAnswer> {
    const r = await this.call('POST', 'api/session', { body: { accessKey, secretKey } });
    if (r.status === 200) this.csrf = r.json<{ csrfToken: string }>().csrfToken;
    return r;
  }
}

/**
 * A Ceph RGW on loopback for tests and benchmarks, from Debian's packages,
 * in a temp dir, with an S3 user of its own. The starters live in
 * `e2e/rgw/`: `rgw.sh` (one monitor, one memstore OSD, radosgw; the tests'
 * S3 peer) and `rgw-ec.sh` (an EC 2+2 pool on four BlueStore OSDs; the
 * bench's peer, `node/bench/lib/ceph-peer.ts`). `.ci/run` installs the packages.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** What a starter prints when the gateway is up. */
export interface RgwInfo {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  dir: string;
}

export type RgwStarter = 'rgw.sh' | 'rgw-ec.sh';

function script(starter: RgwStarter): string {
  return resolve(import.meta.dirname, '../../../e2e/rgw', starter);
}

/** Runs `starter start dir`; on a failure stops what it started and throws with the end of its stderr. */
export async function startCeph<T extends RgwInfo>(starter: RgwStarter, dir: string): Promise<T> {
  try {
    const { stdout } = await exec('bash', [script(starter), 'start', dir], { maxBuffer: 64 << 20 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
  } catch (err) {
    await stopCeph(starter, dir).catch(() => undefined);
    const e = err as { code?: unknown; stderr?: string; message: string };
    throw new Error(`Ceph RGW did not start (exit ${String(e.code)}): ${(e.stderr || e.message).slice(-4000)}`);
  }
}

/** Stops the daemons `starter` started in `dir`. */
export async function stopCeph(starter: RgwStarter, dir: string): Promise<void> {
  await exec('bash', [script(starter), 'stop', dir]);
}

export interface Rgw {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** `host:port`. */
  hostPort: string;
  stop(): Promise<void>;
}

/** `rgw.sh` in a new temp dir (removed by `stop`). */
export async function startRgw(): Promise<Rgw> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rgw-'));
  const info = await startCeph('rgw.sh', dir);
  return {
    endpoint: info.endpoint,
    accessKey: info.accessKey,
    secretKey: info.secretKey,
    hostPort: info.endpoint.replace(/^http:\/\//, ''),
    async stop() {
      await stopCeph('rgw.sh', dir);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

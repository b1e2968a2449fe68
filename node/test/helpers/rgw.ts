/**
 * A Ceph RGW on loopback for tests and benchmarks (`e2e/rgw/rgw.sh`: one
 * monitor, one memstore OSD, radosgw, from Debian's packages), in a temp
 * dir, with an S3 user of its own. `.ci/run` installs the packages.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(import.meta.dirname, '../../../e2e/rgw/rgw.sh');

export interface Rgw {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** `host:port`. */
  hostPort: string;
  stop(): Promise<void>;
}

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res, rej) => {
    const c = spawn('bash', [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', rej);
    c.on('exit', (code) => res({ code, out, err }));
  });
}

export async function startRgw(): Promise<Rgw> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rgw-'));
  const r = await run(['start', dir]);
  if (r.code !== 0) {
    await run(['stop', dir]);
    throw new Error(`Ceph RGW did not start (exit ${r.code}): ${r.err.slice(-2000)}`);
  }
  const info = JSON.parse(r.out.trim().split('\n').at(-1)!) as { endpoint: string; accessKey: string; secretKey: string };
  return {
    ...info,
    hostPort: info.endpoint.replace(/^http:\/\//, ''),
    async stop() {
      await run(['stop', dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

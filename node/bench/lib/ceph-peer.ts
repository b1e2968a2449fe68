/**
 * The benchmark peer: Ceph RGW over an EC 2+2 pool on four BlueStore OSDs
 * (`e2e/rgw/rgw-ec.sh`, Debian's ceph-mon ceph-mgr ceph-osd radosgw), in a
 * directory of its own, started and stopped by the bench. Its CPU time is
 * read from /proc of its daemons: the data path (radosgw and the four OSDs)
 * is what the bench divides by; the monitor and manager are reported apart.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { processCpuSeconds } from './proc.ts';
import type { CpuSource } from './s3-workload.ts';

const SCRIPT = resolve(import.meta.dirname, '../../../e2e/rgw/rgw-ec.sh');

function script(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res, rej) => {
    const c = spawn('bash', [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8192)));
    c.on('error', rej);
    c.on('exit', (code) => res({ code, out, err }));
  });
}

function cpuOf(pids: number[]): number {
  let s = 0;
  for (const p of pids) s += processCpuSeconds(p);
  return s;
}

export class CephPeer implements CpuSource {
  readonly endpoint: string;
  readonly creds: { accessKey: string; secretKey: string };
  /** radosgw and the OSDs. */
  readonly dataPids: number[];
  /** The monitor and the manager. */
  readonly controlPids: number[];
  readonly #dir: string;

  private constructor(info: { endpoint: string; accessKey: string; secretKey: string; dir: string; pids: Record<string, number> }) {
    this.endpoint = info.endpoint;
    this.creds = { accessKey: info.accessKey, secretKey: info.secretKey };
    this.#dir = info.dir;
    const entries = Object.entries(info.pids);
    this.dataPids = entries.filter(([n]) => n.startsWith('osd.') || n.startsWith('client.rgw')).map(([, p]) => p);
    this.controlPids = entries.filter(([n]) => n.startsWith('mon.') || n.startsWith('mgr.')).map(([, p]) => p);
    if (this.dataPids.length !== 5) throw new Error(`Ceph peer: expected radosgw and 4 OSDs, got ${entries.map(([n]) => n).join(', ')}`);
  }

  /** Whether Debian's Ceph daemons are installed. */
  static available(): boolean {
    return ['ceph-mon', 'ceph-mgr', 'ceph-osd', 'radosgw'].every((b) => existsSync(`/usr/bin/${b}`));
  }

  /** Starts the cluster in `dir` (about a minute on 2 cores). */
  static async start(dir: string): Promise<CephPeer> {
    const r = await script(['start', dir]);
    if (r.code !== 0) {
      await script(['stop', dir]);
      throw new Error(`Ceph RGW did not start (exit ${r.code}): ${r.err}`);
    }
    return new CephPeer(JSON.parse(r.out.trim().split('\n').at(-1)!));
  }

  /** CPU-seconds of radosgw and the OSDs so far. */
  cpuSeconds(): number {
    return cpuOf(this.dataPids);
  }

  /** CPU-seconds of the monitor and manager so far. */
  controlCpuSeconds(): number {
    return cpuOf(this.controlPids);
  }

  async stop(): Promise<void> {
    await script(['stop', this.#dir]);
  }
}

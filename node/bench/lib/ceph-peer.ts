/**
 * The benchmark peer: Ceph RGW over an EC 2+2 pool on four BlueStore OSDs
 * (`e2e/rgw/rgw-ec.sh`, Debian's ceph-mon ceph-mgr ceph-osd radosgw), in a
 * directory of its own, started and stopped by the bench. Its CPU time is
 * read from /proc of its daemons: the data path (radosgw and the four OSDs)
 * is what the bench divides by; the monitor and manager are reported apart.
 */
import { existsSync } from 'node:fs';
import { type RgwInfo, startCeph, stopCeph } from '../../test/helpers/rgw.ts';
import { processCpuSeconds } from './proc.ts';
import type { CpuSource } from './s3-workload.ts';

/** What `rgw-ec.sh start` prints: the gateway and every daemon's pid by its Ceph name. */
type PeerInfo = RgwInfo & { pids: Record<string, number> };

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

  private constructor(info: PeerInfo) {
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
    return new CephPeer(await startCeph<PeerInfo>('rgw-ec.sh', dir));
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
    await stopCeph('rgw-ec.sh', this.#dir);
  }
}

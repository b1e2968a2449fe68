/**
 * Every drive of the cluster as the admin API reports it, measured now:
 * capacity from the drive itself (`statfs` locally, over RPC for remote
 * drives; an offline peer fails fast) and its format state and slot from its
 * `format.json`. Works before format quorum too (degraded start), which is
 * when an operator most needs to see which drives are missing.
 */
import type { AdminDisk } from '../object/admin/types.ts';
import type { DriveFormatState, FormatIO } from '../storage/format.ts';
import { type Endpoint, endpointHostPort } from '../topology/endpoint.ts';
import type { PoolLayout } from '../topology/pool-layout.ts';

export type DriveFormat = 'ok' | 'unformatted' | 'corrupt' | 'foreign' | 'offline';

export interface DriveReport {
  readonly endpoint: string;
  readonly path: string;
  /** `host:port` of the node serving it (`selfId` for a local path). */
  readonly node: string;
  readonly local: boolean;
  readonly pool: number;
  /** Set and index from the drive's format; its command-line position when it has none. */
  readonly set: number;
  readonly slot: number;
  readonly online: boolean;
  readonly format: DriveFormat;
  readonly detail: string | null;
  readonly uuid: string;
  readonly total: number;
  readonly used: number;
  readonly free: number;
}

export interface DriveProbeSource {
  readonly pools: readonly PoolLayout[];
  readonly selfId: string;
  isLocal(ep: Endpoint): boolean;
  diskInfo(ep: Endpoint): Promise<{ online: boolean; total: number; used: number; free: number; id: string }>;
  formatIO(pool: PoolLayout): FormatIO;
  /** The deployment id once format quorum was reached. */
  deploymentId(): string | undefined;
}

function slotOf(st: DriveFormatState): { set: number; slot: number; uuid: string } | undefined {
  if (st.state !== 'formatted') return undefined;
  const e = st.format.erasure;
  for (const [s, row] of e.sets.entries()) {
    const i = row.indexOf(e.this);
    if (i >= 0) return { set: s, slot: i, uuid: e.this };
  }
  return undefined;
}

export async function probeDrives(src: DriveProbeSource, only?: (ep: Endpoint) => boolean): Promise<DriveReport[]> {
  const depId = src.deploymentId();
  const jobs = src.pools.flatMap((pool) => {
    const io = src.formatIO(pool);
    return pool.endpoints.flatMap((ep, i) => {
      if (only !== undefined && !only(ep)) return [];
      return [
        (async (): Promise<DriveReport> => {
          const [info, st] = await Promise.all([
            src.diskInfo(ep).catch(() => ({ online: false, total: 0, used: 0, free: 0, id: '' })),
            io.readFormat(i).catch((err: unknown): DriveFormatState => ({ state: 'offline', reason: err instanceof Error ? err.message : String(err) })),
          ]);
          const pos = slotOf(st);
          let format: DriveFormat;
          let detail: string | null = null;
          if (st.state === 'formatted') {
            format = depId === undefined || st.format.id === depId ? 'ok' : 'foreign';
            if (format === 'foreign') detail = `formatted for deployment ${st.format.id}`;
          } else if (st.state === 'unformatted') {
            format = 'unformatted';
            detail = 'reachable but unformatted: a replaced drive waiting for the set heal to write its format';
          } else {
            format = st.state === 'corrupt' ? 'corrupt' : 'offline';
            detail = st.reason;
          }
          const online = info.online && format !== 'offline';
          if (!info.online && detail === null) detail = 'drive unreachable';
          return {
            endpoint: ep.raw,
            path: ep.path,
            node: endpointHostPort(ep) ?? src.selfId,
            local: src.isLocal(ep),
            pool: pool.index,
            set: pos?.set ?? Math.floor(i / pool.setDriveCount),
            slot: pos?.slot ?? i % pool.setDriveCount,
            online,
            format,
            detail: online && format === 'ok' ? null : detail,
            uuid: pos?.uuid ?? info.id,
            total: info.total,
            used: info.used,
            free: info.free,
          };
        })(),
      ];
    });
  });
  return Promise.all(jobs);
}

/** madmin.Disk of a drive report. */
export function adminDiskOf(d: DriveReport, healing: ReadonlySet<string>): AdminDisk {
  return {
    endpoint: d.endpoint,
    rootDisk: false,
    path: d.path,
    healing: healing.has(d.endpoint),
    scanning: false,
    state: !d.online ? 'offline' : d.format === 'ok' ? 'ok' : d.format === 'unformatted' ? 'unformatted' : d.format === 'corrupt' ? 'corrupt' : 'faulty',
    uuid: d.uuid,
    totalspace: d.total,
    usedspace: d.used,
    availspace: d.free,
    pool_index: d.pool,
    set_index: d.set,
    disk_index: d.slot,
    local: d.local,
  };
}

/**
 * Every drive of the cluster as the admin API reports it, measured now:
 * capacity from the drive itself (`statfs` locally, over RPC for remote
 * drives; an offline peer fails fast) and its format state and slot from its
 * `format.json`. Works before format quorum too (degraded start), which is
 * when an operator most needs to see which drives are missing.
 */
import type { AdminDisk } from '../object/admin/types.ts';
import type { DriveIssue } from '../storage/drive.ts';
import type { DriveFormatState, FormatIO } from '../storage/format.ts';
import { type Endpoint, endpointHostPort, type PoolLayout } from 'svc-topology';

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
  /** `<node>#<device>` of the drive's file system, when its node reports it. */
  readonly filesystem?: string;
  /** Problems the drive's own node reports for it (`DiskInfo.issues`). */
  readonly issues: readonly DriveIssue[];
}

export interface DriveProbeSource {
  readonly pools: readonly PoolLayout[];
  readonly selfId: string;
  isLocal(ep: Endpoint): boolean;
  diskInfo(ep: Endpoint): Promise<{ online: boolean; total: number; used: number; free: number; id: string; mountId?: string; issues?: DriveIssue[] }>;
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
            src.diskInfo(ep).catch(() => ({ online: false, total: 0, used: 0, free: 0, id: '', issues: undefined })),
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
          const node = endpointHostPort(ep) ?? src.selfId;
          // mountId is `<device>:<inode>` of the drive's root: the device names its file system
          const device = 'mountId' in info && typeof info.mountId === 'string' ? info.mountId.split(':')[0] : undefined;
          if (!info.online && detail === null) detail = 'drive unreachable';
          return {
            endpoint: ep.raw,
            path: ep.path,
            node,
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
            ...(device !== undefined && device !== '' ? { filesystem: `${node}#${device}` } : {}),
            issues: online ? (info.issues ?? []) : [],
          };
        })(),
      ];
    });
  });
  return Promise.all(jobs);
}

/** One line per drive issue, for people (`kind: detail`). */
export function issueText(issues: readonly DriveIssue[]): string | undefined {
  return issues.length === 0 ? undefined : issues.map((i) => `${i.kind}: ${i.detail}`).join('; ');
}

/**
 * madmin.Disk of a drive report. A drive that is online but refuses writes
 * (read-only, I/O errors) is `faulty`; one whose damage is being repaired
 * (a recreated bucket folder) is `healing`; `detail` says why.
 */
export function adminDiskOf(d: DriveReport, healing: ReadonlySet<string>): AdminDisk {
  const faulty = d.issues.some((i) => i.kind === 'read-only' || i.kind === 'faulty');
  const detail = issueText(d.issues) ?? d.detail ?? undefined;
  return {
    endpoint: d.endpoint,
    rootDisk: false,
    path: d.path,
    healing: healing.has(d.endpoint) || d.issues.some((i) => i.kind === 'healing'),
    scanning: false,
    state: !d.online ? 'offline' : d.format === 'ok' ? (faulty ? 'faulty' : 'ok') : d.format === 'unformatted' ? 'unformatted' : d.format === 'corrupt' ? 'corrupt' : 'faulty',
    ...(detail !== undefined ? { detail } : {}),
    ...(d.issues.length > 0 ? { issues: d.issues.map((i) => ({ ...i })) } : {}),
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

/**
 * The heal side of the admin API, over the cluster: background heal status
 * (every node's read-repair worker and scanner, asked over peer RPC and
 * summed, MinIO's `BgHealState` merge), replacement recovery (every drive's
 * recovery tracker, read from the drive itself, plus drives waiting without
 * one), and the data usage server info shows.
 */
import { type DriveTracker, decodeTracker, slotKey, TRACKER_FILE } from '../background/heal/drive-healer.ts';
import type { LocalHealInfo } from '../background/healing.ts';
import type { UsageReport } from '../object/usage.ts';
import {
  type BgHealSet,
  type BgHealState,
  type ErasureSetInfo,
  nanos,
  type ReplacementInstance,
  type ReplacementRecoveryStatus,
  rfc3339,
  type ServerInfoMessage,
} from '../object/admin/types.ts';
import type { PoolLayout } from 'svc-topology';
import { adminDiskOf, type DriveReport } from './admin-drives.ts';

export interface AdminHealDeps {
  readonly pools: readonly PoolLayout[];
  readonly nodes: readonly string[];
  readonly selfId: string;
  isOnline(node: string): boolean;
  /** Every drive, measured now. */
  drives(): Promise<DriveReport[]>;
  /** Endpoints being rebuilt (this node's view). */
  healing(): ReadonlySet<string>;
  /** This node's healing, undefined while it does not run (object layer not up). */
  local(): LocalHealInfo | undefined;
  /** Another node's healing; undefined when it cannot be asked. */
  peer(node: string): Promise<LocalHealInfo | undefined>;
  /** A drive's raw file under `.svc.sys` (the recovery tracker). */
  readSys(endpoint: string, path: string): Promise<Uint8Array>;
  /** The scanners' usage (per set too); undefined before the first cycle. */
  usage(): Promise<UsageReport | undefined>;
}

async function allLocal(d: AdminHealDeps): Promise<LocalHealInfo[]> {
  const mine = d.local();
  const infos = await Promise.all(d.nodes.map((n) => (n === d.selfId ? Promise.resolve(mine) : d.isOnline(n) ? d.peer(n) : Promise.resolve(undefined))));
  if (d.nodes.length === 0 && mine) infos.push(mine);
  return infos.filter((i): i is LocalHealInfo => i !== undefined);
}

export async function backgroundHealStatus(d: AdminHealDeps): Promise<BgHealState> {
  const [all, infos, usage] = await Promise.all([d.drives(), allLocal(d), d.usage().catch(() => undefined)]);
  const healing = new Set(d.healing());
  for (const i of infos) for (const e of i.healing) healing.add(e);
  const sets: BgHealSet[] = d.pools.flatMap((p) =>
    Array.from({ length: p.setCount }, (_, s): BgHealSet => {
      const ds = all.filter((x) => x.pool === p.index && x.set === s).sort((a, b) => a.slot - b.slot);
      const any = ds.some((x) => healing.has(x.endpoint));
      const total = usage?.perSet.find((u) => u.pool === p.index && u.set === s)?.objects ?? 0;
      return {
        id: `${p.index}-${s}`,
        pool_index: p.index,
        set_index: s,
        heal_status: any ? 'Healing' : '',
        heal_priority: any ? 'high' : '',
        total_objects: total,
        disks: ds.map((x) => adminDiskOf(x, healing)),
      };
    }),
  );
  const sum = (f: (i: LocalHealInfo) => number) => infos.reduce((a, i) => a + f(i), 0);
  const mrf: BgHealState['mrf'] = {};
  for (const i of infos) {
    for (const [ep, v] of Object.entries(i.background.perDrive)) {
      const e = (mrf[ep] ??= { bytes_healed: 0, items_healed: 0 });
      e.bytes_healed += v.bytes_healed;
      e.items_healed += v.items_healed;
    }
  }
  const last = infos
    .map((i) => i.scanner.lastCycle)
    .filter((c) => c !== undefined)
    .sort((a, b) => b.startedAt - a.startedAt)[0];
  const offline = d.nodes.filter((n) => !d.isOnline(n));
  const queued = sum((i) => i.background.queued);
  const active = sum((i) => i.background.active) + healing.size;
  const running = infos.length > 0;
  return {
    offline_nodes: offline,
    ScannedItemsCount: sum((i) => i.scanner.objectsScanned),
    HealDisks: [...healing].sort(),
    sets,
    mrf,
    sc_parity: { STANDARD: d.pools[0]?.parity.standard ?? 0, REDUCED_REDUNDANCY: d.pools[0]?.parity.rrs ?? 0 },
    state: !running ? 'disabled' : offline.length > 0 ? 'degraded' : queued > 0 || active > 0 ? 'active' : 'idle',
    healQueueLength: queued,
    healActiveTasks: active,
    healRetryingTasks: sum((i) => i.background.retrying),
    itemsHealed: sum((i) => i.background.itemsHealed),
    bytesHealed: sum((i) => i.background.bytesHealed),
    itemsFailed: sum((i) => i.background.itemsFailed),
    mrfDropped: sum((i) => i.background.dropped),
    scanner: {
      cycles: sum((i) => i.scanner.cycles),
      cyclesByResult: {
        success: sum((i) => i.scanner.cyclesByResult.success),
        partial: sum((i) => i.scanner.cyclesByResult.partial),
        error: sum((i) => i.scanner.cyclesByResult.error),
      },
      lastCycleResult: last?.result ?? '',
      lastCycleAt: rfc3339(last === undefined ? 0 : last.startedAt + last.durationMs),
      lastCycleDuration: nanos(last?.durationMs ?? 0),
      healsQueued: sum((i) => i.scanner.healsQueued),
    },
    nodes: infos.map((i) => i.node),
    detail: !running
      ? 'the object layer is not up yet on this node (format quorum pending)'
      : `read-repair and scanner findings are healed in the background, one object at a time per node; ${infos.length} of ${Math.max(1, d.nodes.length)} node(s) answered`,
  };
}

function instanceOf(t: DriveTracker, r: DriveReport | undefined): ReplacementInstance {
  return {
    id: t.id,
    endpoint: t.endpoint,
    pool: t.pool,
    set: t.set,
    slot: t.slot,
    // A tracker still `pending` on a drive that is a member again was formatted by a heal that has not written yet.
    state: t.state,
    reason: t.reason,
    detectedAt: rfc3339(t.detectedAt),
    updatedAt: rfc3339(t.updatedAt),
    finishedAt: rfc3339(t.finishedAt ?? 0),
    healer: t.state === 'pending' ? '' : t.healer,
    objectsScanned: t.objectsScanned,
    objectsHealed: t.objectsHealed ?? 0,
    bytesHealed: t.bytesHealed,
    lastError: t.lastError ?? (r !== undefined && !r.online ? 'drive offline' : null),
  };
}

/**
 * Every replaced drive's recovery: the tracker each drive carries, or, for
 * a drive that is reachable without a format and has none, `pending`.
 */
export async function replacementStatus(d: AdminHealDeps, now: number, firstSeen: Map<string, number>): Promise<ReplacementRecoveryStatus> {
  const all = await d.drives();
  const instances: ReplacementInstance[] = [];
  await Promise.all(
    all.map(async (r) => {
      const raw = r.online ? await d.readSys(r.endpoint, TRACKER_FILE).catch(() => undefined) : undefined;
      const t = raw === undefined ? undefined : decodeTracker(raw);
      // A tracker survives only while the drive keeps it: a drive emptied again is a new instance.
      if (t !== undefined && !(r.format === 'unformatted' && t.state === 'completed')) {
        instances.push(instanceOf(t, r));
        return;
      }
      if (!(r.online && r.format === 'unformatted')) return;
      if (!firstSeen.has(r.endpoint)) firstSeen.set(r.endpoint, now);
      instances.push({
        id: slotKey(r),
        endpoint: r.endpoint,
        pool: r.pool,
        set: r.set,
        slot: r.slot,
        state: 'pending',
        reason: r.detail ?? 'unformatted drive',
        detectedAt: rfc3339(firstSeen.get(r.endpoint)!),
        updatedAt: rfc3339(now),
        finishedAt: rfc3339(0),
        healer: '',
        objectsScanned: 0,
        objectsHealed: 0,
        bytesHealed: 0,
        lastError: null,
      });
    }),
  );
  instances.sort((a, b) => a.pool - b.pool || a.set - b.set || a.slot - b.slot);
  const has = (s: ReplacementInstance['state']) => instances.some((i) => i.state === s);
  return {
    state: has('healing') ? 'healing' : has('pending') ? 'pending' : has('failed') ? 'failed' : 'idle',
    healerAvailable: d.local() !== undefined,
    checkedAt: rfc3339(now),
    instances,
  };
}

/**
 * Server info's `pools` as madmin decodes it: pool index → set index → the
 * set's usage (its newest scan) and capacity (its drives as measured now).
 */
export function erasureSets(
  pools: readonly PoolLayout[],
  drives: readonly DriveReport[],
  usage: UsageReport | undefined,
  healing: ReadonlySet<string>,
): Record<string, Record<string, ErasureSetInfo>> {
  const out: Record<string, Record<string, ErasureSetInfo>> = {};
  for (const p of pools) {
    const sets: Record<string, ErasureSetInfo> = {};
    for (let s = 0; s < p.setCount; s++) {
      const ds = drives.filter((d) => d.pool === p.index && d.set === s);
      const u = usage?.perSet.find((x) => x.pool === p.index && x.set === s);
      sets[String(s)] = {
        id: s,
        rawUsage: u?.rawSize ?? 0,
        rawCapacity: ds.reduce((a, d) => a + d.total, 0),
        usage: u?.size ?? 0,
        objectsCount: u?.objects ?? 0,
        versionsCount: u?.versions ?? 0,
        deleteMarkersCount: u?.deleteMarkers ?? 0,
        healDisks: ds.filter((d) => healing.has(d.endpoint)).length,
      };
    }
    out[String(p.index)] = sets;
  }
  return out;
}

/** Server info's object counts and usage from the scanners' records. */
export function usageFields(u: UsageReport | undefined, reason: string | undefined): Pick<ServerInfoMessage, 'objects' | 'versions' | 'deletemarkers' | 'usage'> & { dataUsage?: ServerInfoMessage['dataUsage'] } {
  if (u === undefined) {
    const error = reason ?? 'not measured yet: no scanner cycle has finished (object counts and usage come from the background scanner)';
    // madmin's counts are not omitempty: 0 with the reason, as MinIO answers
    return { objects: { count: 0, error }, versions: { count: 0, error }, deletemarkers: { count: 0, error }, usage: { size: 0, error } };
  }
  return {
    objects: { count: u.objects },
    versions: { count: u.versions },
    deletemarkers: { count: u.deleteMarkers },
    usage: { size: u.size },
    dataUsage: {
      lastUpdate: rfc3339(u.lastUpdate),
      rawSize: u.rawSize,
      buckets: Object.entries(u.buckets)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, b]) => ({ name, objects: b.objects, versions: b.versions, deleteMarkers: b.deleteMarkers, size: b.size })),
      pools: u.pools.map((p) => ({ id: p.pool, objects: p.objects, versions: p.versions, size: p.size, rawSize: p.rawSize })),
    },
  };
}

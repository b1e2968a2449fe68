/**
 * What the admin client prints for each answer: pure functions from the
 * server's JSON to text (tables with units), shared by one-shot commands
 * and `--watch` frames.
 */
import type {
  ClusterSnapshot,
  DecommissionStatusReport,
  HealResultItem,
  HealTaskStatus,
  PoolStatus,
  RebalanceStatus,
  ServerInfoMessage,
} from '../../object/admin/types.ts';
import { PARTICIPATE_MARGIN } from '../../background/movement/rebalance-plan.ts';
import { formatBytes, formatDuration, formatPercent, formatRate, formatTime, keyValues, progressBar, table } from './format.ts';

export function poolListView(pools: readonly PoolStatus[]): string {
  return table(
    ['ID', 'POOL', 'STATUS', 'DECOMMISSION', 'REBALANCE', 'DRIVES', 'USED', 'SIZE', 'USED %', 'LEADER'],
    pools.map((p) => [
      p.id,
      p.cmdline,
      p.status,
      p.decommissionStatus,
      p.rebalanceStatus,
      `${p.drivesOnline}/${p.drives}`,
      formatBytes(p.usedSize),
      formatBytes(p.totalSize),
      formatPercent(p.used),
      p.leader,
    ]),
    ['right', 'left', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'left'],
  );
}

export function poolStatusView(p: PoolStatus): string {
  const d = p.decommissionInfo;
  return keyValues([
    ['Pool', `${p.id}: ${p.cmdline}`],
    ['Status', p.status],
    ['Leader', p.leader],
    ['Layout', `${p.setCount} set(s) x ${p.setDriveCount} drives, EC:${p.standardParity} (RRS EC:${p.rrsParity})`],
    ['Drives online', `${p.drivesOnline}/${p.drives}`],
    ['Capacity', `${formatBytes(p.usedSize)} used of ${formatBytes(p.totalSize)} (${formatPercent(p.used)}), ${formatBytes(p.currentSize)} free`],
    ['Decommission', d.stage + (d.lastError ? ` (${d.lastError})` : '')],
    ['Rebalance', p.rebalanceStatus],
    ['Last update', formatTime(p.lastUpdate)],
  ]);
}

/** Bytes a drain has to move: what was used when it started. */
function drainTotal(p: DecommissionStatusReport['pools'][number]): number {
  return Math.max(0, p.decommissionInfo.totalSize - p.decommissionInfo.startSize);
}

/** Rates measured between two `--watch` frames, per pool id. */
export interface DrainRates {
  readonly [pool: number]: { readonly bytes: number; readonly objects: number } | undefined;
}

/**
 * One row per pool: state, progress, objects and bytes moved, failures, the
 * rate (between two watch frames, else the average since the drain began),
 * objects per second, and the ETA from the bytes left at that rate.
 */
export function decommissionView(r: DecommissionStatusReport, rates: DrainRates = {}): string {
  const rows = r.pools.map((p) => {
    const d = p.decommissionInfo;
    const total = drainTotal(p);
    const fraction = p.status === 'complete' ? 1 : total > 0 ? Math.min(1, d.bytesDecommissioned / total) : 0;
    const measured = rates[p.id];
    const average = d.elapsedSeconds > 0 ? { bytes: d.bytesDecommissioned / d.elapsedSeconds, objects: d.objectsDecommissioned / d.elapsedSeconds } : undefined;
    // Progress is persisted every few seconds: two frames may see the same record.
    const rate = p.status === 'running' && measured !== undefined && measured.bytes > 0 ? measured : average;
    const eta = rate !== undefined && rate.bytes > 0 && p.status === 'running' ? formatDuration((Math.max(0, total - d.bytesDecommissioned) / rate.bytes) * 1000) : '-';
    const state = d.waitingReason !== null && p.status === 'running' ? `running (${d.waitingReason})` : p.status;
    return [
      p.id,
      p.cmdline,
      state,
      p.status === 'none' ? '-' : progressBar(fraction, 16),
      d.objectsDecommissioned,
      formatBytes(d.bytesDecommissioned),
      d.objectsDecommissionedFailed > 0 ? `${d.objectsDecommissionedFailed} (${formatBytes(d.bytesDecommissionedFailed)})` : '0',
      rate !== undefined ? formatRate(rate.bytes) : '-',
      rate !== undefined ? `${rate.objects.toFixed(rate.objects >= 10 ? 0 : 1)}/s` : '-',
      eta,
      formatTime(d.startTime),
    ];
  });
  const notes = r.pools.filter((p) => p.decommissionInfo.lastError !== null).map((p) => `pool ${p.id}: ${p.decommissionInfo.lastError}`);
  return [
    table(
      ['ID', 'POOL', 'STATUS', 'PROGRESS', 'OBJECTS', 'MOVED', 'FAILED', 'RATE', 'OBJ/S', 'ETA', 'STARTED'],
      rows,
      ['right', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'left'],
    ),
    ...notes,
  ].join('\n');
}

export function rebalanceView(r: RebalanceStatus): string {
  const head = `Rebalance ${r.id === '' ? '(none started)' : r.id}: ${r.status}${r.stoppedAt.startsWith('0001') ? '' : `, stopped at ${formatTime(r.stoppedAt)}`}`;
  const rows = r.pools.map((p) => {
    const elapsed = p.progress.elapsed / 1e6;
    const eta = p.progress.eta / 1e6;
    const moving = p.status === 'active' || p.status === 'stopping';
    return [
      p.id,
      p.cmdline,
      p.status,
      formatPercent(p.used),
      moving ? progressBar(elapsed + eta > 0 ? elapsed / (elapsed + eta) : 0, 16) : '-',
      p.progress.objects,
      formatBytes(p.progress.bytes),
      elapsed > 0 ? formatRate((p.progress.bytes * 1000) / elapsed) : '-',
      elapsed > 0 ? formatDuration(elapsed) : '-',
      moving && eta > 0 ? formatDuration(eta) : '-',
    ];
  });
  const warnings = r.pools.filter((p) => p.lastError !== null || p.cleanupWarnings.count > 0);
  const notes = warnings.map((p) => `pool ${p.id}: ${p.lastError ?? ''}${p.cleanupWarnings.count > 0 ? ` ${p.cleanupWarnings.count} cleanup warning(s), last: ${p.cleanupWarnings.lastMsg}` : ''}`);
  if (r.stopPropagation.failedPeers.length > 0) notes.push(`stop not acknowledged by: ${r.stopPropagation.failedPeers.join(', ')}`);
  if (r.id !== '' && r.pools.length > 0 && r.pools.every((p) => p.participating === false)) {
    notes.push(`nothing to move: no pool was more than ${Math.round(PARTICIPATE_MARGIN * 100)} % above the mean fill when the rebalance started`);
  }
  return [
    head,
    table(
      ['ID', 'POOL', 'STATUS', 'USED %', 'PROGRESS', 'OBJECTS', 'MOVED', 'RATE', 'ELAPSED', 'ETA'],
      rows,
      ['right', 'left', 'left', 'right', 'left', 'right', 'right', 'right', 'right', 'right'],
    ),
    ...notes,
  ].join('\n');
}

export function infoView(m: ServerInfoMessage): string {
  const servers = table(
    ['SERVER', 'STATE', 'UPTIME', 'VERSION', 'DRIVES', 'MEMORY'],
    m.servers.map((s) => [
      s.endpoint,
      s.state,
      s.state === 'online' ? formatDuration(s.uptime * 1000) : '-',
      s.version || '-',
      `${s.drives.filter((d) => d.state === 'ok').length}/${s.drives.length}`,
      s.state === 'online' ? formatBytes(s.mem_stats.rss) : '-',
    ]),
    ['left', 'left', 'right', 'left', 'right', 'right'],
  );
  const drives = table(
    ['DRIVE', 'POOL', 'SET', 'SLOT', 'STATE', 'USED', 'SIZE', 'USED %'],
    m.servers.flatMap((s) =>
      s.drives.map((d) => [
        d.endpoint,
        d.pool_index,
        d.set_index,
        d.disk_index,
        d.state,
        formatBytes(d.usedspace),
        formatBytes(d.totalspace),
        d.totalspace > 0 ? formatPercent(d.usedspace / d.totalspace) : '-',
      ]),
    ),
    ['left', 'right', 'right', 'right', 'left', 'right', 'right', 'right'],
  );
  // What the drives' nodes saw go wrong with them (full, read-only, a recreated bucket folder being healed).
  const driveNotes = m.servers.flatMap((s) => s.drives.filter((d) => d.issues !== undefined && d.issues.length > 0).map((d) => `  ${d.endpoint}: ${d.issues!.map((i) => `${i.kind}: ${i.detail}`).join('; ')}`));
  const usableTotal = m.poolCapacity.reduce((a, p) => a + p.usableTotal, 0);
  const usableFree = m.poolCapacity.reduce((a, p) => a + p.usableFree, 0);
  const used = m.poolCapacity.reduce((a, p) => a + p.usableUsed, 0);
  const online = m.backend.onlineDisks;
  const offline = m.backend.offlineDisks;
  return [
    `Deployment ${m.deploymentID || '(not formatted yet)'}, ${m.mode}, region ${m.region}`,
    servers,
    drives,
    ...(driveNotes.length > 0 ? ['Drive issues:', ...driveNotes] : []),
    `${m.servers.filter((s) => s.state === 'online').length}/${m.servers.length} servers online, ${online} drive(s) online, ${offline} offline; ${m.buckets.count} bucket(s)`,
    `Usable capacity: ${formatBytes(used)} used of ${formatBytes(usableTotal)} (${formatPercent(usableTotal > 0 ? used / usableTotal : 0)}), ${formatBytes(usableFree)} free`,
    ...usageLines(m),
  ].join('\n');
}

/** What the scanners counted (or why nothing is counted yet). */
function usageLines(m: ServerInfoMessage): string[] {
  const u = m.dataUsage;
  if (m.objects.error !== undefined || u === undefined) return [`Objects and data usage: ${m.objects.error ?? 'not measured yet'}`];
  const lines = [
    `Objects: ${m.objects.count} (${m.versions.count ?? 0} versions, ${m.deletemarkers.count ?? 0} delete markers), ${formatBytes(m.usage.size ?? 0)} of data (${formatBytes(u.rawSize)} on the drives); scanned ${formatTime(u.lastUpdate)}`,
  ];
  if (u.buckets.length > 0) {
    lines.push(
      table(
        ['BUCKET', 'OBJECTS', 'VERSIONS', 'DELETE MARKERS', 'SIZE'],
        u.buckets.map((b) => [b.name, b.objects, b.versions, b.deleteMarkers, formatBytes(b.size)]),
        ['left', 'right', 'right', 'right', 'right'],
      ),
    );
  }
  return lines;
}

function drivesSummary(d: HealResultItem['before']): string {
  const ok = d.drives.filter((x) => x.state === 'ok').length;
  const bad = d.drives.filter((x) => x.state !== 'ok').map((x) => x.state);
  const counts = [...new Set(bad)].map((st) => `${bad.filter((b) => b === st).length} ${st}`);
  return `${ok}/${d.drives.length} ok${counts.length > 0 ? ` (${counts.join(', ')})` : ''}`;
}

/**
 * A heal sequence: its state and counters, and the results so far
 * (`items`: every item popped by this client, newest last; the last 20 are shown).
 */
export function healView(st: HealTaskStatus, items: readonly HealResultItem[]): string {
  const p = st.Progress;
  const head = keyValues([
    ['Heal', `${st.Path === '' ? '/ (the whole cluster)' : st.Path}  (client token ${st.ClientToken})`],
    ['State', `${st.Summary}${st.Detail ? `: ${st.Detail}` : ''}`],
    ['Started', `${formatTime(st.StartTime)}, running for ${formatDuration(p.elapsed / 1e6)}`],
    ['Scanned', `${p.objectsScanned} object(s) in ${p.bucketsScanned} bucket(s)${p.currentBucket ? `, now at ${p.currentBucket}/${p.currentObject}` : ''}`],
    ['Results', `${p.objectsHealed} healed, ${p.objectsFailed} failed, ${p.objectsRefused} refused, ${p.objectsDangling} dangling; ${formatBytes(p.bytesHealed)} rebuilt`],
    ['Settings', `${st.Settings.dryRun ? 'dry run, ' : ''}scan ${st.Settings.scanMode === 2 ? 'deep' : 'normal'}${st.Settings.remove ? ', remove dangling' : ''}${st.Settings.pool !== undefined ? `, pool ${st.Settings.pool}` : ''}${st.Settings.set !== undefined ? ` set ${st.Settings.set}` : ''}`],
  ]);
  if (items.length === 0) return `${head}\nNo item needed attention so far.`;
  const shown = items.slice(-20);
  const rows = shown.map((i) => [i.type, i.object === '' ? i.bucket : `${i.bucket}/${i.object}`, i.outcome, drivesSummary(i.before), drivesSummary(i.after), i.detail]);
  return `${head}\n${items.length > shown.length ? `(last ${shown.length} of ${items.length} items)\n` : ''}${table(['TYPE', 'ITEM', 'RESULT', 'BEFORE', 'AFTER', 'DETAIL'], rows)}`;
}

export function snapshotView(s: ClusterSnapshot): string {
  const nodes = table(
    ['NODE', 'STATE', 'LEADS POOLS', 'DRIVES'],
    s.nodes.map((n) => [n.id + (n.self ? ' (answered)' : ''), n.state, n.leaderOfPools.join(', ') || '-', n.drives]),
    ['left', 'left', 'left', 'right'],
  );
  const pools = table(
    ['POOL', 'CMDLINE', 'STATUS', 'SETS', 'EC', 'USABLE', 'FREE', 'LEADER'],
    s.pools.map((p) => [p.id, p.cmdline, p.status, `${p.setCount}x${p.setDriveCount}`, `${p.standardParity}`, formatBytes(p.usableTotal), formatBytes(p.usableFree), p.leader]),
    ['right', 'left', 'left', 'right', 'right', 'right', 'right', 'left'],
  );
  const drives = table(
    ['DRIVE', 'NODE', 'SLOT', 'STATE', 'USED', 'SIZE', 'DETAIL'],
    s.pools.flatMap((p) => p.sets.flatMap((set) => set.drives.map((d) => [d.endpoint, d.node, `${d.slot.pool}/${d.slot.set}/${d.slot.index}`, d.state, formatBytes(d.used), formatBytes(d.total), d.detail ?? '']))),
    ['left', 'left', 'left', 'left', 'right', 'right', 'left'],
  );
  const sum = s.summary;
  return [
    `Cluster ${s.deploymentId || '(not formatted yet)'} as seen by ${s.node} at ${formatTime(s.generatedAt)}: ${s.readiness.ready ? 'ready' : `degraded (${s.readiness.degradedReasons.join(', ') || 'starting'})`}`,
    nodes,
    pools,
    drives,
    `${sum.nodesOnline}/${sum.nodes} nodes, ${sum.drivesOnline}/${sum.drives} drives online (${sum.drivesHealing} healing); usable ${formatBytes(sum.usableTotal)}, free ${formatBytes(sum.usableFree)}`,
  ].join('\n');
}

/**
 * Overview: is the node healthy, degraded or not ready, and why (readiness,
 * `degradedReasons`, offline drives and nodes); capacity used and usable
 * with a chart; the alert conditions of SPEC.md; every node.
 */
import type { AlertView, CapacityView, OverviewResponse } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { h, replaceContent, svg } from '../dom.js';
import { formatBytes, formatDuration, formatPercent, plural } from '../format.js';
import { poll } from '../poll.js';
import { badge, errorBox, facts, loading, pageHeader, section, table, time, type Tone, usage } from '../ui.js';

const HEALTH_TONE: Record<OverviewResponse['health']['state'], Tone> = { healthy: 'ok', degraded: 'warn', 'not-ready': 'bad' };
const ALERT_TONE: Record<AlertView['state'], Tone> = { ok: 'ok', pending: 'warn', firing: 'bad', unavailable: 'idle' };
const ALERT_WORD: Record<AlertView['state'], string> = { ok: 'OK', pending: 'Pending', firing: 'Firing', unavailable: 'Not measured' };

/** Usable capacity per pool as horizontal bars (used / free), with a text equivalent. */
export function capacityChart(c: CapacityView): HTMLElement {
  const rows = [...c.pools.map((p) => ({ label: `Pool ${p.id}`, used: p.usableUsed, total: p.usableTotal })), { label: 'All pools', used: c.usableUsed, total: c.usableTotal }];
  const rowH = 34;
  const labelW = 90;
  const barW = 400;
  const height = rows.length * rowH + 8;
  const chart = svg(
    'svg',
    { viewBox: `0 0 ${labelW + barW + 190} ${height}`, class: 'chart', role: 'img', 'aria-labelledby': 'capacity-chart-title' },
    svg('title', { id: 'capacity-chart-title' }, `Usable capacity used: ${rows.map((r) => `${r.label} ${formatPercent(r.total > 0 ? r.used / r.total : 0)}`).join(', ')}`),
    ...rows.map((r, i) => {
      const y = 4 + i * rowH;
      const f = r.total > 0 ? Math.min(1, r.used / r.total) : 0;
      return svg(
        'g',
        { class: i === rows.length - 1 ? 'chart-row chart-total' : 'chart-row' },
        svg('text', { x: 0, y: y + 19, class: 'chart-label' }, r.label),
        svg('rect', { x: labelW, y: y + 4, width: barW, height: 20, rx: 3, class: 'chart-free' }),
        svg('rect', { x: labelW, y: y + 4, width: Math.max(f > 0 ? 2 : 0, f * barW), height: 20, rx: 3, class: f >= c.alertFraction ? 'chart-used chart-alert' : 'chart-used' }),
        svg('line', { x1: labelW + c.alertFraction * barW, x2: labelW + c.alertFraction * barW, y1: y + 1, y2: y + 27, class: 'chart-threshold' }),
        svg('text', { x: labelW + barW + 10, y: y + 19, class: 'chart-value' }, `${formatBytes(r.used)} / ${formatBytes(r.total)}`),
      );
    }),
  );
  return h(
    'figure',
    { class: 'capacity-chart' },
    chart,
    h('figcaption', null, `Usable capacity (after parity) used per pool; the mark is the alert threshold (${formatPercent(c.alertFraction)} of raw capacity).`),
  );
}

function alertItem(a: AlertView): HTMLElement {
  return h(
    'li',
    { class: `alert alert-${a.state}`, id: `alert-${a.id}` },
    h('div', { class: 'alert-head' }, badge(ALERT_TONE[a.state], ALERT_WORD[a.state]), ' ', h('strong', null, a.title)),
    h('p', { class: 'alert-rule' }, 'Condition: ', a.rule),
    h('p', null, a.detail),
    a.state === 'firing' || a.state === 'pending' ? h('p', { class: 'alert-action' }, h('strong', null, 'What to do: '), a.action) : null,
  );
}

function view(o: OverviewResponse): HTMLElement[] {
  const r = o.readiness;
  const firing = o.alerts.filter((a) => a.state === 'firing').length;
  const pending = o.alerts.filter((a) => a.state === 'pending').length;
  // readiness lists what blocks quorum; a ready node can still serve with less redundancy: say so there too
  const reduced = r.ready && o.health.state === 'degraded' ? o.health.problems : [];
  return [
    h(
      'section',
      { class: `card health health-${o.health.state}`, 'aria-labelledby': 'health-title', id: 'node-health' },
      h('h2', { id: 'health-title' }, 'Node health'),
      h('p', { class: 'health-state' }, badge(HEALTH_TONE[o.health.state], o.health.summary, { id: 'health-state', 'data-state': o.health.state })),
      o.health.problems.length > 0 ? h('ul', { class: 'problems' }, ...o.health.problems.map((p) => h('li', null, p))) : null,
      facts([
        ['Drives', `${o.drives.online} of ${o.drives.total} online${o.drives.offline > 0 ? `, ${o.drives.offline} offline` : ''}${o.drives.healing > 0 ? `, ${o.drives.healing} healing` : ''}`],
        ['Nodes', `${o.nodes.filter((n) => n.state === 'online').length} of ${o.nodes.length} online`],
        ['Alerts', `${firing > 0 ? `${plural(firing, 'alert')} firing` : 'none firing'}${pending > 0 ? `, ${pending} pending` : ''}`],
      ]),
    ),
    section(
      'Readiness',
      'readiness-title',
      h('p', null, badge(r.ready ? 'ok' : 'bad', r.ready ? 'Ready' : `Not ready${r.pending ? ` (waiting for ${r.pending.replace(/_/g, ' ')})` : ''}`, { id: 'readiness-state' }), ' ', h('span', { class: 'muted' }, `status “${r.status}”`)),
      r.degradedReasons.length > 0 || reduced.length > 0
        ? h(
            'ul',
            { class: 'reasons', id: 'degraded-reasons' },
            ...r.degradedReasons.map((d) => h('li', null, h('code', null, d.reason), ' — ', d.meaning)),
            ...reduced.map((p) => h('li', null, 'Ready, with reduced redundancy: ', p)),
          )
        : h('p', { class: 'muted', id: 'degraded-reasons' }, 'No degraded reasons.'),
      table(
        'Readiness of each dependency',
        ['Dependency', 'State', 'Detail'],
        Object.entries(r.details).map(([k, d]) => [k, badge(d.ready ? 'ok' : 'bad', d.status), d.detail ?? '']),
      ),
    ),
    section(
      'Capacity',
      'capacity-title',
      facts([
        ['Usable', usage(o.capacity.usableUsed, o.capacity.usableTotal, 'Usable capacity used', o.capacity.alertFraction)],
        ['Raw', usage(o.capacity.rawUsed, o.capacity.rawTotal, 'Raw capacity used', o.capacity.alertFraction)],
      ]),
      capacityChart(o.capacity),
      o.capacity.sharedFilesystems.length > 0
        ? h(
            'div',
            { class: 'notice', id: 'shared-filesystems', role: 'note' },
            h(
              'p',
              null,
              h('strong', null, `${plural(o.capacity.sharedFilesystems.reduce((n, f) => n + f.drives.length, 0), 'drive')} share ${plural(o.capacity.sharedFilesystems.length, 'file system')}: `),
              `raw capacity counts each such file system once per drive, so it reads ${formatBytes(o.capacity.rawTotal)} where the disks hold ${formatBytes(o.capacity.rawTotalDistinct)}. Losing that disk loses every drive on it at once: give each drive a disk of its own.`,
            ),
            h('ul', null, ...o.capacity.sharedFilesystems.map((f) => h('li', null, `${f.node}: ${f.drives.join(', ')} (${formatBytes(f.total)})`))),
          )
        : null,
    ),
    section('Alerts', 'alerts-title', h('ul', { class: 'alerts' }, ...o.alerts.map(alertItem))),
    section(
      'Notification targets',
      'notify-title',
      o.notifications === undefined
        ? h('p', { class: 'muted' }, 'Not available (the admin API did not answer).')
        : o.notifications.length === 0
          ? h('p', { class: 'muted', id: 'notify-targets' }, 'No bucket notification targets on this node (SVC_NOTIFY_* variables or svc admin notify set).')
          : table(
              'Bucket notification targets of this node',
              ['Target', 'State', 'Queued', 'Delivered', 'Last error'],
              o.notifications.map((t) => [
                h('code', null, t.arn),
                badge(t.online ? 'ok' : 'bad', t.online ? 'online' : 'offline'),
                `${t.queued} of ${t.queueLimit}`,
                String(t.delivered),
                t.lastError ?? '–',
              ]),
            ),
    ),
    section(
      'Nodes',
      'nodes-title',
      table(
        'Nodes of the cluster',
        ['Node', 'State', 'Drives', 'Leads pools', 'Up for', 'Version'],
        o.nodes.map((n) => [
          h('span', null, n.id, n.self ? h('span', { class: 'muted' }, ' (this node)') : null),
          badge(n.state === 'online' ? 'ok' : 'bad', n.state),
          n.drivesOffline > 0 ? `${n.drives} (${n.drivesOffline} offline)` : String(n.drives),
          n.leaderOfPools.length > 0 ? n.leaderOfPools.map((id) => `pool ${id}`).join(', ') : '–',
          formatDuration(n.uptimeSeconds),
          n.version ?? '–',
        ]),
      ),
    ),
    h('p', { class: 'muted updated' }, 'Updated ', time(o.generatedAt), ` · deployment ${o.deploymentId || 'not formatted yet'}`),
  ];
}

export function renderOverview(main: HTMLElement): () => void {
  const body = h('div', { class: 'page-body' }, loading('the cluster'));
  main.replaceChildren(pageHeader('Overview', 'Health, capacity and alerts of this cluster, as this node sees it.'), body);
  return poll(async (background) => {
    try {
      replaceContent(body, ...view(await api<OverviewResponse>('GET', 'overview', undefined, {}, { background })));
    } catch (err) {
      replaceContent(body, errorBox(err));
    }
  }, () => 5000);
}

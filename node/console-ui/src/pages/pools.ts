/**
 * Pools: every pool with its state, usage and drives (per erasure set),
 * decommission start / cancel / clear and rebalance start / stop behind a
 * confirmation, and live progress (bytes and objects moved, rate, ETA).
 */
import type { PoolsResponse, PoolView } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { announce, type Child, h, replaceContent } from '../dom.js';
import { formatBytes, formatCount, formatDuration, formatPercent, formatRate, plural } from '../format.js';
import { poll } from '../poll.js';
import { badge, confirmDialog, errorBox, facts, loading, pageHeader, section, table, time, type Tone, usage } from '../ui.js';

const LIFECYCLE_TONE: Record<string, Tone> = { active: 'ok', decommissioning: 'info', decommissioned: 'idle', blocked: 'warn', rebalancing: 'info', unknown: 'idle' };
const DECOM_WORDS: Record<string, [Tone, string]> = {
  none: ['idle', 'Not decommissioned'],
  queued: ['info', 'Queued: waits for the pool ahead of it'],
  running: ['info', 'Draining'],
  complete: ['ok', 'Complete: the pool holds no objects and can be removed from the command line'],
  failed: ['bad', 'Failed'],
  canceled: ['warn', 'Canceled'],
};

function driveTone(state: string): Tone {
  return state === 'online' ? 'ok' : state === 'healing' ? 'info' : 'bad';
}

let busy = false;

/** Runs an action after confirmation; errors land in `out`. */
async function act(out: HTMLElement, confirm: Parameters<typeof confirmDialog>[0], call: () => Promise<unknown>, done: string, refresh: () => void): Promise<void> {
  if (busy || !(await confirmDialog(confirm))) return;
  busy = true;
  out.replaceChildren(h('p', { role: 'status' }, 'Working…'));
  try {
    await call();
    out.replaceChildren(h('p', { role: 'status', class: 'success' }, done));
    // kept through the next refresh, then only while the state it reported on stays the same
    out.dataset.status = 'after-action';
    announce(done);
  } catch (err) {
    out.replaceChildren(errorBox(err));
  } finally {
    busy = false;
    refresh();
  }
}

/** A button that asks for confirmation, then runs `call`; results and errors go to `out`. */
function actionButton(out: HTMLElement, refresh: () => void) {
  return (id: string, label: string, cls: string, confirm: Parameters<typeof confirmDialog>[0], call: () => Promise<unknown>, done: string, disabled = false) =>
    h('button', { type: 'button', class: cls, id, disabled, onclick: () => void act(out, confirm, call, done, refresh) }, label);
}

function drainBlock(p: PoolView): Child {
  const s = p.status;
  if (s === null) return null;
  const d = s.decommissionInfo;
  const [tone, words] = DECOM_WORDS[s.decommissionStatus] ?? ['idle', s.decommissionStatus];
  const g = p.drain;
  return h(
    'div',
    { class: 'drain', id: `drain-${s.id}` },
    h('h4', null, 'Decommission'),
    h('p', null, badge(tone, words, { id: `decom-state-${s.id}`, 'data-state': s.decommissionStatus }), d.waitingReason ? h('span', { class: 'muted' }, ` (${d.waitingReason.replace(/_/g, ' ')})`) : null),
    g
      ? h(
          'div',
          { class: 'progress-block' },
          h('progress', { id: `decom-progress-${s.id}`, max: 1, value: g.fraction, 'aria-label': `Decommission of pool ${s.id}: ${formatPercent(g.fraction)}` }),
          facts([
            // the total is an estimate (used space when the drain began): shown while it runs
            ['Moved', `${formatBytes(g.movedBytes)}${s.decommissionStatus === 'running' && g.totalBytes >= g.movedBytes ? ` of about ${formatBytes(g.totalBytes)}` : ''} (${formatPercent(g.fraction)}), ${formatCount(d.objectsDecommissioned)} objects`],
            ['Rate', `${formatRate(g.bytesPerSecond)}${g.objectsPerSecond !== null ? `, ${g.objectsPerSecond.toFixed(g.objectsPerSecond >= 10 ? 0 : 1)} objects/s` : ''}`],
            ['Time left', s.decommissionStatus === 'running' ? (g.etaSeconds !== null ? `about ${formatDuration(g.etaSeconds)}` : 'measuring…') : '–'],
            ['Running for', formatDuration(g.elapsedSeconds)],
            ['Started', time(d.startTime)],
            ['Failed', d.objectsDecommissionedFailed > 0 ? `${formatCount(d.objectsDecommissionedFailed)} objects (${formatBytes(d.bytesDecommissionedFailed)})` : 'none'],
            ...(d.bucket && s.decommissionStatus === 'running' ? ([['Now at', `${d.bucket}/${d.object}`]] as const) : []),
          ]),
        )
      : null,
    d.lastError ? h('p', { class: 'error-inline', role: 'status' }, h('strong', null, 'Last error: '), d.lastError) : null,
  );
}

function poolCard(p: PoolView, r: PoolsResponse, refresh: () => void): HTMLElement {
  const L = p.layout;
  const out = h('div', { class: 'action-result', id: `pool-result-${L.id}` });
  const usedBytes = p.status ? p.status.usedSize : L.rawTotal > 0 ? Math.round((L.rawUsed * L.usableTotal) / L.rawTotal) : 0;
  const totalBytes = p.status ? p.status.totalSize : L.usableTotal;
  const online = L.sets.reduce((n, s) => n + s.drivesOnline, 0);
  const total = L.sets.reduce((n, s) => n + s.drives.length, 0);
  const buttons: HTMLElement[] = [];
  const button = actionButton(out, refresh);
  const canDrain = r.capabilities.decommission.implemented;
  if (p.actions.decommission) {
    buttons.push(
      button(
        `decommission-${L.id}`,
        `Decommission pool ${L.id}…`,
        'button button-danger',
        {
          title: `Decommission pool ${L.id}?`,
          body: h(
            'div',
            null,
            h('p', null, `Pool ${L.id} (`, h('code', null, L.cmdline), ') stops taking new objects, and every object on it is moved to the other pools.'),
            h(
              'p',
              null,
              p.stored === null
                ? `How much it holds is not counted yet (no scanner cycle has finished); its drives use ${formatBytes(usedBytes)} of their file systems.`
                : `It holds ${formatBytes(p.stored.size)} in ${formatCount(p.stored.objects)} objects (${formatCount(p.stored.versions)} versions, counted by the scanner at ${new Date(p.stored.countedAt).toLocaleString()}); the other pools need at least 1.3 times that free.`,
            ),
            h('p', null, 'When it completes, remove the pool from the server’s command line. It can be canceled; what was moved stays moved.'),
          ),
          confirmLabel: `Decommission pool ${L.id}`,
          danger: true,
          typeToConfirm: String(L.id),
        },
        () => api('POST', `pools/${L.id}/decommission`),
        `Decommission of pool ${L.id} started.`,
        !canDrain,
      ),
    );
    if (!canDrain) buttons.push(h('p', { class: 'muted', id: `decommission-note-${L.id}` }, 'This build has no decommission worker yet: pools cannot be drained.'));
  }
  if (p.actions.cancel) {
    buttons.push(
      button(
        `cancel-${L.id}`,
        'Cancel decommission…',
        'button',
        { title: `Cancel the decommission of pool ${L.id}?`, body: 'The drain stops. Objects already moved stay on the other pools; the pool stays closed to new objects until you clear the record.', confirmLabel: 'Cancel decommission' },
        () => api('POST', `pools/${L.id}/cancel`),
        `Decommission of pool ${L.id} canceled.`,
      ),
    );
  }
  if (p.actions.clear) {
    buttons.push(
      button(
        `clear-${L.id}`,
        'Clear decommission record…',
        'button',
        { title: `Clear the decommission record of pool ${L.id}?`, body: 'The failed or canceled record is removed and the pool takes new objects again. No data moves back.', confirmLabel: 'Clear record' },
        () => api('POST', `pools/${L.id}/clear`),
        `Decommission record of pool ${L.id} cleared.`,
      ),
    );
  }
  if (!r.capabilities.decommission.possible && r.capabilities.decommission.reason) buttons.push(h('p', { class: 'muted' }, `Decommission is not possible here: ${r.capabilities.decommission.reason}.`));
  return h(
    'section',
    { class: 'card pool', id: `pool-${L.id}`, 'aria-labelledby': `pool-title-${L.id}` },
    h(
      'div',
      { class: 'card-head' },
      h('h2', { id: `pool-title-${L.id}` }, `Pool ${L.id}`),
      badge(LIFECYCLE_TONE[L.status] ?? 'idle', L.status, { id: `pool-status-${L.id}` }),
    ),
    h('p', null, h('code', { class: 'cmdline' }, L.cmdline)),
    facts([
      ['Layout', `${plural(L.setCount, 'erasure set')} of ${L.setDriveCount} drives, parity EC:${L.standardParity} (STANDARD), EC:${L.rrsParity} (RRS)`],
      ['Drives', `${online} of ${total} online`],
      ['Usage', usage(usedBytes, totalBytes, `Pool ${L.id} usable capacity used`)],
      [
        'Stored',
        h(
          'span',
          { id: `pool-stored-${L.id}` },
          p.stored === null
            ? 'not counted yet: no scanner cycle has finished'
            : h('span', null, `${formatBytes(p.stored.size)} in ${formatCount(p.stored.objects)} objects (counted `, time(new Date(p.stored.countedAt).toISOString()), ')'),
        ),
      ],
      ['Leader', L.leader],
    ]),
    drainBlock(p),
    buttons.length > 0 ? h('div', { class: 'button-row' }, ...buttons) : null,
    out,
    ...L.sets.map((set) =>
      h(
        'div',
        { class: 'set' },
        h(
          'h3',
          null,
          `Set ${set.id}: `,
          badge(set.readable && set.writable ? (set.drivesOnline === set.drives.length ? 'ok' : 'warn') : 'bad', `${set.drivesOnline} of ${set.drives.length} drives online`),
          h('span', { class: 'muted' }, ` · reads need ${set.readQuorum}, writes ${set.writeQuorum}${set.readable ? '' : ' · cannot read'}${set.writable ? '' : ' · cannot write'}`),
        ),
        table(
          `Drives of pool ${L.id}, set ${set.id}`,
          ['#', 'Drive', 'Node', 'State', 'Used', 'Detail'],
          set.drives.map((d) => [
            String(d.slot.index),
            h('code', null, d.endpoint),
            d.node,
            badge(driveTone(d.state), d.state, { class: `badge badge-${driveTone(d.state)} drive-state`, 'data-endpoint': d.endpoint, 'data-state': d.state }),
            d.total > 0 ? usage(d.used, d.total, `Drive ${d.endpoint} used`) : '–',
            d.detail ?? '',
          ]),
          { id: `drives-${L.id}-${set.id}` },
        ),
      ),
    ),
  );
}

function rebalanceCard(r: PoolsResponse, refresh: () => void): HTMLElement {
  const out = h('div', { class: 'action-result', id: 'rebalance-result' });
  const reb = r.rebalance;
  const buttons: HTMLElement[] = [];
  const button = actionButton(out, refresh);
  if (r.rebalanceActions.start) {
    buttons.push(
      button(
        'rebalance-start',
        'Start rebalance…',
        'button',
        { title: 'Start a rebalance?', body: 'Objects move from fuller pools to emptier ones until each pool is about equally full. Clients keep working while it runs; you can stop it at any time.', confirmLabel: 'Start rebalance' },
        () => api('POST', 'rebalance/start'),
        'Rebalance started.',
        !r.capabilities.rebalance.implemented,
      ),
    );
    if (!r.capabilities.rebalance.implemented) buttons.push(h('p', { class: 'muted', id: 'rebalance-note' }, 'This build has no rebalance worker yet: objects cannot be moved between pools.'));
  }
  if (r.rebalanceActions.stop) {
    buttons.push(button('rebalance-stop', 'Stop rebalance…', 'button', { title: 'Stop the rebalance?', body: 'Objects moved so far stay where they are.', confirmLabel: 'Stop rebalance' }, () => api('POST', 'rebalance/stop'), 'Rebalance stopping.'));
  }
  const caps = r.capabilities.rebalance;
  out.dataset.status = reb?.status ?? '';
  return section(
    'Rebalance',
    'rebalance-title',
    reb === null
      ? h('p', { class: 'muted' }, 'The rebalance record cannot be read right now.')
      : h(
          'div',
          null,
          h('p', null, badge(reb.status === 'running' ? 'info' : reb.status === 'failed' ? 'bad' : 'idle', reb.status, { id: 'rebalance-state' }), reb.id ? h('span', { class: 'muted' }, ` · id ${reb.id}`) : null),
          reb.id
            ? table(
                'Rebalance progress per pool',
                ['Pool', 'State', 'Used', 'Moved', 'Rate', 'Time left', 'Last error'],
                reb.pools.map((p) => {
                  const elapsed = p.progress.elapsed / 1e9;
                  return [
                    String(p.id),
                    `${p.status}${p.stopping ? ' (stopping)' : ''}`,
                    formatPercent(p.used),
                    `${formatBytes(p.progress.bytes)}, ${formatCount(p.progress.objects)} objects`,
                    elapsed > 0 ? formatRate(p.progress.bytes / elapsed) : '–',
                    p.status === 'active' && p.progress.eta > 0 ? `about ${formatDuration(p.progress.eta / 1e9)}` : '–',
                    p.lastError ?? '',
                  ];
                }),
              )
            : null,
        ),
    !caps.possible && caps.reason ? h('p', { class: 'muted' }, caps.reason) : null,
    r.rebalanceActions.reason !== null ? h('p', { class: 'muted', id: 'rebalance-why-not' }, r.rebalanceActions.reason) : null,
    buttons.length > 0 ? h('div', { class: 'button-row' }, ...buttons) : null,
    out,
  );
}

export function renderPools(main: HTMLElement): () => void {
  const body = h('div', { class: 'page-body' }, loading('the pools'));
  main.replaceChildren(pageHeader('Pools', 'Each pool, its erasure sets and drives; decommission and rebalance.'), body);
  let fast = false;
  let stop: (() => void) | undefined;
  const load = async (background = false) => {
    try {
      const r = await api<PoolsResponse>('GET', 'pools', undefined, {}, { background });
      fast = r.pools.some((p) => p.status?.decommissionStatus === 'running' || p.status?.decommissionStatus === 'queued') || r.rebalance?.status === 'running';
      // keep the result messages of the last action across refreshes
      const kept = new Map([...body.querySelectorAll<HTMLElement>('.action-result')].map((e) => [e.id, { nodes: [...e.childNodes], status: e.dataset.status }]));
      replaceContent(body, r.recordsError ? errorBox(new Error(`Pool records: ${r.recordsError}`)) : null, ...r.pools.map((p) => poolCard(p, r, refresh)), rebalanceCard(r, refresh), h('p', { class: 'muted updated' }, 'Updated ', time(r.generatedAt)));
      // an outcome stays until the state it reported on changes ("Rebalance started." never sits under "completed")
      for (const [id, k] of kept) {
        const el = document.getElementById(id);
        if (el !== null && (k.status === 'after-action' || el.dataset.status === k.status)) el.replaceChildren(...k.nodes);
      }
    } catch (err) {
      replaceContent(body, errorBox(err));
    }
  };
  const refresh = () => {
    stop?.();
    stop = poll(load, () => (fast ? 1500 : 5000));
  };
  refresh();
  return () => stop?.();
}

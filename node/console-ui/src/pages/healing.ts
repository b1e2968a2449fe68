/**
 * Healing: the background heal and the scanner as the nodes report them, every
 * node's background jobs from its supervisor,
 * starting (and following, and stopping) an admin heal of the cluster, a
 * bucket, a prefix or one erasure set, and the recovery of replaced drives.
 */
import type { BucketEntry, HealCallResult, HealingResponse, HealStartRequest } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { announce, type Child, h, replaceContent } from '../dom.js';
import { formatBytes, formatCount, formatDuration, isUnsetTime } from '../format.js';
import { poll } from '../poll.js';
import { badge, checkRow, confirmDialog, errorBox, facts, loading, pageHeader, section, table, time, type Tone } from '../ui.js';

const BG_TONE: Record<string, Tone> = { disabled: 'idle', idle: 'ok', active: 'info', degraded: 'warn' };

function backgroundCard(r: HealingResponse): HTMLElement {
  const bg = r.background;
  if (bg === null) return section('Background heal', 'bg-title', errorBox(new Error(r.backgroundError ?? 'unavailable')));
  const sc = bg.scanner;
  return section(
    'Background heal',
    'bg-title',
    h('p', null, badge(BG_TONE[bg.state] ?? 'idle', bg.state, { id: 'bg-heal-state' }), ' ', bg.detail),
    facts([
      ['Queued for repair', formatCount(bg.healQueueLength)],
      ['Running tasks', formatCount(bg.healActiveTasks)],
      ...(bg.healRetryingTasks !== undefined ? ([['Waiting to retry', formatCount(bg.healRetryingTasks)]] as const) : []),
      ...(bg.itemsHealed !== undefined ? ([['Healed', `${formatCount(bg.itemsHealed)} objects, ${formatBytes(bg.bytesHealed ?? 0)}`]] as const) : []),
      ...(bg.itemsFailed !== undefined ? ([['Given up', formatCount(bg.itemsFailed)]] as const) : []),
      ['Dropped (queue full)', formatCount(bg.mrfDropped)],
      ['Objects scanned', formatCount(bg.ScannedItemsCount)],
      ['Nodes offline', bg.offline_nodes.length > 0 ? bg.offline_nodes.join(', ') : 'none'],
      ['Drives healing', bg.HealDisks.length > 0 ? bg.HealDisks.join(', ') : 'none'],
    ]),
    h('h3', null, 'Scanner'),
    r.capabilities.heal.scanner && sc
      ? facts([
          ['Cycles', `${formatCount(sc.cycles)}${sc.cyclesByResult ? ` (${sc.cyclesByResult.success} complete, ${sc.cyclesByResult.partial} partial, ${sc.cyclesByResult.error} failed)` : ''}`],
          ['Last cycle', isUnsetTime(sc.lastCycleAt) ? 'none finished yet' : h('span', null, time(sc.lastCycleAt), ` · ${sc.lastCycleResult || '–'} · took ${formatDuration(sc.lastCycleDuration / 1e9)}`)],
          ...(sc.healsQueued !== undefined ? ([['Heals it queued', formatCount(sc.healsQueued)]] as const) : []),
        ])
      : h('p', { class: 'muted', id: 'scanner-state' }, 'This build runs no background scanner: nothing checks stored objects in the background.'),
    h('h3', null, 'Erasure sets'),
    table(
      'Erasure sets and their drives',
      ['Set', 'State', 'Drives OK', 'Drives not OK'],
      bg.sets.map((s) => {
        const bad = s.disks.filter((d) => d.state !== 'ok');
        return [
          `pool ${s.pool_index}, set ${s.set_index}`,
          s.heal_status === 'Healing' ? badge('info', 'healing') : badge(bad.length > 0 ? 'warn' : 'ok', bad.length > 0 ? 'degraded' : 'ok'),
          `${s.disks.length - bad.length} of ${s.disks.length}`,
          bad.length > 0 ? bad.map((d) => `${d.endpoint} (${d.state}${d.healing ? ', healing' : ''})`).join('; ') : '–',
        ];
      }),
    ),
  );
}

function replacementCard(r: HealingResponse): HTMLElement {
  const rr = r.replacement;
  if (rr === null) return section('Replaced drives', 'repl-title', errorBox(new Error(r.replacementError ?? 'unavailable')));
  return section(
    'Replaced drives',
    'repl-title',
    h(
      'p',
      null,
      badge(rr.state === 'idle' ? 'ok' : rr.state === 'healing' ? 'info' : 'warn', rr.state, { id: 'replacement-state' }),
      ' ',
      rr.healerAvailable ? 'Replaced drives are rebuilt automatically.' : 'This build detects replaced drives but does not rebuild them yet; a set heal (below) does, once the heal engine is built.',
    ),
    rr.instances.length === 0
      ? h('p', { class: 'muted' }, 'No replaced drive is waiting for recovery.')
      : table(
          'Replaced drives and their recovery',
          ['Drive', 'Pool / set / slot', 'State', 'Why', 'Detected', 'Rebuilt'],
          rr.instances.map((i) => [
            h('code', null, i.endpoint),
            `${i.pool} / ${i.set} / ${i.slot}`,
            badge(i.state === 'completed' ? 'ok' : i.state === 'failed' ? 'bad' : 'info', i.state),
            i.reason,
            time(i.detectedAt),
            `${formatCount(i.objectsHealed)} objects, ${formatBytes(i.bytesHealed)}`,
          ]),
        ),
  );
}

const JOB_TONE: Record<string, Tone> = { running: 'info', idle: 'ok', paused: 'warn', stopping: 'warn', failed: 'bad', stopped: 'idle', completed: 'ok', 'not started': 'idle' };

/** Every node's background jobs, as each node's supervisor lists them. */
function jobsCard(r: HealingResponse): HTMLElement {
  if (r.jobs === null) return section('Background jobs', 'jobs-title', errorBox(new Error(r.jobsError ?? 'unavailable')));
  return section(
    'Background jobs',
    'jobs-title',
    h('p', { class: 'muted' }, 'Long-running work on each node, started in dependency order and stopped in reverse.'),
    table(
      'Background jobs by node',
      ['Node', 'Job', 'State', 'Workers', 'Runs after'],
      r.jobs.nodes.flatMap((n) =>
        !n.answered
          ? [[n.node, '–', badge('warn', 'not answering'), '–', '–']]
          : n.jobs.map((j) => [
              n.node,
              h('span', { title: j.description }, j.name),
              badge(JOB_TONE[j.state] ?? 'idle', j.state, { 'data-job': j.name }),
              j.workers.length === 0 ? 'none now' : j.workers.map((w) => `${w.name} (${w.state}${w.steps > 0 ? `, ${formatCount(w.steps)} steps` : ''})`).join(', '),
              j.after.length === 0 ? '–' : j.after.join(', '),
            ]),
      ),
      { id: 'jobs-table' },
    ),
  );
}

/** The heal form and the heal it started. */
function healCard(r: HealingResponse, state: HealState): HTMLElement {
  const available = r.capabilities.heal.adminHeal;
  const field = (id: string, label: string, input: HTMLElement, hint?: string) =>
    h('p', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null);
  const check = (id: string, label: string, hint: string, checked = false) => checkRow(h('input', { type: 'checkbox', id, checked, 'aria-describedby': `${id}-hint` }), label, hint);
  const setSelect = h(
    'select',
    { id: 'heal-set' },
    h('option', { value: '' }, 'every set'),
    ...r.layout.flatMap((p) => Array.from({ length: p.sets }, (_, s) => h('option', { value: `${p.pool}:${s}` }, `pool ${p.pool}, set ${s}`))),
  );
  const datalist = h('datalist', { id: 'heal-buckets' }, ...state.buckets.map((b) => h('option', { value: b })));
  const form = h(
    'form',
    { id: 'heal-form', class: 'form' },
    field('heal-bucket', 'Bucket', h('input', { id: 'heal-bucket', type: 'text', list: 'heal-buckets', autocomplete: 'off', 'aria-describedby': 'heal-bucket-hint' }), 'Empty: the whole cluster.'),
    datalist,
    field('heal-prefix', 'Prefix', h('input', { id: 'heal-prefix', type: 'text', autocomplete: 'off', 'aria-describedby': 'heal-prefix-hint' }), 'Only objects whose names start with this (needs a bucket).'),
    field('heal-set', 'Erasure set', setSelect, 'One set only (for a replaced drive), or every set.'),
    check('heal-deep', 'Deep scan', 'Read and verify every shard (slower); otherwise check metadata and presence.'),
    check('heal-dry-run', 'Dry run', 'Report what would be healed; change nothing.'),
    check('heal-remove', 'Remove dangling objects', 'Delete objects below read quorum on every version (unrecoverable).'),
    h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'heal-start', disabled: !available }, 'Start heal')),
    available ? null : h('p', { class: 'muted' }, 'This build has no heal engine: a heal cannot be started yet.'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const val = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
    const on = (id: string) => (document.getElementById(id) as HTMLInputElement).checked;
    const [pool, set] = setSelect.value === '' ? [undefined, undefined] : setSelect.value.split(':').map(Number);
    const req: HealStartRequest = {
      bucket: val('heal-bucket').trim(),
      prefix: val('heal-prefix'),
      recursive: true,
      dryRun: on('heal-dry-run'),
      remove: on('heal-remove'),
      recreate: false,
      deep: on('heal-deep'),
      ...(pool !== undefined && set !== undefined ? { pool, set } : {}),
    };
    void (async () => {
      // removing dangling objects deletes data: say exactly what, and ask
      if (req.remove) {
        const target = req.bucket === '' ? 'every bucket of the cluster' : req.prefix !== '' ? `objects under ${req.bucket}/${req.prefix}` : `the bucket ${req.bucket}`;
        const ok = await confirmDialog({
          title: `Remove dangling objects in ${target}?`,
          body: h(
            'div',
            null,
            h('p', null, `The heal deletes, for good, every object in ${target}${pool !== undefined ? ` on pool ${pool}, set ${set}` : ''} that has fewer parts left than it needs to be read, on every version: such objects cannot be recovered, and removing them frees their space.`),
            h('p', null, req.dryRun ? 'Dry run is on: the heal reports what it would remove and removes nothing.' : 'Tick "Dry run" first to see what would be removed.'),
          ),
          confirmLabel: req.dryRun ? 'Start dry run' : 'Remove dangling objects',
          danger: !req.dryRun,
        });
        if (!ok) return;
      }
      await state.start(req);
    })();
  });
  return section('Start a heal', 'heal-title', form, state.view);
}

interface HealState {
  buckets: string[];
  readonly view: HTMLElement;
  start(req: HealStartRequest): Promise<void>;
  dispose(): void;
}

function healState(): HealState {
  const view = h('div', { id: 'heal-task', 'aria-live': 'polite' });
  let current: HealCallResult | undefined;
  let items: unknown[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let summary: Record<string, unknown> = {};
  const render = (extra?: Child) => {
    if (current === undefined) {
      replaceContent(view, extra);
      return;
    }
    const progress = (summary.Progress ?? {}) as Record<string, number>;
    const stopButton = h('button', { type: 'button', class: 'button', id: 'heal-stop', onclick: () => void stop() }, 'Stop heal');
    replaceContent(
      view,
      h('h3', null, `Heal ${current.bucket ? `of ${current.bucket}${current.prefix ? `/${current.prefix}` : ''}` : 'of the cluster'}`),
      facts([
        ['Token', h('code', null, current.clientToken)],
        ['State', badge(summary.Summary === 'running' ? 'info' : summary.Summary === 'finished' ? 'ok' : summary.Summary === 'failed' ? 'bad' : 'idle', String(summary.Summary ?? 'started'), { id: 'heal-summary' })],
        ...(progress.objectsScanned !== undefined
          ? ([
              ['Scanned', formatCount(progress.objectsScanned)],
              ['Healed', `${formatCount(progress.objectsHealed ?? 0)} objects, ${formatBytes(progress.bytesHealed ?? 0)}`],
              ['Failed or refused', formatCount((progress.objectsFailed ?? 0) + (progress.objectsRefused ?? 0))],
            ] as const)
          : []),
        ...(summary.Detail ? ([['Detail', String(summary.Detail)]] as const) : []),
      ]),
      summary.Summary === 'running' || summary.Summary === undefined ? stopButton : null,
      items.length > 0
        ? table(
            'Heal results',
            ['Type', 'Object', 'Outcome', 'Detail'],
            items.slice(-100).map((it) => {
              const i = it as Record<string, unknown>;
              return [String(i.type ?? ''), `${i.bucket ?? ''}/${i.object ?? ''}`, String(i.outcome ?? ''), String(i.detail ?? '')];
            }),
          )
        : null,
      extra,
    );
  };
  const follow = async () => {
    if (current === undefined) return;
    try {
      const r = await api<HealCallResult>('GET', 'heal/status', undefined, { clientToken: current.clientToken, bucket: current.bucket, prefix: current.prefix }, { background: true });
      summary = (r.result ?? {}) as Record<string, unknown>;
      const got = summary.Items ?? summary.items;
      if (Array.isArray(got)) items = [...items, ...got].slice(-1000);
      render();
      if (summary.Summary === 'running' || summary.Summary === 'not started') timer = setTimeout(() => void follow(), 2000);
    } catch (err) {
      render(errorBox(err));
    }
  };
  const stop = async () => {
    if (current === undefined) return;
    try {
      await api('POST', 'heal/stop', { clientToken: current.clientToken, bucket: current.bucket, prefix: current.prefix });
      announce('Heal stopped.');
      await follow();
    } catch (err) {
      render(errorBox(err));
    }
  };
  return {
    buckets: [],
    view,
    async start(req) {
      clearTimeout(timer);
      try {
        current = await api<HealCallResult>('POST', 'heal', req);
        items = [];
        summary = { Summary: 'running' };
        announce('Heal started.');
        render();
        timer = setTimeout(() => void follow(), 1000);
      } catch (err) {
        current = undefined;
        render(errorBox(err));
      }
    },
    dispose: () => clearTimeout(timer),
  };
}

export function renderHealing(main: HTMLElement): () => void {
  const body = h('div', { class: 'page-body' }, loading('the healing state'));
  const heal = healState();
  main.replaceChildren(pageHeader('Healing', 'Background heal, the scanner, heals you start, replaced drives, and every background job.'), body);
  void api<BucketEntry[]>('GET', 'buckets').then(
    (b) => {
      heal.buckets = b.map((x) => x.name);
      document.getElementById('heal-buckets')?.replaceChildren(...heal.buckets.map((name) => h('option', { value: name })));
    },
    () => undefined,
  );
  let form: HTMLElement | undefined;
  const stop = poll(async (background) => {
    try {
      const r = await api<HealingResponse>('GET', 'healing', undefined, {}, { background });
      // the heal form keeps what the user typed: built once, then left alone
      form ??= healCard(r, heal);
      replaceContent(body, backgroundCard(r), form, replacementCard(r), jobsCard(r), h('p', { class: 'muted updated' }, 'Updated ', time(r.generatedAt)));
    } catch (err) {
      replaceContent(body, errorBox(err));
    }
  }, () => 4000);
  return () => {
    stop();
    heal.dispose();
  };
}

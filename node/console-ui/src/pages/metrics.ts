/**
 * Metrics over time, cluster-wide: S3 requests and errors, bytes in and
 * out, raw capacity, heal and scanner activity, one point a minute for the
 * last hours, from the nodes' own measurements (the admin API's
 * `metrics/history`: every node's points added together; no Prometheus
 * needed). Each graph says in words what it shows (totals and peaks over
 * the range), so the numbers are there without reading the lines.
 */
import type { MetricsHistoryReport } from '../../../src/object/admin/types.ts';
import { api } from '../api.js';
import { h, replaceContent, svg } from '../dom.js';
import { formatBytes, formatCount, formatPercent, plural } from '../format.js';
import { poll } from '../poll.js';
import { errorBox, loading, pageHeader } from '../ui.js';

const RANGES = [
  { minutes: 60, label: 'Last hour' },
  { minutes: 180, label: 'Last 3 hours' },
  { minutes: 360, label: 'Last 6 hours' },
] as const;
let minutes = 60;

interface Series {
  readonly name: string;
  /** A colour of its own (`limit`: a dashed grey line for a total), else by position. */
  readonly kind?: 'limit';
  readonly values: readonly (number | null)[];
}

const W = 640;
const H = 170;
const LEFT = 70;
const RIGHT = 10;
const TOP = 10;
const BOTTOM = 26;

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** A line chart of one-minute points, with its text equivalent as the SVG title. */
function lineChart(id: string, title: string, series: readonly Series[], fmt: (v: number) => string, start: number, stepMs: number, summary: string): HTMLElement {
  const n = series[0]?.values.length ?? 0;
  const max = Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const top = max > 0 ? max : 1;
  const x = (i: number) => LEFT + (n <= 1 ? 0 : (i / (n - 1)) * (W - LEFT - RIGHT));
  const y = (v: number) => TOP + (1 - v / top) * (H - TOP - BOTTOM);
  const lines = series.map((s, k) => {
    // a gap (no sample) breaks the line
    const runs: string[][] = [];
    let run: string[] = [];
    s.values.forEach((v, i) => {
      if (v === null) {
        if (run.length > 0) runs.push(run);
        run = [];
      } else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    });
    if (run.length > 0) runs.push(run);
    return svg(
      'g',
      { class: `series series-${s.kind ?? k}`, 'data-series': s.name },
      ...runs.map((r) => (r.length === 1 ? svg('circle', { cx: r[0]!.split(',')[0]!, cy: r[0]!.split(',')[1]!, r: 2.5 }) : svg('polyline', { points: r.join(' ') }))),
    );
  });
  const end = start + (n - 1) * stepMs;
  const chart = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart line-chart', role: 'img', 'aria-labelledby': `${id}-title` },
    svg('title', { id: `${id}-title` }, `${title}: ${summary}`),
    svg('line', { x1: LEFT, x2: W - RIGHT, y1: y(0), y2: y(0), class: 'chart-axis' }),
    svg('line', { x1: LEFT, x2: W - RIGHT, y1: y(top), y2: y(top), class: 'chart-grid' }),
    svg('text', { x: LEFT - 6, y: y(0) + 4, class: 'chart-tick', 'text-anchor': 'end' }, fmt(0)),
    svg('text', { x: LEFT - 6, y: y(top) + 4, class: 'chart-tick', 'text-anchor': 'end' }, fmt(max)),
    svg('text', { x: LEFT, y: H - 6, class: 'chart-tick' }, `${clock(start)} UTC`),
    svg('text', { x: W - RIGHT, y: H - 6, class: 'chart-tick', 'text-anchor': 'end' }, `${clock(end)} UTC (now)`),
    ...lines,
  );
  return h(
    'figure',
    { class: 'metric-chart', id },
    h('figcaption', null, h('strong', null, title), ' ', h('span', { class: 'metric-summary' }, summary)),
    chart,
    series.length > 1 ? h('ul', { class: 'legend' }, ...series.map((s, k) => h('li', null, h('span', { class: `swatch series-${s.kind ?? k}`, 'aria-hidden': 'true' }), s.name))) : null,
  );
}

const sum = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);
const peak = (v: readonly number[]) => Math.max(0, ...v);
const perSecond = (v: readonly number[], stepSeconds: number) => v.map((x) => x / stepSeconds);
const lastSample = (v: readonly (number | null)[]) => [...v].reverse().find((x): x is number => x !== null);

function view(r: MetricsHistoryReport): HTMLElement[] {
  const c = r.counters;
  const g = r.gauges;
  const step = r.stepSeconds;
  const stepMs = step * 1000;
  const range = RANGES.find((x) => x.minutes === c.s3Requests.length)?.label.toLowerCase() ?? `last ${plural(c.s3Requests.length, 'minute')}`;
  const absent = r.nodes.filter((n) => !n.answered);
  const rate = (v: number) => `${v >= 10 ? Math.round(v) : v.toFixed(v >= 1 ? 1 : 2)}/s`;
  const bytesRate = (v: number) => `${formatBytes(v)}/s`;
  const used = lastSample(g.capacityUsedBytes);
  const total = lastSample(g.capacityTotalBytes);
  return [
    h(
      'p',
      { class: absent.length > 0 ? 'error-inline' : 'muted', id: 'metrics-nodes' },
      absent.length > 0
        ? `Measured by ${r.nodes.length - absent.length} of ${plural(r.nodes.length, 'node')}: ${absent.map((n) => n.node).join(', ')} did not answer, so their requests are missing from these graphs.`
        : `Measured by ${r.nodes.length === 1 ? 'the one node' : `all ${r.nodes.length} nodes`}, added together; one point a minute, ${range}. Each node keeps its points in memory for six hours (a restarted node starts again).`,
    ),
    h(
      'div',
      { class: 'metric-grid' },
      lineChart(
        'chart-requests',
        'S3 requests',
        [{ name: 'requests per second', values: perSecond(c.s3Requests, step) }],
        rate,
        r.start,
        stepMs,
        `${formatCount(sum(c.s3Requests))} requests in the ${range}; busiest minute ${formatCount(peak(c.s3Requests))}.`,
      ),
      lineChart(
        'chart-errors',
        'S3 errors',
        [
          { name: 'client errors (4xx) per minute', values: c.s3ClientErrors },
          { name: 'server errors (5xx) per minute', values: c.s3ServerErrors },
        ],
        (v) => formatCount(Math.round(v)),
        r.start,
        stepMs,
        `${formatCount(sum(c.s3ClientErrors))} client errors (4xx) and ${formatCount(sum(c.s3ServerErrors))} server errors (5xx)${sum(c.s3Requests) > 0 ? `, ${formatPercent((sum(c.s3ClientErrors) + sum(c.s3ServerErrors)) / sum(c.s3Requests))} of requests` : ''}.`,
      ),
      lineChart(
        'chart-throughput',
        'Throughput',
        [
          { name: 'received (uploads)', values: perSecond(c.s3BytesIn, step) },
          { name: 'sent (downloads)', values: perSecond(c.s3BytesOut, step) },
        ],
        bytesRate,
        r.start,
        stepMs,
        `${formatBytes(sum(c.s3BytesIn))} received and ${formatBytes(sum(c.s3BytesOut))} sent; busiest minute ${bytesRate(peak(c.s3BytesIn) / step)} in, ${bytesRate(peak(c.s3BytesOut) / step)} out.`,
      ),
      lineChart(
        'chart-capacity',
        'Raw capacity used',
        [
          { name: 'used', values: g.capacityUsedBytes },
          { name: 'total', values: g.capacityTotalBytes, kind: 'limit' },
        ],
        formatBytes,
        r.start,
        stepMs,
        used === undefined || total === undefined ? 'no sample yet.' : `${formatBytes(used)} of ${formatBytes(total)} (${formatPercent(total > 0 ? used / total : 0)}) at the last sample.`,
      ),
      lineChart(
        'chart-healing',
        'Healing and scanning',
        [
          { name: 'heal tasks finished per minute', values: c.healTasks },
          { name: 'heal tasks failed per minute', values: c.healFailures },
          { name: 'objects scanned per minute', values: c.scannerObjects },
        ],
        (v) => formatCount(Math.round(v)),
        r.start,
        stepMs,
        `${formatCount(sum(c.healTasks))} heal tasks finished (${formatCount(sum(c.healFailures))} failed); ${formatCount(sum(c.scannerObjects))} objects scanned.`,
      ),
    ),
  ];
}

export function renderMetrics(main: HTMLElement): () => void {
  const body = h('div', { class: 'page-body' }, loading('the measurements'));
  const select = h(
    'select',
    { id: 'metrics-range' },
    ...RANGES.map((r) => h('option', { value: String(r.minutes), selected: r.minutes === minutes }, r.label)),
  );
  let refresh = () => undefined as void;
  select.addEventListener('change', () => {
    minutes = Number(select.value);
    refresh();
  });
  main.replaceChildren(
    pageHeader('Metrics', 'Requests, errors, throughput, capacity and healing of the whole cluster over the last hours.', h('label', { class: 'range' }, 'Show ', select)),
    body,
  );
  const load = async (background: boolean) => {
    try {
      replaceContent(body, ...view(await api<MetricsHistoryReport>('GET', 'metrics', undefined, { minutes }, { background })));
    } catch (err) {
      replaceContent(body, errorBox(err));
    }
  };
  refresh = () => void load(false);
  return poll(load, () => 15_000);
}

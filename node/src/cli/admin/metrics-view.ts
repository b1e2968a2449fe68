/**
 * `svc admin metrics`: the cluster's activity over the last minutes or hours
 * (`GET v4/metrics/history`, every node's one-minute points added together)
 * as a table a person reads at a glance: one row per `step` minutes, rows
 * aligned on the clock (a 5-minute row is 10:05-10:09, UTC), counters summed
 * over the row, capacity the row's last sample; then the totals, the busiest
 * minute, the latest capacity and the nodes that did not answer. Pure.
 */
import type { MetricsHistoryReport } from '../../object/admin/types.ts';
import { COUNTERS, type CounterName } from '../../telemetry/history.ts';
import { formatBytes, formatPercent, table } from './format.ts';

/** Row widths offered by default (minutes): the smallest that keeps the table at MAX_ROWS rows or fewer. */
const STEPS = [1, 2, 5, 10, 15, 30, 60];
const MAX_ROWS = 24;

/** The default minutes per row for a window of `minutes`. */
export function defaultStep(minutes: number): number {
  return STEPS.find((s) => Math.ceil(minutes / s) <= MAX_ROWS) ?? STEPS[STEPS.length - 1]!;
}

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

interface Row {
  first: number;
  last: number;
  counters: Record<CounterName, number>;
  used: number | null;
  total: number | null;
}

/** The report's points grouped into rows of `step` minutes, aligned on the clock. */
export function metricsRows(r: MetricsHistoryReport, step: number): Row[] {
  const pointMs = r.stepSeconds * 1000;
  const rowMs = step * 60_000;
  const rows: Row[] = [];
  const points = r.counters.s3Requests.length;
  for (let i = 0; i < points; i++) {
    const at = r.start + i * pointMs;
    let row = rows[rows.length - 1];
    if (row === undefined || Math.floor(row.first / rowMs) !== Math.floor(at / rowMs)) {
      row = { first: at, last: at, counters: Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Record<CounterName, number>, used: null, total: null };
      rows.push(row);
    }
    row.last = at;
    for (const c of COUNTERS) row.counters[c] += r.counters[c][i] ?? 0;
    // capacity: the row's last sample
    const used = r.gauges.capacityUsedBytes[i] ?? null;
    const total = r.gauges.capacityTotalBytes[i] ?? null;
    if (used !== null) row.used = used;
    if (total !== null) row.total = total;
  }
  return rows;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export function metricsView(r: MetricsHistoryReport, step: number): string {
  const points = r.counters.s3Requests.length;
  const pointMs = r.stepSeconds * 1000;
  const end = r.start + points * pointMs;
  const rows = metricsRows(r, step);
  const answered = r.nodes.filter((n) => n.answered);
  const head = `Cluster activity from ${stamp(r.start)} to ${stamp(end)} UTC (${points} minute${points === 1 ? '' : 's'}, the last one in progress), ${step} minute${step === 1 ? '' : 's'} a row; ${answered.length} of ${r.nodes.length} node${r.nodes.length === 1 ? '' : 's'} answered`;
  const body = table(
    ['TIME (UTC)', 'REQUESTS', '4XX', '5XX', 'BYTES IN', 'BYTES OUT', 'USED', 'RAW TOTAL', 'HEAL TASKS', 'HEAL FAILED', 'SCANNED'],
    rows.map((w) => [
      w.first === w.last ? hhmm(w.first) : `${hhmm(w.first)}-${hhmm(w.last)}`,
      w.counters.s3Requests,
      w.counters.s3ClientErrors,
      w.counters.s3ServerErrors,
      formatBytes(w.counters.s3BytesIn),
      formatBytes(w.counters.s3BytesOut),
      w.used === null ? '-' : formatBytes(w.used),
      w.total === null ? '-' : formatBytes(w.total),
      w.counters.healTasks,
      w.counters.healFailures,
      w.counters.scannerObjects,
    ]),
    ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  const c = r.counters;
  const lines = [
    head,
    body,
    `Totals: ${sum(c.s3Requests)} S3 requests (${sum(c.s3ClientErrors)} answered 4xx, ${sum(c.s3ServerErrors)} answered 5xx); ${formatBytes(sum(c.s3BytesIn))} in, ${formatBytes(sum(c.s3BytesOut))} out; ${sum(c.healTasks)} heal tasks (${sum(c.healFailures)} failed); ${sum(c.scannerObjects)} objects scanned`,
  ];
  const busiest = c.s3Requests.reduce((best, v, i) => (v > (c.s3Requests[best] ?? 0) ? i : best), 0);
  if ((c.s3Requests[busiest] ?? 0) > 0) lines.push(`Busiest minute: ${hhmm(r.start + busiest * pointMs)}, ${c.s3Requests[busiest]} requests (${((c.s3Requests[busiest] ?? 0) / r.stepSeconds).toFixed(1)} a second)`);
  let sampled = -1;
  for (let i = points - 1; i >= 0 && sampled < 0; i--) if (r.gauges.capacityUsedBytes[i] !== null && r.gauges.capacityTotalBytes[i] !== null) sampled = i;
  if (sampled >= 0) {
    const used = r.gauges.capacityUsedBytes[sampled]!;
    const total = r.gauges.capacityTotalBytes[sampled]!;
    lines.push(`Raw capacity: ${formatBytes(used)} used of ${formatBytes(total)} (${formatPercent(total > 0 ? used / total : 0)}) at ${hhmm(r.start + sampled * pointMs)}`);
  } else lines.push('Raw capacity: no sample in this window');
  const silent = r.nodes.filter((n) => !n.answered).map((n) => n.node);
  if (silent.length > 0) lines.push(`Not answering (their activity is missing above): ${silent.join(', ')}`);
  return lines.join('\n');
}

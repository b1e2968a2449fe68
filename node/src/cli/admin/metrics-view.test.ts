import { describe, expect, it } from 'vitest';
import type { MetricsHistoryReport } from '../../object/admin/types.ts';
import { defaultStep, metricsRows, metricsView } from './metrics-view.ts';

/** The cells of the table line that starts with `first`. */
function cells(text: string, first: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`│ ${first} `));
  return line === undefined ? [] : line.split('│').map((c) => c.trim()).filter((c) => c !== '');
}

/** Seven minutes, 10:03 to 10:09 UTC; node b did not answer. */
function report(): MetricsHistoryReport {
  const zeros = () => [0, 0, 0, 0, 0, 0, 0];
  return {
    stepSeconds: 60,
    start: Date.UTC(2026, 10, 27, 10, 3),
    counters: {
      s3Requests: [1, 0, 2, 0, 0, 0, 30],
      s3ClientErrors: [0, 0, 1, 0, 0, 0, 3],
      s3ServerErrors: [0, 0, 0, 0, 0, 0, 1],
      s3BytesIn: [1024, 0, 0, 0, 0, 0, 2048],
      s3BytesOut: zeros(),
      healTasks: [0, 2, 0, 0, 0, 0, 0],
      healFailures: [0, 1, 0, 0, 0, 0, 0],
      scannerObjects: [0, 0, 0, 0, 5, 0, 0],
    },
    gauges: {
      capacityUsedBytes: [null, 100, null, null, null, 200, null],
      capacityTotalBytes: [null, 1000, null, null, null, 1000, null],
    },
    nodes: [
      { node: 'a:9000', answered: true },
      { node: 'b:9000', answered: false },
    ],
  };
}

describe('svc admin metrics (the view)', () => {
  it('groups minutes into rows aligned on the clock: counters summed, capacity the last sample of the row', () => {
    const rows = metricsRows(report(), 5);
    expect(rows.map((r) => [new Date(r.first).toISOString().slice(11, 16), new Date(r.last).toISOString().slice(11, 16)])).toEqual([
      ['10:03', '10:04'],
      ['10:05', '10:09'],
    ]);
    expect(rows.map((r) => r.counters.s3Requests)).toEqual([1, 32]);
    expect(rows.map((r) => r.counters.healFailures)).toEqual([1, 0]);
    expect(rows.map((r) => r.used)).toEqual([100, 200]);
    expect(metricsRows(report(), 1)).toHaveLength(7);
  });

  it('prints the table, the totals, the busiest minute, the latest capacity and the silent nodes', () => {
    const text = metricsView(report(), 5);
    expect(text).toContain('Cluster activity from 2026-11-27 10:03 to 2026-11-27 10:10 UTC (7 minutes, the last one in progress), 5 minutes a row; 1 of 2 nodes answered');
    expect(cells(text, 'TIME (UTC)')).toEqual(['TIME (UTC)', 'REQUESTS', '4XX', '5XX', 'BYTES IN', 'BYTES OUT', 'USED', 'RAW TOTAL', 'HEAL TASKS', 'HEAL FAILED', 'SCANNED']);
    expect(cells(text, '10:03-10:04')).toEqual(['10:03-10:04', '1', '0', '0', '1.0 KiB', '0 B', '100 B', '1000 B', '2', '1', '0']);
    expect(cells(text, '10:05-10:09')).toEqual(['10:05-10:09', '32', '4', '1', '2.0 KiB', '0 B', '200 B', '1000 B', '0', '0', '5']);
    expect(text).toContain('Totals: 33 S3 requests (4 answered 4xx, 1 answered 5xx); 3.0 KiB in, 0 B out; 2 heal tasks (1 failed); 5 objects scanned');
    expect(text).toContain('Busiest minute: 10:09, 30 requests (0.5 a second)');
    expect(text).toContain('Raw capacity: 200 B used of 1000 B (20 %) at 10:08');
    expect(text).toContain('Not answering (their activity is missing above): b:9000');
  });

  it('says when no capacity was sampled and names no silent node when all answered', () => {
    const r = report();
    r.gauges.capacityUsedBytes = r.gauges.capacityUsedBytes.map(() => null);
    r.nodes = [{ node: 'a:9000', answered: true }];
    const text = metricsView(r, 1);
    expect(text).toContain('Raw capacity: no sample in this window');
    expect(text).not.toContain('Not answering');
    expect(cells(text, '10:09').slice(0, 5)).toEqual(['10:09', '30', '3', '1', '2.0 KiB']);
    expect(cells(text, '10:04')[6]).toBe('-');
  });

  it('picks a row width that keeps the table short', () => {
    expect([1, 15, 24, 25, 60, 120, 360].map(defaultStep)).toEqual([1, 1, 1, 2, 5, 5, 15]);
  });
});

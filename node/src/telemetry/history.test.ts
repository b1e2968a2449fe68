import { describe, expect, it } from 'vitest';
import { ManualClock } from '../util/clock.ts';
import { HISTORY_POINTS, HISTORY_STEP_MS, MetricsHistory, mergeHistories, parseWindow } from './history.ts';

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % HISTORY_STEP_MS); // a minute boundary

describe('metrics history', () => {
  it('sums counters per minute and keeps a gauge’s last sample; six hours, the oldest forgotten', () => {
    const clock = new ManualClock(T0);
    const h = new MetricsHistory(clock);
    h.add('s3Requests');
    h.add('s3Requests', 2);
    h.set('capacityUsedBytes', 10);
    h.set('capacityUsedBytes', 12);
    clock.advance(HISTORY_STEP_MS * 2 + 5);
    h.add('s3Requests', 5);
    h.add('s3BytesIn', -3); // nothing negative or NaN is counted
    h.add('s3BytesIn', Number.NaN);
    let w = h.window();
    expect(w.counters.s3Requests).toHaveLength(HISTORY_POINTS);
    expect(w.start).toBe(T0 + 2 * HISTORY_STEP_MS - (HISTORY_POINTS - 1) * HISTORY_STEP_MS);
    expect(w.counters.s3Requests.slice(-3)).toEqual([3, 0, 5]);
    expect(w.counters.s3BytesIn.at(-1)).toBe(0);
    // a gauge is held into the next minute only when that minute follows at once (no sample for a minute: a gap)
    expect(w.gauges.capacityUsedBytes.slice(-3)).toEqual([12, null, null]);
    clock.advance(HISTORY_STEP_MS * (HISTORY_POINTS - 2));
    w = h.window();
    // the first minute fell out of the window; its ring slot is not mistaken for a new minute
    expect(w.counters.s3Requests.reduce((a, b) => a + b, 0)).toBe(5);
    expect(w.counters.s3Requests[1]).toBe(5);
    expect(w.gauges.capacityUsedBytes.every((v) => v === null)).toBe(true);
  });

  it('holds a gauge into the next minute until it is sampled again', () => {
    const clock = new ManualClock(T0);
    const h = new MetricsHistory(clock);
    h.set('capacityTotalBytes', 100);
    clock.advance(HISTORY_STEP_MS);
    h.add('s3Requests');
    h.set('capacityUsedBytes', 5);
    expect(h.window().gauges.capacityTotalBytes.slice(-2)).toEqual([100, 100]);
    expect(h.window().gauges.capacityUsedBytes.slice(-2)).toEqual([null, 5]);
  });

  it('adds nodes point by point on their own minutes, gauges only where sampled, cut to the minutes asked for', () => {
    const a = new MetricsHistory(new ManualClock(T0));
    const clockB = new ManualClock(T0 - HISTORY_STEP_MS);
    const b = new MetricsHistory(clockB);
    a.add('s3Requests', 4);
    a.set('capacityTotalBytes', 100);
    b.add('s3Requests', 1); // a minute earlier
    clockB.advance(HISTORY_STEP_MS);
    b.add('s3Requests', 2);
    b.set('capacityTotalBytes', 50);
    const merged = mergeHistories([a.window(), b.window()], T0 + 1, 3);
    expect(merged.start).toBe(T0 - 2 * HISTORY_STEP_MS);
    expect(merged.counters.s3Requests).toEqual([0, 1, 6]);
    expect(merged.gauges.capacityTotalBytes).toEqual([null, null, 150]);
    expect(merged.counters.healTasks).toEqual([0, 0, 0]);
  });

  it('takes a peer’s window only when it has the right shape', () => {
    const w = new MetricsHistory(new ManualClock(T0)).window();
    expect(parseWindow(JSON.parse(JSON.stringify(w)))).toEqual(w);
    expect(parseWindow(null)).toBeUndefined();
    expect(parseWindow({ ...w, counters: { ...w.counters, s3Requests: ['1'] } })).toBeUndefined();
    expect(parseWindow({ ...w, gauges: {} })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { formatAgo, formatBytes, formatDuration, formatPercent, formatRate, formatTime, plural } from './format.ts';

describe('format', () => {
  it('sizes in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(20 * 1024 * 1024)).toBe('20.0 MiB');
    expect(formatBytes(541106348032)).toBe('504 GiB');
    expect(formatBytes(-1)).toBe('–');
    expect(formatRate(3 * 1024 * 1024)).toBe('3.00 MiB/s');
    expect(formatRate(null)).toBe('–');
  });
  it('percentages and durations', () => {
    expect(formatPercent(0)).toBe('0 %');
    expect(formatPercent(0.004)).toBe('0.4 %');
    expect(formatPercent(0.371)).toBe('37 %');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(200)).toBe('3 min 20 s');
    expect(formatDuration(7500)).toBe('2 h 5 min');
    expect(formatDuration(3 * 86400 + 4 * 3600)).toBe('3 d 4 h');
    expect(formatDuration(null)).toBe('–');
    expect(plural(1, 'drive')).toBe('1 drive');
    expect(plural(3, 'drive')).toBe('3 drives');
  });
  it("times in the user's zone, with the zone named; unset times as a dash", () => {
    expect(formatTime('2026-11-23T19:18:26Z', { timeZone: 'Asia/Tokyo', locale: 'en-GB' })).toBe('24 Nov 2026, 04:18:26 GMT+9');
    expect(formatTime('2026-11-23T19:18:26Z', { timeZone: 'America/New_York', locale: 'en-US' })).toBe('Nov 23, 2026, 02:18:26 PM EST');
    expect(formatTime('0001-01-01T00:00:00Z')).toBe('–');
    expect(formatAgo('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:03:00Z'))).toBe('3 min ago');
  });
});

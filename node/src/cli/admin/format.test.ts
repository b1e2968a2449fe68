import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatPercent, formatTime, progressBar, table } from './format.ts';
import { watch } from './watch.ts';

describe('units', () => {
  it('bytes in IEC units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(1.2 * 1024 ** 4)).toBe('1.2 TiB');
    expect(formatBytes(-1)).toBe('-');
  });
  it('percentages with a space, durations, zero times', () => {
    expect(formatPercent(0.35)).toBe('35 %');
    expect(formatPercent(0.052)).toBe('5.2 %');
    expect(formatPercent(0)).toBe('0 %');
    expect(formatDuration(42_000)).toBe('42s');
    expect(formatDuration(303_000)).toBe('5m03s');
    expect(formatDuration(2 * 3_600_000 + 4 * 60_000)).toBe('2h04m');
    expect(formatTime('0001-01-01T00:00:00Z')).toBe('-');
    expect(formatTime('2025-01-10T08:00:00.123Z')).toBe('2025-01-10 08:00:00Z');
  });
  it('a progress bar of fixed width', () => {
    expect(progressBar(0.5, 10)).toBe('[█████░░░░░] 50 %');
    expect(progressBar(2, 4)).toBe('[████] 100 %');
  });
  it('tables align columns (every line the same width)', () => {
    const t = table(['A', 'NUMBER'], [['x', 1], ['longer', 12345]], ['left', 'right']);
    const lines = t.split('\n');
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    expect(lines.find((l) => l.includes('longer'))).toMatch(/12345 │$/);
  });
});

describe('--watch', () => {
  const capture = (tty: boolean) => {
    const out = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number; rows?: number };
    out.isTTY = tty;
    out.columns = 80;
    out.rows = 24;
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    return { out, text: () => text };
  };
  it('redraws in place on a terminal until done', async () => {
    const c = capture(true);
    const frames = ['frame-1', 'frame-2', 'frame-3'];
    let i = 0;
    await watch(c.out, async () => ({ text: frames[i]!, done: ++i === frames.length }), { watch: true, intervalMs: 1 });
    const t = c.text();
    for (const f of frames) expect(t).toContain(f);
    // log-update erases the previous frame (ESC [ … K / cursor up) before drawing the next.
    expect(t).toMatch(/\u001b\[(2K|1A|\d*G)/);
  });
  it('prints frame after frame when piped, and once without --watch', async () => {
    const c = capture(false);
    let i = 0;
    await watch(c.out, async () => ({ text: `f${i}`, done: ++i === 2 }), { watch: true, intervalMs: 1 });
    expect(c.text()).toBe('f0\n\nf1\n');
    const d = capture(false);
    await watch(d.out, async () => ({ text: 'once', done: false }), { watch: false, intervalMs: 1 });
    expect(d.text()).toBe('once\n');
  });
});

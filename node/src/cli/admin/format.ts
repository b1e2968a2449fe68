/**
 * Human output of the admin client: units (`1.2 TiB`, `35 %`, `1h02m`),
 * aligned tables (cli-table3, no colours so output pipes cleanly) and the
 * progress bar `--watch` draws. Pure: strings in, strings out.
 */
import Table from 'cli-table3';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** Bytes in IEC units with one decimal above KiB: `512 B`, `1.5 KiB`, `1.2 TiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '-';
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${UNITS[u]}`;
}

/** A fraction 0..1 as a percentage: `35 %` (one decimal under 10 %). */
export function formatPercent(fraction: number): string {
  if (!Number.isFinite(fraction)) return '-';
  const p = Math.max(0, fraction) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p).toString()} %`;
}

/** A duration in ms: `850ms`, `42s`, `5m03s`, `2h04m`, `3d05h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** A rate in bytes per second: `120.5 MiB/s`. */
export function formatRate(bytesPerSecond: number): string {
  return Number.isFinite(bytesPerSecond) && bytesPerSecond >= 0 ? `${formatBytes(bytesPerSecond)}/s` : '-';
}

/** An RFC 3339 time for people; the zero time is `-`. */
export function formatTime(t: string | null | undefined): string {
  if (!t || t.startsWith('0001-01-01')) return '-';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? t : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** `[██████░░░░░░] 35 %` of width `width` cells (bar only). */
export function progressBar(fraction: number, width = 24): string {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const full = Math.round(f * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}] ${formatPercent(f)}`;
}

export type Align = 'left' | 'right';

/** An aligned table; `align` per column (numbers right-aligned). */
export function table(head: readonly string[], rows: readonly (readonly (string | number)[])[], align?: readonly Align[]): string {
  const t = new Table({
    head: [...head],
    style: { head: [], border: [], 'padding-left': 1, 'padding-right': 1, compact: true },
    colAligns: align ? [...align] : head.map(() => 'left'),
  });
  for (const r of rows) t.push(r.map((c) => String(c)));
  return t.toString();
}

/** Two columns, key and value. */
export function keyValues(rows: readonly (readonly [string, string | number])[]): string {
  const t = new Table({ style: { head: [], border: [], 'padding-left': 1, 'padding-right': 1, compact: true } });
  for (const [k, v] of rows) t.push([k, String(v)]);
  return t.toString();
}

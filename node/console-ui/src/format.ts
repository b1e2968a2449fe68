/**
 * Numbers, sizes and times as people read them: sizes in binary units
 * (KiB, MiB, GiB, TiB, as `df -h` and the drives' makers' tools show them),
 * rates per second, durations in the largest two units, times in the
 * browser's own time zone with the zone named. Pure; no DOM.
 */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** `0 B`, `512 B`, `1.5 KiB`, `20.0 MiB`, `1.23 TiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '–';
  if (n < 1024) return `${Math.round(n)} B`;
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${UNITS[u]}`;
}

export function formatRate(bytesPerSecond: number | null): string {
  return bytesPerSecond === null || !Number.isFinite(bytesPerSecond) ? '–' : `${formatBytes(bytesPerSecond)}/s`;
}

/** A fraction 0..1 as a percentage: `0 %`, `0.4 %`, `37 %`, `100 %`. */
export function formatPercent(f: number): string {
  if (!Number.isFinite(f)) return '–';
  const p = f * 100;
  return `${p > 0 && p < 1 ? p.toFixed(1) : Math.round(p)} %`;
}

/** Seconds as `45 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

const ZERO_TIME = /^0001-01-01/;

/** True for an unset admin-API time (`0001-01-01T00:00:00Z`) or an empty string. */
export function isUnsetTime(iso: string): boolean {
  return iso === '' || ZERO_TIME.test(iso);
}

/**
 * An RFC 3339 time in the browser's zone, zone named: `24 Nov 2026, 14:05:09 GMT+1`.
 * `timeZone` and `locale` are for tests; the page passes neither.
 */
export function formatTime(iso: string, opts: { timeZone?: string; locale?: string } = {}): string {
  if (isUnsetTime(iso)) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  // dateStyle/timeStyle cannot be combined with timeZoneName: spell the fields out
  return new Intl.DateTimeFormat(opts.locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
    ...(opts.timeZone ? { timeZone: opts.timeZone } : {}),
  }).format(d);
}

/** `3 min ago`, `in 2 h` — relative to `now` (ms). */
export function formatAgo(iso: string, now: number): string {
  if (isUnsetTime(iso)) return '–';
  const diff = (now - Date.parse(iso)) / 1000;
  return diff >= 0 ? `${formatDuration(diff)} ago` : `in ${formatDuration(-diff)}`;
}

/** `1 drive`, `3 drives`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Integer with thousands separators in the browser's locale. */
export function formatCount(n: number): string {
  return Number.isFinite(n) ? new Intl.NumberFormat().format(n) : '–';
}

/** `key=value` lines (tags as people type them) as pairs; blank lines skipped, a line without `=` has an empty value. */
export function keyValueLines(text: string): { key: string; value: string }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => ({ key: l.split('=')[0]!.trim(), value: l.includes('=') ? l.slice(l.indexOf('=') + 1).trim() : '' }));
}

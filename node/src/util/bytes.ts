/**
 * Byte-size syntax for configuration values: `128KiB`, `1MiB`, `64KB`,
 * `4096`, `1.5GiB`. Binary suffixes (KiB, MiB, GiB, TiB, with or without the
 * trailing B: `Ki`) are powers of 1024; decimal suffixes (K, KB, M, MB, …)
 * powers of 1000. Case-insensitive, optional space before the unit. Pure.
 */
import { SvcError } from './errors.ts';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  ki: 1024,
  kib: 1024,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
};

export const KiB = 1024;
export const MiB = 1024 * 1024;

/** Parses a byte size; throws `InvalidConfig` naming `name` on bad input. */
export function parseByteSize(value: string, name = 'value'): number {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new SvcError('InvalidConfig', `${name}: invalid byte size "${value}"; expected e.g. 128KiB, 1MiB, 4096`, { variable: name, value });
  }
  const bytes = Number(m[1]) * unit;
  if (!Number.isSafeInteger(Math.floor(bytes))) throw new SvcError('InvalidConfig', `${name}: byte size "${value}" is too large`, { variable: name, value });
  return Math.floor(bytes);
}

/** Formats bytes with binary units, for messages (`131072` → `128 KiB`). */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1 && v % 1024 === 0) {
    v /= 1024;
    i++;
  }
  return `${v} ${units[i]}`;
}

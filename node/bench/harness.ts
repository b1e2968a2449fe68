/**
 * A small benchmark harness. Sections register with `section(name, fn)`;
 * `run.ts` runs them in order and each prints a table as it goes.
 *
 * House rules (PERFORMANCE.md): the machines are shared and noisy, so
 * CPU-bound figures are bytes per CPU-second of this process
 * (`process.cpuUsage()`), and every figure is printed beside a ceiling
 * measured in the same run, as a ratio. No bare wall-clock numbers.
 */

export interface Measurement {
  /** Work units (usually bytes) per CPU-second. */
  readonly perCpuSecond: number;
  /** Work units per wall-clock second (for I/O-bound sections). */
  readonly perWallSecond: number;
  readonly iterations: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
}

export interface MeasureOptions {
  /** Minimum wall time of the timed loop, ms (default 400; `BENCH_SCALE` multiplies it). */
  minMs?: number;
  /** Untimed warm-up iterations (default: as many as fit in 1/8 of minMs, at least 2). */
  warmup?: number;
}

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;

/**
 * Runs `fn` repeatedly for at least `minMs` and returns `unitsPerCall` ×
 * calls per CPU-second and per wall-second.
 */
export async function measure(
  unitsPerCall: number,
  fn: () => unknown | Promise<unknown>,
  opts: MeasureOptions = {},
): Promise<Measurement> {
  const minMs = (opts.minMs ?? 400) * scale;
  const warmEnd = performance.now() + minMs / 8;
  let w = 0;
  while (w < (opts.warmup ?? 2) || (opts.warmup === undefined && performance.now() < warmEnd)) {
    await fn();
    w++;
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  let elapsed = 0;
  do {
    // Batch calls between clock reads so tiny calls are not dominated by them.
    for (let b = 0; b < 4; b++) await fn();
    n += 4;
    elapsed = performance.now() - t0;
  } while (elapsed < minMs);
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = Math.max((cpu.user + cpu.system) / 1e6, 1e-6);
  const wallSeconds = elapsed / 1000;
  return {
    perCpuSecond: (n * unitsPerCall) / cpuSeconds,
    perWallSecond: (n * unitsPerCall) / wallSeconds,
    iterations: n,
    cpuSeconds,
    wallSeconds,
  };
}

/** Synchronous variant of `measure` (no await per call: for sub-µs calls). */
export function measureSync(unitsPerCall: number, fn: () => unknown, opts: MeasureOptions = {}): Measurement {
  const minMs = (opts.minMs ?? 400) * scale;
  const warmEnd = performance.now() + minMs / 8;
  let w = 0;
  while (w < (opts.warmup ?? 2) || (opts.warmup === undefined && performance.now() < warmEnd)) {
    fn();
    w++;
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  let elapsed = 0;
  do {
    for (let b = 0; b < 4; b++) fn();
    n += 4;
    elapsed = performance.now() - t0;
  } while (elapsed < minMs);
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = Math.max((cpu.user + cpu.system) / 1e6, 1e-6);
  const wallSeconds = elapsed / 1000;
  return {
    perCpuSecond: (n * unitsPerCall) / cpuSeconds,
    perWallSecond: (n * unitsPerCall) / wallSeconds,
    iterations: n,
    cpuSeconds,
    wallSeconds,
  };
}

export interface Row {
  /** What was measured. */
  name: string;
  /** The figure, in `unit`. */
  value: number;
  /** e.g. `GB/cpu-s`, `ops/s`. */
  unit: string;
  /** The ceiling it is compared with (same unit), measured in the same run. */
  ceiling?: { name: string; value: number };
  /** A target ratio or absolute value worth flagging, shown as text. */
  note?: string;
}

export interface SectionContext {
  /** Prints one result row now (and keeps it for the summary). */
  row(row: Row): void;
  /** Prints a free-form line inside the section. */
  info(text: string): void;
}

type SectionFn = (ctx: SectionContext) => void | Promise<void>;

const sections: { name: string; fn: SectionFn }[] = [];

/** Registers a benchmark section. Call at module top level. */
export function section(name: string, fn: SectionFn): void {
  sections.push({ name, fn });
}

export const GB = 1e9;

function fmt(v: number): string {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  if (v >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function padStart(s: string, n: number): string {
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}

export function formatRow(r: Row): string {
  let line = `  ${pad(r.name, 44)} ${padStart(fmt(r.value), 9)} ${pad(r.unit, 10)}`;
  if (r.ceiling !== undefined) {
    line += ` ${padStart(`${((r.value / r.ceiling.value) * 100).toFixed(1)}%`, 7)} of ${r.ceiling.name} (${fmt(r.ceiling.value)})`;
  }
  if (r.note !== undefined) line += `  ${r.note}`;
  return line;
}

/** Runs the registered sections whose name contains one of `filters` (all when empty). */
export async function runSections(filters: string[]): Promise<{ name: string; rows: Row[]; error?: unknown }[]> {
  const results: { name: string; rows: Row[]; error?: unknown }[] = [];
  for (const s of sections) {
    if (filters.length > 0 && !filters.some((f) => s.name.includes(f))) continue;
    const rows: Row[] = [];
    console.log(`\n== ${s.name}`);
    try {
      await s.fn({
        row(r) {
          rows.push(r);
          console.log(formatRow(r));
        },
        info(text) {
          console.log(`  ${text}`);
        },
      });
      results.push({ name: s.name, rows });
    } catch (error) {
      console.log(`  SECTION FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      results.push({ name: s.name, rows, error });
    }
  }
  return results;
}

/**
 * Writes `data` to a new file at `path` in 1 MiB writes, starting an
 * fdatasync every `flushEvery` bytes while it goes on (0: none; LocalDrive's
 * write-behind), then fsyncs it once: the raw disk-write ceilings of the
 * object and heal sections.
 */
export async function writeFileSynced(path: string, data: Uint8Array, flushEvery: number): Promise<void> {
  const { open } = await import('node:fs/promises');
  const MiB = 1024 * 1024;
  const fh = await open(path, 'w');
  try {
    let flushing: Promise<void> | undefined;
    for (let off = 0; off < data.length; off += MiB) {
      await fh.write(data.subarray(off, off + MiB));
      if (flushEvery > 0 && flushing === undefined && (off + MiB) % flushEvery === 0) {
        flushing = fh.datasync().then(() => {
          flushing = undefined;
        });
      }
    }
    await flushing;
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Metrics over time without a Prometheus: each node keeps its own recent
 * measurements in memory, one point a minute for the last six hours, taken
 * from the same diagnostics channels the OTLP bridge reads (so the console's
 * graphs and the exported metrics count the same events):
 *
 * - S3 requests, and those answered 4xx and 5xx;
 * - bytes received and sent by S3 requests (their Content-Length, or the
 *   decoded length of an aws-chunked upload; a response cut short counts
 *   what it declared);
 * - this node's raw capacity, used and total (its local drives, each file
 *   system once: the sum over nodes is the cluster's), the last sample of
 *   each minute (held into the next minute until sampled again);
 * - heal tasks finished and failed, objects the scanner visited.
 *
 * The admin API gathers every node's history and adds them point by point
 * (`mergeHistories`): the console's cluster-wide graphs. Nodes' minutes line
 * up because their clocks are synchronized (SPEC). A node keeps its history
 * only while it runs: after a restart its points start again.
 *
 * `MetricsHistory` is pure (an injected clock, no I/O, no Node types: the
 * console's pages share these types); `recordHistory` (history-recorder.ts)
 * subscribes it to the channels.
 */

/** One point a minute. */
export const HISTORY_STEP_MS = 60_000;
/** Six hours of points. */
export const HISTORY_POINTS = 360;

/** Counted per minute (a sum over the minute). */
export const COUNTERS = ['s3Requests', 's3ClientErrors', 's3ServerErrors', 's3BytesIn', 's3BytesOut', 'healTasks', 'healFailures', 'scannerObjects'] as const;
/** Sampled (the minute's last value; null where no sample was taken). */
export const GAUGES = ['capacityUsedBytes', 'capacityTotalBytes'] as const;
export type CounterName = (typeof COUNTERS)[number];
export type GaugeName = (typeof GAUGES)[number];

/** A run of one-minute points, oldest first; the last one is the minute in progress. */
export interface HistoryWindow {
  stepSeconds: number;
  /** Start of the first point's minute, Unix ms. */
  start: number;
  /** Sums over each minute. */
  counters: Record<CounterName, number[]>;
  /** The minute's last sample (null: none taken). */
  gauges: Record<GaugeName, (number | null)[]>;
}

interface Point {
  minute: number;
  counters: Record<CounterName, number>;
  gauges: Record<GaugeName, number | null>;
}

const zeroCounters = (): Record<CounterName, number> => Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Record<CounterName, number>;
const noGauges = (): Record<GaugeName, number | null> => Object.fromEntries(GAUGES.map((g) => [g, null])) as Record<GaugeName, number | null>;

export class MetricsHistory {
  readonly #clock: { now(): number };
  /** Ring of points by minute number modulo HISTORY_POINTS. */
  readonly #ring: (Point | undefined)[] = new Array<Point | undefined>(HISTORY_POINTS);

  constructor(clock: { now(): number }) {
    this.#clock = clock;
  }

  #point(): Point {
    const minute = Math.floor(this.#clock.now() / HISTORY_STEP_MS);
    const slot = minute % HISTORY_POINTS;
    let p = this.#ring[slot];
    if (p === undefined || p.minute !== minute) {
      // a gauge holds its last sample into the next minute until it is sampled again
      const prev = this.#ring[(minute - 1) % HISTORY_POINTS];
      p = { minute, counters: zeroCounters(), gauges: prev !== undefined && prev.minute === minute - 1 ? { ...prev.gauges } : noGauges() };
      this.#ring[slot] = p;
    }
    return p;
  }

  add(name: CounterName, n = 1): void {
    if (Number.isFinite(n) && n > 0) this.#point().counters[name] += n;
  }

  set(name: GaugeName, v: number): void {
    if (Number.isFinite(v)) this.#point().gauges[name] = v;
  }

  /** The last HISTORY_POINTS minutes, the current one included; minutes with nothing recorded are zeros (counters) and nulls (gauges). */
  window(): HistoryWindow {
    const last = Math.floor(this.#clock.now() / HISTORY_STEP_MS);
    const first = last - HISTORY_POINTS + 1;
    const counters = Object.fromEntries(COUNTERS.map((c) => [c, [] as number[]])) as Record<CounterName, number[]>;
    const gauges = Object.fromEntries(GAUGES.map((g) => [g, [] as (number | null)[]])) as Record<GaugeName, (number | null)[]>;
    for (let m = first; m <= last; m++) {
      const p = this.#ring[m % HISTORY_POINTS];
      const here = p !== undefined && p.minute === m ? p : undefined;
      for (const c of COUNTERS) counters[c].push(here?.counters[c] ?? 0);
      for (const g of GAUGES) gauges[g].push(here?.gauges[g] ?? null);
    }
    return { stepSeconds: HISTORY_STEP_MS / 1000, start: first * HISTORY_STEP_MS, counters, gauges };
  }
}

/** A window as a peer sent it, checked (undefined: not a history window). */
export function parseWindow(v: unknown): HistoryWindow | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const w = v as Record<string, unknown>;
  if (typeof w['start'] !== 'number' || typeof w['stepSeconds'] !== 'number' || typeof w['counters'] !== 'object' || typeof w['gauges'] !== 'object' || w['counters'] === null || w['gauges'] === null) return undefined;
  const c = w['counters'] as Record<string, unknown>;
  const g = w['gauges'] as Record<string, unknown>;
  const okCounters = COUNTERS.every((k) => Array.isArray(c[k]) && (c[k] as unknown[]).every((x) => typeof x === 'number'));
  const okGauges = GAUGES.every((k) => Array.isArray(g[k]) && (g[k] as unknown[]).every((x) => x === null || typeof x === 'number'));
  return okCounters && okGauges ? (v as HistoryWindow) : undefined;
}

/**
 * Adds nodes' windows point by point onto the last `points` minutes up to
 * `at` (epoch ms in the newest minute): counters summed; a gauge summed over the nodes that
 * sampled it that minute (null when none did). A window from a node whose
 * clock is a minute apart lands on its own minutes; what falls outside is
 * left out.
 */
export function mergeHistories(windows: readonly HistoryWindow[], at: number, points = HISTORY_POINTS): HistoryWindow {
  const last = Math.floor(at / HISTORY_STEP_MS);
  const first = last - points + 1;
  const counters = Object.fromEntries(COUNTERS.map((c) => [c, new Array<number>(points).fill(0)])) as Record<CounterName, number[]>;
  const gauges = Object.fromEntries(GAUGES.map((g) => [g, new Array<number | null>(points).fill(null)])) as Record<GaugeName, (number | null)[]>;
  for (const w of windows) {
    const offset = Math.round(w.start / HISTORY_STEP_MS) - first;
    for (const c of COUNTERS) {
      w.counters[c].forEach((v, i) => {
        const j = i + offset;
        if (j >= 0 && j < points) counters[c][j]! += v;
      });
    }
    for (const g of GAUGES) {
      w.gauges[g].forEach((v, i) => {
        const j = i + offset;
        if (v !== null && j >= 0 && j < points) gauges[g][j] = (gauges[g][j] ?? 0) + v;
      });
    }
  }
  return { stepSeconds: HISTORY_STEP_MS / 1000, start: first * HISTORY_STEP_MS, counters, gauges };
}

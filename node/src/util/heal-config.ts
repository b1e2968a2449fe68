/**
 * Pace of the background workers (heal, scanner): `SVC_SCANNER_INTERVAL`,
 * `SVC_SCANNER_SPEED`, `SVC_SCANNER_DEEP_SAMPLE`, `SVC_HEAL_SPEED`. Speeds
 * are MinIO's names and map to the Worker contract's tranquility (after a
 * step that took t, sleep t × tranquility): `fastest` 0, `fast` 1,
 * `default` 2 (background work takes at most a third of the node's time:
 * the client-latency budget `npm run bench` checks, GET throughput during a
 * drive rebuild ≥ 70 % of idle), `slow` 5, `slowest` 10.
 */
import { SvcError } from './errors.ts';

export type WorkerSpeed = 'fastest' | 'fast' | 'default' | 'slow' | 'slowest';

export const SPEED_TRANQUILITY: Readonly<Record<WorkerSpeed, number>> = { fastest: 0, fast: 1, default: 2, slow: 5, slowest: 10 };

export interface HealConfig {
  /** Minimum time between scanner cycle starts, ms (default 60 s). */
  readonly scannerIntervalMs: number;
  readonly scannerSpeed: WorkerSpeed;
  /** One object in this many is bitrot-verified per scanner cycle (default 64; 0 never). */
  readonly scannerDeepSample: number;
  /** Background heal and replaced-drive rebuild pace. */
  readonly healSpeed: WorkerSpeed;
  /** A data directory no xl.meta names is collected by the scanner once untouched this long (default 1 h). */
  readonly orphanAgeMs: number;
}

export const HEAL_CONFIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_SCANNER_INTERVAL', 'minimum time between scanner cycle starts: seconds, or 500ms/30s/5m/1h (default 60s)'],
  ['SVC_SCANNER_SPEED', 'scanner pace: fastest, fast, default, slow, slowest'],
  ['SVC_SCANNER_DEEP_SAMPLE', 'bitrot-verify one object in N per scanner cycle (default 64; 0 disables)'],
  ['SVC_HEAL_SPEED', 'background heal and drive rebuild pace: fastest, fast, default (at most a third of the time), slow, slowest'],
  ['SVC_SCANNER_ORPHAN_AGE', 'the scanner collects a data folder no xl.meta names (a write cut off by a crash) once it is untouched this long (default 1h; at least 1s)'],
];

function speed(name: string, raw: string | undefined): WorkerSpeed {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return 'default';
  if (Object.hasOwn(SPEED_TRANQUILITY, v)) return v as WorkerSpeed;
  throw new SvcError('InvalidConfig', `${name}: "${raw}" is not a speed; use fastest, fast, default, slow or slowest`, { variable: name });
}

function interval(name: string, raw: string | undefined, dflt: number, minMs = 100): number {
  if (raw === undefined || raw.trim() === '') return dflt;
  const m = /^([0-9]+)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw new SvcError('InvalidConfig', `${name}: invalid interval "${raw}"; expected seconds or a value like 500ms, 30s, 5m, 1h`, { variable: name });
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : m[2] === 'h' ? n * 3_600_000 : n * 1000;
  if (ms < minMs) throw new SvcError('InvalidConfig', `${name}: at least ${minMs}ms`, { variable: name });
  return ms;
}

export function parseHealConfig(env: Readonly<Record<string, string | undefined>>): HealConfig {
  const sample = (env.SVC_SCANNER_DEEP_SAMPLE ?? '').trim();
  if (sample !== '' && !/^[0-9]+$/.test(sample)) {
    throw new SvcError('InvalidConfig', `SVC_SCANNER_DEEP_SAMPLE: "${sample}" is not a whole number`, { variable: 'SVC_SCANNER_DEEP_SAMPLE' });
  }
  return {
    scannerIntervalMs: interval('SVC_SCANNER_INTERVAL', env.SVC_SCANNER_INTERVAL, 60_000),
    scannerSpeed: speed('SVC_SCANNER_SPEED', env.SVC_SCANNER_SPEED),
    scannerDeepSample: sample === '' ? 64 : Number(sample),
    healSpeed: speed('SVC_HEAL_SPEED', env.SVC_HEAL_SPEED),
    orphanAgeMs: interval('SVC_SCANNER_ORPHAN_AGE', env.SVC_SCANNER_ORPHAN_AGE, 3_600_000, 1_000),
  };
}

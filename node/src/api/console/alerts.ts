/**
 * SPEC.md's suggested alert conditions (Telemetry 4), evaluated by the
 * console from what it can observe, so someone looking at the console sees
 * the same alarms their collector would raise:
 *
 * 1. readiness gauge equals 0 for 2 minutes
 * 2. increase of the start counter over 10 minutes above 3
 * 3. heal running tasks non-zero with rising queue delay for 30 minutes
 * 4. increase of the scanner cycles counter over 24 hours equals 0
 * 5. used capacity above a chosen fraction of deployed raw capacity
 * 6. a TLS certificate of this node within 21 days of its end (or past it)
 *
 * `Observations` keeps what needs history: this node's readiness transitions
 * (from the readiness state machine, always), and samples taken whenever a
 * page asks for the overview (node uptimes: a smaller uptime than before is
 * a restart; heal queue lengths). Where a condition cannot be decided from
 * that, the alert says `pending` or `unavailable` and why, never `ok`.
 * `evaluateAlerts` is pure.
 */
import type { AlertView } from './wire.ts';

export const READINESS_FOR_MS = 2 * 60_000;
export const RESTART_WINDOW_MS = 10 * 60_000;
export const RESTART_LIMIT = 3;
export const HEAL_WINDOW_MS = 30 * 60_000;
export const SCANNER_WINDOW_MS = 24 * 3_600_000;

export interface HealSample {
  readonly at: number;
  readonly active: number;
  readonly queued: number;
}

export interface AlertInputs {
  readonly now: number;
  /** Each other node's clock against this node's (ms), from its internode calls; undefined for a single node. */
  readonly clockSkews?: readonly { readonly node: string; readonly skewMs: number }[];
  /** This node: ready now, and since when it is not. */
  readonly ready: boolean;
  readonly notReadySince: number | undefined;
  /** Restarts observed (uptime going down), and each node's current uptime (s; null when unknown). */
  readonly restarts: readonly { readonly node: string; readonly at: number }[];
  readonly uptimes: readonly { readonly node: string; readonly seconds: number | null }[];
  /** Background heal samples, oldest first; `healAvailable` false when this build runs no background heal. */
  readonly healAvailable: boolean;
  readonly healSamples: readonly HealSample[];
  /** The scanner: absent from this build, or its cycle count and last cycle. */
  readonly scanner: { readonly available: false } | { readonly available: true; readonly lastCycleAt: number | undefined; readonly runningSinceMs: number };
  readonly rawUsed: number;
  readonly rawTotal: number;
  readonly capacityFraction: number;
  /** This node's TLS certificates (served pairs and trusted CAs); unavailable when it serves plain HTTP. */
  readonly certificates:
    | { readonly available: false }
    | { readonly available: true; readonly list: readonly { readonly file: string; readonly kind: 'server' | 'ca'; readonly notAfter: number }[]; readonly warnBeforeMs: number };
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
const pct = (f: number) => `${(f * 100).toFixed(f < 0.1 ? 1 : 0)} %`;

function readinessAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'readiness' as const,
    title: 'Node not ready',
    rule: 'readiness gauge equals 0 for 2 minutes',
    action: 'See the readiness details above: bring back the drives or nodes it waits for; the node recovers by itself once they are back.',
  };
  if (i.ready) return { ...base, state: 'ok', detail: 'The node is ready.' };
  const since = i.notReadySince ?? i.now;
  const down = i.now - since;
  if (down >= READINESS_FOR_MS) return { ...base, state: 'firing', detail: `The node has not been ready for ${minutes(down)}.` };
  return { ...base, state: 'pending', detail: `The node has not been ready for ${Math.round(down / 1000)} s; this alert fires after 2 minutes.` };
}

function restartAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'restarts' as const,
    title: 'Restart loop',
    rule: 'increase of the start counter over 10 minutes above 3',
    action: "Read the node's log around its start-up: a node that keeps restarting usually fails a start-up check (drives, credentials, ports).",
  };
  const window = i.now - RESTART_WINDOW_MS;
  const perNode = new Map<string, number>();
  for (const r of i.restarts) if (r.at >= window) perNode.set(r.node, (perNode.get(r.node) ?? 0) + 1);
  const looping = [...perNode].filter(([, n]) => n > RESTART_LIMIT);
  if (looping.length > 0) return { ...base, state: 'firing', detail: `Restarts seen in the last 10 min: ${looping.map(([n, c]) => `${n} ${c} times`).join(', ')}.` };
  // A node up for less than 10 minutes has started once in the window as far as anyone can see: one
  // start is not a loop (the condition needs more than 3), so that is no reason to sound a warning.
  const seen = [...perNode].map(([n, c]) => `${n} restarted ${c} time${c === 1 ? '' : 's'}`);
  const recent = i.uptimes.filter((u) => u.seconds !== null && u.seconds * 1000 < RESTART_WINDOW_MS).map((u) => `${u.node} started ${u.seconds! < 60 ? `${u.seconds} s` : `${Math.round(u.seconds! / 60)} min`} ago`);
  const unknown = i.uptimes.filter((u) => u.seconds === null).map((u) => u.node);
  const note = 'The console counts the restarts it sees while it is open; the start counter (svc_start_total) in your collector counts every one.';
  const facts = [...seen, ...recent].join('; ');
  if (unknown.length === i.uptimes.length && unknown.length > 0) {
    return { ...base, state: 'unavailable', detail: `No node reported its uptime (${unknown.join(', ')}). ${note}` };
  }
  return {
    ...base,
    state: 'ok',
    detail: `${facts === '' ? 'Every node has been up for more than 10 minutes' : `No restart loop: ${facts}`}${unknown.length > 0 ? `; ${unknown.join(', ')} did not report its uptime` : ''}. ${note}`,
  };
}

function healAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'heal-queue' as const,
    title: 'Heal falling behind',
    rule: 'heal running tasks non-zero with rising queue delay for 30 minutes',
    action: 'Check the Healing page: drives that stay offline keep the queue growing; bring them back or replace them.',
  };
  if (!i.healAvailable) return { ...base, state: 'unavailable', detail: 'This build runs no background heal; nothing is queued to heal.' };
  const last = i.healSamples[i.healSamples.length - 1];
  if (last === undefined) return { ...base, state: 'pending', detail: 'No heal status observed yet.' };
  if (last.active === 0) return { ...base, state: 'ok', detail: `No heal task is running (${last.queued} queued).` };
  // the running stretch: samples back to the last one without active tasks
  let first = i.healSamples.length - 1;
  while (first > 0 && i.healSamples[first - 1]!.active > 0) first--;
  const stretch = i.healSamples.slice(first);
  const from = stretch[0]!;
  const rising = stretch.every((s, k) => k === 0 || s.queued >= stretch[k - 1]!.queued) && last.queued > from.queued;
  const observed = last.at - from.at;
  const detail = `${last.active} heal task(s) running, ${last.queued} queued (was ${from.queued} ${minutes(observed)} ago).`;
  if (!rising) return { ...base, state: 'ok', detail: `${detail} The queue is not growing.` };
  if (observed >= HEAL_WINDOW_MS) return { ...base, state: 'firing', detail: `${detail} The queue has grown for ${minutes(observed)}.` };
  return { ...base, state: 'pending', detail: `${detail} The queue is growing; this alert fires after 30 minutes of growth (the console measures while it is open).` };
}

function scannerAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'scanner' as const,
    title: 'Scanner stalled',
    rule: 'increase of the scanner cycles counter over 24 hours equals 0',
    action: "Check the node's log for scanner errors; a stalled scanner stops finding damaged objects and stops updating usage.",
  };
  const s = i.scanner;
  if (!s.available) return { ...base, state: 'unavailable', detail: 'This build runs no background scanner: nothing checks stored objects in the background.' };
  if (s.lastCycleAt !== undefined && i.now - s.lastCycleAt < SCANNER_WINDOW_MS) {
    return { ...base, state: 'ok', detail: `The last scanner cycle ended ${minutes(i.now - s.lastCycleAt)} ago.` };
  }
  if (s.runningSinceMs < SCANNER_WINDOW_MS) {
    return { ...base, state: 'pending', detail: `No scanner cycle has ended in the ${minutes(s.runningSinceMs)} the nodes have been up; this alert fires after 24 hours without one.` };
  }
  return { ...base, state: 'firing', detail: s.lastCycleAt === undefined ? 'No scanner cycle has ended in the last 24 hours.' : `The last scanner cycle ended ${Math.round((i.now - s.lastCycleAt) / 3_600_000)} h ago.` };
}

function capacityAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'capacity' as const,
    title: 'Capacity running out',
    rule: `used capacity above ${pct(i.capacityFraction)} of deployed raw capacity`,
    action: 'Delete data you no longer need, or add a pool (see the README: growing by a pool). The threshold is SVC_CONSOLE_CAPACITY_ALERT.',
  };
  if (i.rawTotal <= 0) return { ...base, state: 'unavailable', detail: 'No drive reported its capacity.' };
  const f = i.rawUsed / i.rawTotal;
  const detail = `${pct(f)} of the raw capacity is used.`;
  return { ...base, state: f > i.capacityFraction ? 'firing' : 'ok', detail };
}

const DAY_MS = 24 * 3_600_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function certificateAlert(i: AlertInputs): AlertView {
  const c = i.certificates;
  const days = c.available ? Math.round(c.warnBeforeMs / DAY_MS) : 21;
  const base = {
    id: 'certificates' as const,
    title: 'TLS certificate expiring',
    rule: `a TLS certificate of this node ends within ${days} days (svc_tls_certificate_not_after_seconds - time())`,
    action: 'Renew the certificate and replace public.crt and private.key in the certificate directory (a Kubernetes Secret update does this): the node picks the new files up without a restart.',
  };
  if (!c.available) return { ...base, state: 'unavailable', detail: 'This node serves plain HTTP: it has no certificate to watch.' };
  if (c.list.length === 0) return { ...base, state: 'unavailable', detail: 'No certificate is loaded.' };
  const sorted = [...c.list].sort((a, b) => a.notAfter - b.notAfter);
  const ending = sorted.filter((x) => x.notAfter - i.now <= c.warnBeforeMs);
  if (ending.length === 0) {
    const first = sorted[0]!;
    return { ...base, state: 'ok', detail: `Every certificate is valid for more than ${days} days; the first to end is ${first.file} on ${day(first.notAfter)}.` };
  }
  const describe = (x: (typeof sorted)[number]) =>
    x.notAfter <= i.now ? `${x.file} (${x.kind === 'ca' ? 'trusted CA' : 'served'}) expired on ${day(x.notAfter)}` : `${x.file} (${x.kind === 'ca' ? 'trusted CA' : 'served'}) ends on ${day(x.notAfter)}, in ${Math.floor((x.notAfter - i.now) / DAY_MS)} days`;
  return { ...base, state: 'firing', detail: `${ending.map(describe).join('; ')}.` };
}

/** Skew between nodes' clocks worth an alert (NTP keeps them within milliseconds). */
export const CLOCK_SKEW_ALERT_MS = 2_000;

function clockSkewAlert(i: AlertInputs): AlertView {
  const base = {
    id: 'clock-skew' as const,
    title: 'Node clocks disagree',
    rule: `a node's clock differs from this node's by ${CLOCK_SKEW_ALERT_MS / 1000} s or more (svc_peer_clock_skew_seconds)`,
    action: 'Synchronize the nodes\' clocks (NTP, chrony). Object lock, lifecycle and the internode tokens (refused beyond 5 minutes) depend on them.',
  };
  if (i.clockSkews === undefined) return { ...base, state: 'unavailable', detail: 'A single node has no other clock to compare with.' };
  if (i.clockSkews.length === 0) return { ...base, state: 'pending', detail: 'No other node has called this one yet.' };
  const off = i.clockSkews.filter((s) => Math.abs(s.skewMs) >= CLOCK_SKEW_ALERT_MS);
  const say = (s: { node: string; skewMs: number }) => `${s.node} ${(Math.abs(s.skewMs) / 1000).toFixed(1)} s ${s.skewMs > 0 ? 'behind' : 'ahead'}`;
  if (off.length > 0) return { ...base, state: 'firing', detail: `${off.map(say).join(', ')}.` };
  const worst = [...i.clockSkews].sort((a, b) => Math.abs(b.skewMs) - Math.abs(a.skewMs))[0]!;
  return { ...base, state: 'ok', detail: `Every node within ${CLOCK_SKEW_ALERT_MS / 1000} s of this one (largest: ${worst.node}, ${Math.abs(worst.skewMs)} ms).` };
}

export function evaluateAlerts(i: AlertInputs): AlertView[] {
  return [readinessAlert(i), restartAlert(i), healAlert(i), scannerAlert(i), capacityAlert(i), certificateAlert(i), clockSkewAlert(i)];
}

/** What the alerts need to remember, bounded. */
export class Observations {
  #notReadySince: number | undefined;
  readonly #uptimes = new Map<string, number>();
  #restarts: { node: string; at: number }[] = [];
  #heal: HealSample[] = [];

  /** `ready` as the node starts (a node starts not ready). */
  constructor(now: number, ready = false) {
    this.#notReadySince = ready ? undefined : now;
  }

  get notReadySince(): number | undefined {
    return this.#notReadySince;
  }

  readiness(ready: boolean, at: number): void {
    if (ready) this.#notReadySince = undefined;
    else this.#notReadySince ??= at;
  }

  /** A node's uptime as the overview reported it; a smaller value than last time is a restart. */
  uptime(node: string, seconds: number, at: number): void {
    const prev = this.#uptimes.get(node);
    if (prev !== undefined && seconds + 1 < prev) this.#restarts.push({ node, at });
    this.#uptimes.set(node, seconds);
    this.#restarts = this.#restarts.filter((r) => r.at >= at - RESTART_WINDOW_MS).slice(-100);
  }

  get restarts(): readonly { node: string; at: number }[] {
    return this.#restarts;
  }

  /** A heal sample; kept at most one per 10 s, for the 30-minute window and a little more. */
  heal(sample: HealSample): void {
    const last = this.#heal[this.#heal.length - 1];
    if (last !== undefined && sample.at - last.at < 10_000) this.#heal[this.#heal.length - 1] = { ...sample, at: last.at };
    else this.#heal.push(sample);
    this.#heal = this.#heal.filter((s) => s.at >= sample.at - HEAL_WINDOW_MS - 5 * 60_000);
  }

  get healSamples(): readonly HealSample[] {
    return this.#heal;
  }
}

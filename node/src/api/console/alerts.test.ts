import { describe, expect, it } from 'vitest';
import { type AlertInputs, evaluateAlerts, Observations } from './alerts.ts';

const MIN = 60_000;
const base: AlertInputs = {
  now: 100 * 60 * MIN,
  ready: true,
  notReadySince: undefined,
  restarts: [],
  uptimes: [{ node: 'n1', seconds: 3600 }],
  healAvailable: true,
  healSamples: [],
  scanner: { available: true, lastCycleAt: 100 * 60 * MIN - 5 * MIN, runningSinceMs: 3600_000 },
  rawUsed: 10,
  rawTotal: 100,
  capacityFraction: 0.8,
  certificates: { available: true, list: [{ file: '/c/public.crt', kind: 'server', notAfter: 100 * 60 * MIN + 60 * 24 * 60 * MIN }], warnBeforeMs: 21 * 24 * 60 * MIN },
};
const state = (i: Partial<AlertInputs>, id: string) => evaluateAlerts({ ...base, ...i }).find((a) => a.id === id)!.state;

describe('SPEC alert conditions', () => {
  it('every alert has its SPEC rule and is ok on a healthy, quiet cluster', () => {
    const all = evaluateAlerts({ ...base, healSamples: [{ at: base.now, active: 0, queued: 0 }], clockSkews: [{ node: 'b:9000', skewMs: 3 }] });
    expect(all.map((a) => [a.id, a.state])).toEqual([
      ['readiness', 'ok'],
      ['restarts', 'ok'],
      ['heal-queue', 'ok'],
      ['scanner', 'ok'],
      ['capacity', 'ok'],
      ['certificates', 'ok'],
      ['clock-skew', 'ok'],
    ]);
    expect(all.map((a) => a.rule)).toEqual([
      'readiness gauge equals 0 for 2 minutes',
      'increase of the start counter over 10 minutes above 3',
      'heal running tasks non-zero with rising queue delay for 30 minutes',
      'increase of the scanner cycles counter over 24 hours equals 0',
      'used capacity above 80 % of deployed raw capacity',
      'a TLS certificate of this node ends within 21 days (svc_tls_certificate_not_after_seconds - time())',
      "a node's clock differs from this node's by 2 s or more (svc_peer_clock_skew_seconds)",
    ]);
  });

  it('clock skew: firing when a node is 2 s or more off; pending before any call; unavailable on a single node', () => {
    const a = evaluateAlerts({ ...base, clockSkews: [{ node: 'b:9000', skewMs: 40 }, { node: 'c:9000', skewMs: -2_500 }] }).find((x) => x.id === 'clock-skew')!;
    expect(a.state).toBe('firing');
    expect(a.detail).toBe('c:9000 2.5 s ahead.');
    expect(state({ clockSkews: [] }, 'clock-skew')).toBe('pending');
    expect(state({}, 'clock-skew')).toBe('unavailable');
  });

  it('certificates: firing within 21 days of an end (served or trusted CA) or past it; unavailable in plain HTTP', () => {
    const DAY = 24 * 60 * MIN;
    const at = (days: number) => base.now + days * DAY;
    const alert = (list: { file: string; kind: 'server' | 'ca'; notAfter: number }[]) =>
      evaluateAlerts({ ...base, certificates: { available: true, list, warnBeforeMs: 21 * DAY } }).find((a) => a.id === 'certificates')!;
    expect(alert([{ file: '/c/public.crt', kind: 'server', notAfter: at(22) }]).state).toBe('ok');
    const soon = alert([
      { file: '/c/public.crt', kind: 'server', notAfter: at(90) },
      { file: '/c/CAs/ca.crt', kind: 'ca', notAfter: at(10.5) },
    ]);
    expect(soon.state).toBe('firing');
    expect(soon.detail).toBe(`/c/CAs/ca.crt (trusted CA) ends on ${new Date(at(10.5)).toISOString().slice(0, 10)}, in 10 days.`);
    expect(alert([{ file: '/c/public.crt', kind: 'server', notAfter: at(-1) }]).detail).toMatch(/^\/c\/public\.crt \(served\) expired on /);
    expect(state({ certificates: { available: false } }, 'certificates')).toBe('unavailable');
  });

  it('readiness: pending under 2 minutes, firing from 2 minutes', () => {
    expect(state({ ready: false, notReadySince: base.now - 90_000 }, 'readiness')).toBe('pending');
    expect(state({ ready: false, notReadySince: base.now - 2 * MIN }, 'readiness')).toBe('firing');
  });

  it('restarts: more than 3 in 10 minutes fire; a fresh start or three restarts are no loop', () => {
    const r = (n: number, ago: number) => Array.from({ length: n }, (_, i) => ({ node: 'n1', at: base.now - ago - i }));
    expect(state({ restarts: r(4, MIN) }, 'restarts')).toBe('firing');
    expect(state({ restarts: r(3, MIN), uptimes: [{ node: 'n1', seconds: 30 }] }, 'restarts')).toBe('ok');
    // a node that just started (issue 29 defect 13: it read "pending" for 10 minutes)
    expect(state({ uptimes: [{ node: 'n1', seconds: 5 }] }, 'restarts')).toBe('ok');
    expect(state({ restarts: r(4, 11 * MIN) }, 'restarts')).toBe('ok');
    expect(state({ uptimes: [{ node: 'n1', seconds: null }] }, 'restarts')).toBe('unavailable');
    expect(state({ uptimes: [{ node: 'n1', seconds: null }, { node: 'n2', seconds: 900 }] }, 'restarts')).toBe('ok');
  });

  it('heal: tasks running and the queue growing for 30 minutes fire', () => {
    const samples = (n: number, stepMs: number, queued: (i: number) => number, active = 2) => Array.from({ length: n }, (_, i) => ({ at: base.now - (n - 1 - i) * stepMs, active, queued: queued(i) }));
    expect(state({ healSamples: samples(31, MIN, (i) => 10 + i) }, 'heal-queue')).toBe('firing');
    expect(state({ healSamples: samples(10, MIN, (i) => 10 + i) }, 'heal-queue')).toBe('pending');
    expect(state({ healSamples: samples(31, MIN, (i) => 40 - i) }, 'heal-queue')).toBe('ok');
    expect(state({ healSamples: samples(31, MIN, (i) => 10 + i, 0) }, 'heal-queue')).toBe('ok');
    expect(state({ healSamples: [] }, 'heal-queue')).toBe('pending');
    expect(state({ healAvailable: false }, 'heal-queue')).toBe('unavailable');
  });

  it('scanner: no cycle in 24 hours fires; absent scanner is not measured', () => {
    expect(state({ scanner: { available: true, lastCycleAt: base.now - 25 * 60 * MIN, runningSinceMs: 48 * 60 * MIN } }, 'scanner')).toBe('firing');
    expect(state({ scanner: { available: true, lastCycleAt: undefined, runningSinceMs: 60 * MIN } }, 'scanner')).toBe('pending');
    expect(state({ scanner: { available: true, lastCycleAt: undefined, runningSinceMs: 25 * 60 * MIN } }, 'scanner')).toBe('firing');
    expect(state({ scanner: { available: false } }, 'scanner')).toBe('unavailable');
  });

  it('capacity: above the chosen fraction of raw capacity', () => {
    expect(state({ rawUsed: 81 }, 'capacity')).toBe('firing');
    expect(state({ rawUsed: 80 }, 'capacity')).toBe('ok');
    expect(state({ rawUsed: 50, capacityFraction: 0.4 }, 'capacity')).toBe('firing');
    expect(state({ rawTotal: 0 }, 'capacity')).toBe('unavailable');
  });
});

describe('Observations', () => {
  it('remembers since when the node is not ready', () => {
    const o = new Observations(1000, false);
    expect(o.notReadySince).toBe(1000);
    o.readiness(false, 5000);
    expect(o.notReadySince).toBe(1000);
    o.readiness(true, 6000);
    expect(o.notReadySince).toBeUndefined();
    o.readiness(false, 7000);
    expect(o.notReadySince).toBe(7000);
  });

  it('counts a smaller uptime than before as a restart, for 10 minutes', () => {
    const o = new Observations(0, true);
    o.uptime('n1', 500, 0);
    o.uptime('n1', 505, 5000);
    o.uptime('n1', 3, 10_000);
    o.uptime('n2', 3, 10_000);
    expect(o.restarts).toEqual([{ node: 'n1', at: 10_000 }]);
    o.uptime('n1', 700, 11 * MIN);
    expect(o.restarts).toEqual([]);
  });

  it('keeps heal samples at most every 10 s, for the window', () => {
    const o = new Observations(0, true);
    for (let t = 0; t <= 60 * MIN; t += 1000) o.heal({ at: t, active: 1, queued: t });
    const s = o.healSamples;
    expect(s.length).toBeLessThanOrEqual(35 * 6 + 2);
    expect(s[0]!.at).toBeGreaterThanOrEqual(60 * MIN - 35 * MIN);
    expect(s[s.length - 1]!.queued).toBe(60 * MIN);
  });
});

/** Lease-based leader election with a fake clock and an in-memory lease with optimistic concurrency. */
import { describe, expect, it } from 'vitest';
import { decideLease, LeaderElector, type LeaseClient, type LeaseRecord } from './leader-election.ts';

class MemoryLease implements LeaseClient {
  rec: LeaseRecord | undefined;
  #rv = 0;
  fail = false;
  async get() {
    if (this.fail) throw new Error('api down');
    return this.rec && { ...this.rec };
  }
  async create(r: LeaseRecord) {
    if (this.fail) throw new Error('api down');
    if (this.rec) throw Object.assign(new Error('exists'), { code: 409 });
    this.rec = { ...r, resourceVersion: String(++this.#rv) };
  }
  async update(r: LeaseRecord) {
    if (this.fail) throw new Error('api down');
    if (r.resourceVersion !== this.rec?.resourceVersion) throw Object.assign(new Error('conflict'), { code: 409 });
    this.rec = { ...r, resourceVersion: String(++this.#rv) };
  }
}

const noTimers = { setTimeout: () => 0, clearTimeout: () => undefined };

describe('leader election', () => {
  it('decides create / renew / wait / take over an expired lease', () => {
    const now = new Date('2026-01-01T00:00:10Z');
    expect(decideLease(undefined, 'a', now)).toEqual({ action: 'create' });
    expect(decideLease({ holderIdentity: 'a', renewTime: '2026-01-01T00:00:05Z', leaseDurationSeconds: 15 }, 'a', now)).toEqual({ action: 'renew' });
    expect(decideLease({ holderIdentity: 'b', renewTime: '2026-01-01T00:00:05Z', leaseDurationSeconds: 15 }, 'a', now)).toEqual({ action: 'wait', holder: 'b', expiresInMs: 10_000 });
    expect(decideLease({ holderIdentity: 'b', renewTime: '2026-01-01T00:00:00Z', leaseDurationSeconds: 10 }, 'a', now)).toEqual({ action: 'acquire' });
    expect(decideLease({ holderIdentity: '' }, 'a', now)).toEqual({ action: 'acquire' });
  });

  it('one of two candidates leads; the other takes over after the lease expires; a leader that cannot renew steps down', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const lease = new MemoryLease();
    const events: string[] = [];
    const mk = (id: string) =>
      new LeaderElector({ identity: id, client: lease, now: () => now, timers: noTimers, leaseDurationSeconds: 15, renewDeadlineMs: 10_000, onStartedLeading: () => events.push(`${id} leads`), onStoppedLeading: () => events.push(`${id} stops`) });
    const a = mk('a');
    const b = mk('b');
    await a.tick();
    await b.tick();
    expect([a.leading, b.leading]).toEqual([true, false]);
    now = new Date('2026-01-01T00:00:05Z');
    await a.tick();
    await b.tick();
    expect(b.leading).toBe(false);
    // a's API calls fail: it keeps leading within the renew deadline, then steps down.
    lease.fail = true;
    now = new Date('2026-01-01T00:00:12Z');
    await a.tick();
    expect(a.leading).toBe(true);
    now = new Date('2026-01-01T00:00:16Z');
    await a.tick();
    expect(a.leading).toBe(false);
    lease.fail = false;
    now = new Date('2026-01-01T00:00:21Z');
    await b.tick();
    expect(b.leading).toBe(true);
    expect(lease.rec!.holderIdentity).toBe('b');
    expect(lease.rec!.leaseTransitions).toBe(1);
    expect(events).toEqual(['a leads', 'a stops', 'b leads']);
  });

  it('two candidates racing for an expired lease: the stale write loses (409), one leader', async () => {
    const now = new Date('2026-01-01T00:01:00Z');
    const lease = new MemoryLease();
    await lease.create({ holderIdentity: 'old', renewTime: '2026-01-01T00:00:00Z', leaseDurationSeconds: 15 });
    const snapshot = await lease.get();
    const a = new LeaderElector({ identity: 'a', client: lease, now: () => now, timers: noTimers, onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    const racing: LeaseClient = { get: async () => snapshot, create: lease.create.bind(lease), update: lease.update.bind(lease) };
    const b = new LeaderElector({ identity: 'b', client: racing, now: () => now, timers: noTimers, onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    await a.tick();
    await b.tick();
    expect([a.leading, b.leading]).toEqual([true, false]);
  });

  it('stop() releases the lease so a successor need not wait', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const lease = new MemoryLease();
    const a = new LeaderElector({ identity: 'a', client: lease, now: () => now, timers: noTimers, onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    await a.tick();
    await a.stop();
    expect(lease.rec!.holderIdentity).toBe('');
    expect(decideLease(lease.rec, 'b', now)).toEqual({ action: 'acquire' });
  });
});

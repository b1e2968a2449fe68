/** The work queue: dedupe, per-key serialisation, capped exponential backoff, delayed requeue. */
import { describe, expect, it } from 'vitest';
import { WorkQueue } from './workqueue.ts';

/** Manual timers: `advance(ms)` fires what is due. */
function manualTimers() {
  let now = 0;
  const pending: { at: number; fn: () => void; id: number }[] = [];
  let seq = 0;
  return {
    now: () => now,
    timers: {
      setTimeout: (fn: () => void, ms: number) => {
        const id = ++seq;
        pending.push({ at: now + ms, fn, id });
        return id;
      },
      clearTimeout: (h: unknown) => {
        const i = pending.findIndex((p) => p.id === h);
        if (i >= 0) pending.splice(i, 1);
      },
    },
    async advance(ms: number) {
      now += ms;
      for (;;) {
        pending.sort((a, b) => a.at - b.at);
        const due = pending[0];
        if (!due || due.at > now) break;
        pending.shift();
        due.fn();
        await new Promise((r) => setImmediate(r));
      }
    },
    pendingDelays: () => pending.map((p) => p.at - now),
  };
}

describe('WorkQueue', () => {
  it('dedupes a key queued many times and never runs one key twice at once', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new WorkQueue({
      concurrency: 1,
      handler: async (k) => {
        runs.push(k);
        if (k === 'block') await gate;
      },
    });
    q.add('block');
    for (let i = 0; i < 10; i++) q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    release();
    await q.idle();
    expect(runs).toEqual(['block', 'a', 'b']);
    // An add while the key runs re-runs it once afterwards, never concurrently.
    runs.length = 0;
    let active = 0;
    let maxActive = 0;
    const q2 = new WorkQueue({
      concurrency: 4,
      handler: async (k) => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs.push(k);
        await new Promise((r) => setTimeout(r, 10));
        active--;
      },
    });
    q2.add('a');
    q2.add('a');
    q2.add('a');
    await new Promise((r) => setTimeout(r, 50));
    await q2.idle();
    expect(runs).toEqual(['a', 'a']);
    expect(maxActive).toBe(1);
  });

  it('backs off exponentially per key on failure, capped, and resets on success', async () => {
    const t = manualTimers();
    let fail = 5;
    const q = new WorkQueue({ baseBackoffMs: 5_000, maxBackoffMs: 40_000, timers: t.timers, handler: async () => {
      if (fail-- > 0) throw new Error('boom');
    } }, t.now);
    q.add('k');
    await q.idle();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      delays.push(t.pendingDelays()[0]!);
      await t.advance(delays[delays.length - 1]!);
      await q.idle();
    }
    expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 40_000]);
    expect(q.failures('k')).toBe(0);
  });

  it('honours requeueAfterMs; an earlier request wins over a later one', async () => {
    const t = manualTimers();
    const runs: number[] = [];
    const q = new WorkQueue({ timers: t.timers, handler: async () => {
      runs.push(t.now());
      return runs.length === 1 ? { requeueAfterMs: 10_000 } : {};
    } }, t.now);
    q.add('k');
    await q.idle();
    q.add('k', 30_000);
    q.add('k', 2_000);
    expect(t.pendingDelays()).toEqual([2_000]);
    await t.advance(2_000);
    await q.idle();
    expect(runs).toEqual([0, 2_000]);
  });
});

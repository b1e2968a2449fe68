import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { SvcError } from './errors.ts';
import { silentLogger } from './logger.ts';
import { periodicWorker, type WorkerStatus, type WorkerTask, type WorkResult, Worker } from './worker.ts';

/** Lets pending promise callbacks run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

/**
 * A toy worker: moves items from a queue to `done`, each taking `costMs` of
 * clock time; idle when the queue is empty, done when `finishWhenEmpty`.
 */
class ToyTask implements WorkerTask<{ done: number; queued: number }> {
  readonly name = 'toy';
  readonly queue: number[] = [];
  readonly done: number[] = [];
  readonly persisted: WorkerStatus<{ done: number; queued: number }>[] = [];
  finishWhenEmpty = false;
  failOn: number | undefined;
  persistFails = false;
  calls = 0;
  readonly clock: ManualClock;
  readonly costMs: number;
  constructor(clock: ManualClock, costMs = 0) {
    this.clock = clock;
    this.costMs = costMs;
  }
  async work(): Promise<WorkResult> {
    this.calls++;
    const item = this.queue.shift();
    if (item === undefined) return this.finishWhenEmpty ? 'done' : 'idle';
    if (item === this.failOn) throw new SvcError('FileCorrupt', `item ${item} is unreadable`);
    if (this.costMs > 0) await this.clock.advance(this.costMs);
    this.done.push(item);
    return 'busy';
  }
  progress() {
    return { done: this.done.length, queued: this.queue.length };
  }
  async persist(s: WorkerStatus<{ done: number; queued: number }>): Promise<void> {
    if (this.persistFails) throw new Error('disk full');
    this.persisted.push(s);
  }
}

describe('Worker', () => {
  it('walks idle → running → idle (waiting) → running → stopping → stopped, persisting the final state', async () => {
    const clock = new ManualClock(1_000);
    const task = new ToyTask(clock);
    const w = new Worker(task, { clock, logger: silentLogger, idleMs: 5_000 });
    expect(w.status()).toMatchObject({ name: 'toy', state: 'idle', steps: 0 });
    expect(w.status().startedAt).toBeUndefined();

    task.queue.push(1, 2, 3);
    w.start();
    expect(w.state).toBe('running');
    expect(() => w.start()).toThrow(/already/);
    await settle();
    expect(task.done).toEqual([1, 2, 3]);
    expect(w.status()).toMatchObject({ state: 'idle', steps: 3, startedAt: 1_000, progress: { done: 3, queued: 0 } });

    // New work: wake cuts the idle wait short.
    task.queue.push(4);
    w.wake();
    await settle();
    expect(task.done).toEqual([1, 2, 3, 4]);
    // Without a wake the idle wait ends after idleMs on the clock.
    task.queue.push(5);
    await settle();
    expect(task.done).toEqual([1, 2, 3, 4]);
    await clock.advance(5_000);
    await settle();
    expect(task.done).toEqual([1, 2, 3, 4, 5]);

    await w.stop();
    expect(w.status()).toMatchObject({ state: 'stopped', steps: 5, endedAt: 6_000 });
    expect(task.persisted.at(-1)).toMatchObject({ state: 'stopped', progress: { done: 5 } });
    expect(w.active).toBe(false);

    // A stopped worker starts again.
    task.queue.push(6);
    w.start();
    await settle();
    expect(task.done.at(-1)).toBe(6);
    expect(w.status().steps).toBe(1);
    await w.stop();
  });

  it('runs its loop outside the async context of the caller that started it (a request\'s trace stays the request\'s)', async () => {
    const clock = new ManualClock();
    const request = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const task = new ToyTask(clock);
    const work = task.work.bind(task);
    task.work = () => {
      seen.push(request.getStore());
      return work();
    };
    task.queue.push(1, 2);
    task.finishWhenEmpty = true;
    const w = new Worker(task, { clock, logger: silentLogger });
    request.run('admin request', () => w.start());
    expect(await w.done()).toMatchObject({ state: 'completed', steps: 2 });
    expect(seen).toEqual([undefined, undefined, undefined]);
  });

  it('completes when the task is done, and fails (with the reason) when it throws', async () => {
    const clock = new ManualClock();
    const ok = new ToyTask(clock);
    ok.queue.push(1, 2);
    ok.finishWhenEmpty = true;
    const w = new Worker(ok, { clock, logger: silentLogger });
    w.start();
    expect(await w.done()).toMatchObject({ state: 'completed', steps: 2 });
    expect(ok.persisted.at(-1)?.state).toBe('completed');

    const bad = new ToyTask(clock);
    bad.queue.push(1, 2, 3);
    bad.failOn = 2;
    const f = new Worker(bad, { clock, logger: silentLogger });
    f.start();
    const s = await f.done();
    expect(s).toMatchObject({ state: 'failed', steps: 1, lastError: 'FileCorrupt: item 2 is unreadable' });
    expect(bad.done).toEqual([1]);
    expect(bad.persisted.at(-1)?.state).toBe('failed');
  });

  it('throttles itself: after a step of t ms it sleeps t × tranquility on the clock', async () => {
    const clock = new ManualClock();
    const task = new ToyTask(clock, 100);
    task.queue.push(1, 2, 3);
    const w = new Worker(task, { clock, logger: silentLogger, tranquility: 2 });
    w.start();
    await settle();
    expect(task.done).toEqual([1]);
    expect(w.status().throttledMs).toBe(200);
    await clock.advance(199);
    await settle();
    expect(task.done).toEqual([1]);
    await clock.advance(1);
    await settle();
    expect(task.done).toEqual([1, 2]);
    expect(w.status().throttledMs).toBe(400);
    // Full speed from now on.
    w.setTranquility(0);
    await clock.advance(200);
    await settle();
    expect(task.done).toEqual([1, 2, 3]);
    expect(w.status().throttledMs).toBe(400);
    expect(() => w.setTranquility(-1)).toThrow(RangeError);
    await w.stop();
  });

  it('pause holds the loop after its current step; resume continues', async () => {
    const clock = new ManualClock();
    const task = new ToyTask(clock, 10);
    task.queue.push(1, 2, 3, 4);
    const w = new Worker(task, { clock, logger: silentLogger, tranquility: 1 });
    w.start();
    await settle();
    expect(task.done).toEqual([1]);
    // Paused during the throttle sleep after step 1: no further step runs.
    w.pause();
    expect(w.state).toBe('paused');
    await clock.advance(10_000);
    await settle();
    await clock.advance(10_000);
    await settle();
    expect(task.done).toEqual([1]);
    expect(w.state).toBe('paused');
    w.resume();
    await settle();
    await clock.advance(10);
    await settle();
    expect(task.done.length).toBeGreaterThanOrEqual(3);
    await w.stop();
    expect(w.state).toBe('stopped');
  });

  it('stop aborts the task signal and resolves only once the in-flight step returned', async () => {
    const clock = new ManualClock();
    const order: string[] = [];
    let sawAbort = false;
    const task: WorkerTask<null> = {
      name: 'slow',
      async work(signal) {
        order.push('work');
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        sawAbort = signal.aborted;
        await new Promise((r) => setImmediate(r));
        order.push('work returned');
        return 'busy';
      },
      progress: () => null,
    };
    const w = new Worker(task, { clock, logger: silentLogger });
    w.start();
    await settle();
    const stopping = w.stop().then(() => order.push('stop resolved'));
    expect(w.state).toBe('stopping');
    await stopping;
    expect(sawAbort).toBe(true);
    expect(order).toEqual(['work', 'work returned', 'stop resolved']);
    expect(w.state).toBe('stopped');
    await w.stop();
  });

  it('persists progress periodically while running; a failing persist is counted, not fatal', async () => {
    const clock = new ManualClock();
    const task = new ToyTask(clock, 100);
    for (let i = 0; i < 25; i++) task.queue.push(i);
    task.finishWhenEmpty = true;
    const w = new Worker(task, { clock, logger: silentLogger, persistEveryMs: 1_000 });
    w.start();
    await w.done();
    // 25 steps of 100 ms: a persist after each full second, plus the final one.
    expect(task.persisted.map((p) => p.state)).toEqual(['running', 'running', 'completed']);
    expect(task.persisted[0]!.progress.done).toBe(10);

    const flaky = new ToyTask(clock, 100);
    for (let i = 0; i < 15; i++) flaky.queue.push(i);
    flaky.finishWhenEmpty = true;
    flaky.persistFails = true;
    const f = new Worker(flaky, { clock, logger: silentLogger, persistEveryMs: 1_000 });
    f.start();
    const s = await f.done();
    expect(s.state).toBe('completed');
    expect(flaky.done.length).toBe(15);
    expect(s.persistErrors).toBe(2);
  });

  it('a periodic worker ticks each period under the Worker contract, survives a failing round and stops cleanly', async () => {
    const clock = new ManualClock(0);
    let calls = 0;
    const w = periodicWorker({
      name: 'sampler',
      everyMs: 1_000,
      atStart: false,
      tick: () => {
        calls++;
        if (calls === 2) throw new Error('statfs failed');
      },
      clock,
      logger: silentLogger,
    });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
    };
    w.start();
    await settle();
    // atStart false: the first round waits one period.
    expect(calls).toBe(0);
    expect(w.state).toBe('idle');
    for (let i = 0; i < 3; i++) {
      await clock.advance(1_000);
      await settle();
    }
    expect(calls).toBe(3);
    expect(w.state).toBe('idle');
    expect(w.status().progress).toEqual({ ticks: 3, failures: 1, lastError: 'statfs failed' });
    await w.stop();
    expect(w.state).toBe('stopped');
    await clock.advance(5_000);
    await settle();
    expect(calls).toBe(3);
  });
});

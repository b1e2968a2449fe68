import { describe, expect, it } from 'vitest';
import { Worker, type WorkerTask } from '../util/worker.ts';
import { ManualClock } from '../util/clock.ts';
import { silentLogger } from '../util/logger.ts';
import { type Job, Supervisor, workerJob } from './supervisor.ts';

const clock = new ManualClock(1_000_000);

/** A worker whose task waits for work until stopped. */
function waitingWorker(name: string): Worker<{ steps: number }> {
  const task: WorkerTask<{ steps: number }> = {
    name,
    work: async () => 'idle',
    waitForWork: (signal) => new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
    progress: () => ({ steps: 0 }),
  };
  return new Worker(task, { clock, logger: silentLogger });
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

/** A job over a waiting worker that records its starts and stops in `events`. */
function recordingJob(events: string[], name: string, after?: string[]): Job {
  const w = waitingWorker(name);
  return workerJob(name, `${name} work`, w, {
    ...(after ? { after } : {}),
    start: () => {
      events.push(`start ${name}`);
      w.start();
    },
    stop: async () => {
      events.push(`stop ${name}`);
      await w.stop();
    },
  });
}

describe('Supervisor', () => {
  it('starts jobs in dependency order, stops them in reverse, and lists every job with its state', async () => {
    const events: string[] = [];
    const sup = new Supervisor({ logger: silentLogger });
    const job = (name: string, after?: string[]): Job => recordingJob(events, name, after);
    // Registered before the jobs they need.
    sup.register(job('scanner', ['heal', 'monitor']));
    sup.register(job('monitor', ['sequences']));
    sup.register(job('heal'));
    sup.register(job('sequences'));
    expect(sup.list().map((j) => [j.name, j.state])).toEqual([
      ['scanner', 'not started'],
      ['monitor', 'not started'],
      ['heal', 'not started'],
      ['sequences', 'not started'],
    ]);

    await sup.start();
    expect(events).toEqual(['start heal', 'start sequences', 'start monitor', 'start scanner']);
    await until(() => sup.list().every((j) => j.state === 'idle'));
    const listed = sup.list();
    expect(listed.map((j) => j.name)).toEqual(['scanner', 'monitor', 'heal', 'sequences']);
    expect(listed[0]).toMatchObject({ description: 'scanner work', after: ['heal', 'monitor'], workers: [{ name: 'scanner', state: 'idle', progress: { steps: 0 } }] });

    events.length = 0;
    await sup.stop();
    expect(events).toEqual(['stop scanner', 'stop monitor', 'stop sequences', 'stop heal']);
    expect(sup.list().map((j) => j.state)).toEqual(['stopped', 'stopped', 'stopped', 'stopped']);
    await sup.stop(); // idempotent
    expect(events).toHaveLength(4);
  });

  it('refuses duplicates, unknown dependencies and circles', () => {
    const sup = new Supervisor({ logger: silentLogger });
    sup.register(workerJob('a', 'a', waitingWorker('a'), { after: ['b'] }));
    expect(() => sup.register(workerJob('a', 'a', waitingWorker('a')))).toThrow(/registered twice/);
    expect(() => sup.order()).toThrow(/a needs b, which is not registered/);
    sup.register(workerJob('b', 'b', waitingWorker('b'), { after: ['a'] }));
    expect(() => sup.order()).toThrow(/circle: a → b → a/);
  });

  it('a job that fails to start is reported failed and holds back the jobs after it; stop still stops what started', async () => {
    const sup = new Supervisor({ logger: silentLogger });
    const first = waitingWorker('first');
    sup.register(workerJob('first', 'first', first));
    sup.register({
      name: 'broken',
      description: 'cannot start',
      after: ['first'],
      start: () => {
        throw new Error('no drives');
      },
      stop: async () => undefined,
      workers: () => [],
    });
    sup.register(workerJob('later', 'later', waitingWorker('later'), { after: ['broken'] }));
    await expect(sup.start()).rejects.toThrow('no drives');
    expect(sup.list().map((j) => [j.name, j.state, j.lastError])).toEqual([
      ['first', first.state, undefined],
      ['broken', 'failed', 'no drives'],
      ['later', 'not started', undefined],
    ]);
    expect(first.active).toBe(true);
    await sup.stop();
    expect(first.state).toBe('stopped');
  });

  it('jobs registered after a start are started by the next one; stop reverses the order they actually started; nothing starts once stopped', async () => {
    const events: string[] = [];
    const sup = new Supervisor({ logger: silentLogger });
    const job = (name: string, after?: string[]): Job => recordingJob(events, name, after);
    sup.register(job('probe'));
    await sup.start();
    sup.register(job('scanner', ['heal']));
    sup.register(job('heal', ['probe']));
    // Two starts at once: each job starts exactly once.
    await Promise.all([sup.start(), sup.start()]);
    sup.register(job('sampler'));
    await sup.start();
    expect(events).toEqual(['start probe', 'start heal', 'start scanner', 'start sampler']);
    expect(sup.list().map((j) => j.name)).toEqual(['probe', 'scanner', 'heal', 'sampler']);
    events.length = 0;
    await sup.stop();
    expect(events).toEqual(['stop sampler', 'stop scanner', 'stop heal', 'stop probe']);
    expect(() => sup.register(job('late'))).toThrow(/registered after stop/);
    await expect(sup.start()).rejects.toThrow();
  });
  it('a stop that keeps some jobs stops the others in reverse; a later stop stops the kept ones, each job once', async () => {
    const events: string[] = [];
    const sup = new Supervisor({ logger: silentLogger });
    for (const n of ['audit', 'sweep', 'probe', 'heal']) sup.register(recordingJob(events, n));
    await sup.start();
    events.length = 0;
    const earlier = new Set(['audit', 'sweep']);
    const [a, b] = [sup.stop((name) => earlier.has(name)), sup.stop()];
    await Promise.all([a, b]);
    expect(events).toEqual(['stop heal', 'stop probe', 'stop sweep', 'stop audit']);
    expect(sup.list().map((j) => j.state)).toEqual(['stopped', 'stopped', 'stopped', 'stopped']);
    expect(() => sup.register(recordingJob(events, 'late'))).toThrow(/registered after stop/);
  });
});

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import { createLogger } from '../util/logger.ts';
import { type ConfigStore, IAM_FORMAT_PATH, loadIamState, runIamBootstrap } from './iam-bootstrap.ts';
import { Readiness } from './readiness.ts';

function memoryStore(): ConfigStore & { records: Map<string, Uint8Array> } {
  const records = new Map<string, Uint8Array>();
  return {
    records,
    readConfig: async (p) => records.get(p),
    writeConfig: async (p, d) => {
      records.set(p, d);
    },
  };
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { log, lines };
}

describe('loadIamState', () => {
  it('creates the IAM format record on a fresh deployment, then loads it', async () => {
    const store = memoryStore();
    expect(await loadIamState(store)).toBe('IAM format v1 created');
    expect(JSON.parse(Buffer.from(store.records.get(IAM_FORMAT_PATH)!).toString())).toEqual({ version: 1 });
    expect(await loadIamState(store)).toBe('IAM format v1 loaded');
  });

  it('refuses a record it cannot read', async () => {
    const store = memoryStore();
    store.records.set(IAM_FORMAT_PATH, Buffer.from('{not json'));
    await expect(loadIamState(store)).rejects.toMatchObject({ code: 'FileCorrupt' });
    store.records.set(IAM_FORMAT_PATH, Buffer.from('{"version":7}'));
    await expect(loadIamState(store)).rejects.toThrow(/version 7/);
  });
});

describe('runIamBootstrap', () => {
  it('logs iam_bootstrap_retry_failed with a hint, WARN then ERROR, keeps readiness pending iam, and recovers', async () => {
    const clock = new ManualClock();
    const { log, lines } = capturingLogger();
    const readiness = new Readiness({ lock: true, peers: true });
    readiness.update({ storageRead: true, storageWrite: true, finalized: true });
    let failures = 5;
    const boot = runIamBootstrap({
      load: async () => {
        if (failures-- > 0) throw new SvcError('ErasureWriteQuorum');
        return 'IAM format v1 loaded';
      },
      readiness,
      logger: log,
      clock,
      signal: new AbortController().signal,
    });
    expect(await boot.first).toBe(false);
    expect(readiness.report()).toMatchObject({ ready: false, pending: 'iam', degradedReasons: ['iam_not_ready'] });
    let finished = false;
    void boot.done.then(() => {
      finished = true;
    });
    for (let i = 0; i < 12 && !finished; i++) await clock.advance(30_000);
    expect(await boot.done).toBe(true);
    const failed = lines.filter((l) => l['event'] === 'iam_bootstrap_retry_failed');
    expect(failed.map((l) => l['level'])).toEqual(['warn', 'warn', 'warn', 'error', 'error']);
    expect(failed.map((l) => l['attempt'])).toEqual([1, 2, 3, 4, 5]);
    expect(failed.map((l) => l['retryInMs'])).toEqual([1000, 2000, 4000, 8000, 16000]);
    for (const l of failed) {
      expect(l['code']).toBe('ErasureWriteQuorum');
      expect(String(l['hint'])).toMatch(/read and write quorum/);
    }
    expect(lines.some((l) => l['event'] === 'iam_bootstrap_recovered' && l['attempts'] === 6)).toBe(true);
    expect(readiness.report()).toMatchObject({ ready: true, degradedReasons: [] });
    expect(readiness.report().details.iam.detail).toBe('root credential; IAM format v1 loaded');
  });

  it('stops retrying at shutdown', async () => {
    const { log } = capturingLogger();
    const stop = new AbortController();
    const readiness = new Readiness();
    const boot = runIamBootstrap({
      load: async () => {
        throw new SvcError('ErasureReadQuorum');
      },
      readiness,
      logger: log,
      clock: { now: () => 0, every: () => () => undefined, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) },
      signal: stop.signal,
    });
    expect(await boot.first).toBe(false);
    stop.abort();
    expect(await boot.done).toBe(false);
  });
});

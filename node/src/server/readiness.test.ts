import { describe, expect, it } from 'vitest';
import { combinedReason, evaluateReadiness, Readiness } from './readiness.ts';

const all = { storageRead: true, storageWrite: true, iam: true, iamFailed: false, lock: true, kms: undefined, peers: true, clusterTimeout: false, finalized: true };

describe('readiness', () => {
  it('walks pending storage_quorum → iam → startup_finalization → ready', () => {
    const r = new Readiness();
    const seen: (string | undefined)[] = [];
    r.onChange((rep) => seen.push(rep.ready ? 'ready' : rep.pending));
    expect(r.report()).toMatchObject({ ready: false, status: 'degraded', pending: 'storage_quorum', degradedReasons: ['storage_quorum_unavailable'] });
    r.update({ storageRead: true, storageWrite: true });
    expect(r.report()).toMatchObject({ pending: 'iam', degradedReasons: ['iam_not_ready'] });
    r.update({ iam: true });
    expect(r.report()).toMatchObject({ ready: false, pending: 'startup_finalization', degradedReasons: [] });
    r.update({ finalized: true });
    expect(r.report()).toEqual({
      ready: true,
      status: 'ok',
      pending: undefined,
      details: { storage: { status: 'connected', ready: true }, iam: { status: 'connected', ready: true }, lock: { status: 'connected', ready: true } },
      degradedReasons: [],
    });
    r.update({ storageRead: false }, { storage: '0 of 1 sets have read quorum' });
    expect(r.report()).toMatchObject({ ready: false, pending: 'storage_quorum', degradedReasons: ['storage_quorum_unavailable'] });
    expect(r.report().details.storage).toEqual({ status: 'disconnected', ready: false, detail: '0 of 1 sets have read quorum' });
    expect(seen).toEqual(['iam', 'startup_finalization', 'ready', 'storage_quorum']);
  });
  it('a node that began a graceful stop is not ready at once (load balancers stop routing), with a shutdown detail and no SPEC reason', () => {
    const r = new Readiness({ ...all });
    expect(r.ready).toBe(true);
    const seen: boolean[] = [];
    r.onChange((rep) => seen.push(rep.ready));
    r.update({ stopping: true });
    expect(r.report()).toMatchObject({ ready: false, status: 'degraded', pending: undefined, degradedReasons: [] });
    expect(r.report().details.shutdown).toMatchObject({ status: 'disconnected', ready: false });
    expect(seen).toEqual([false]);
  });
  it('kms detail only when configured', () => {
    expect(evaluateReadiness(all).details).not.toHaveProperty('kms');
    const r = evaluateReadiness({ ...all, kms: false });
    expect(r.details.kms).toEqual({ status: 'disconnected', ready: false });
    expect(r.degradedReasons).toEqual(['kms_not_ready']);
    expect(r.ready).toBe(false);
  });
  it('lock counts only for cluster probes', () => {
    expect(evaluateReadiness({ ...all, lock: false }).ready).toBe(true);
    expect(evaluateReadiness({ ...all, lock: false }, 'cluster').degradedReasons).toEqual(['lock_quorum_unavailable']);
    expect(evaluateReadiness({ ...all, lock: false, iam: false, iamFailed: true, storageRead: false }, 'cluster-read').degradedReasons).toEqual([
      'storage_iam_and_lock_unavailable',
    ]);
    expect(evaluateReadiness({ ...all, storageWrite: false }, 'cluster').degradedReasons).toEqual(['storage_quorum_unavailable']);
    expect(evaluateReadiness({ ...all, storageWrite: false }, 'cluster-read').ready).toBe(true);
    expect(evaluateReadiness({ ...all, clusterTimeout: true }, 'cluster').degradedReasons).toEqual(['cluster_health_timeout']);
  });
  it('peer health', () => {
    expect(evaluateReadiness({ ...all, peers: false }).degradedReasons).toEqual(['peer_health_unavailable']);
    expect(evaluateReadiness({ ...all, peers: false }).ready).toBe(false);
    // With storage below read quorum the peers' absence is that problem's cause: reported once.
    expect(evaluateReadiness({ ...all, peers: false, storageRead: false, storageWrite: false }).degradedReasons).toEqual(['storage_quorum_unavailable']);
    // The peers entry shows in a multi-node deployment (once its health was noted), never on a single node.
    expect(evaluateReadiness(all).details).not.toHaveProperty('peers');
    const r = new Readiness({ ...all });
    r.update({ peers: false }, { peers: '1 of 2 nodes reachable (b:9000 unreachable); a majority (2) is needed' });
    expect(r.report().details.peers).toEqual({ status: 'disconnected', ready: false, detail: '1 of 2 nodes reachable (b:9000 unreachable); a majority (2) is needed' });
    // A peer that stopped answering is the cluster probes' timeout, not a lost readiness on its own.
    r.update({ peers: true, clusterTimeout: true }, { peers: '3 of 4 nodes reachable (d:9000 not answering)' });
    expect(r.report('ready').ready).toBe(true);
    expect(r.report('cluster').degradedReasons).toEqual(['cluster_health_timeout']);
  });
  it('combined reasons', () => {
    expect(combinedReason(true, false, true)).toBe('storage_and_lock_unavailable');
    expect(combinedReason(false, true, true)).toBe('iam_and_lock_unavailable');
    expect(combinedReason(false, false, false)).toBeUndefined();
  });
  it('whenReady resolves on readiness or abort', async () => {
    const r = new Readiness();
    const p = r.whenReady();
    r.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
    await expect(p).resolves.toBe(true);
    const r2 = new Readiness();
    const ac = new AbortController();
    const p2 = r2.whenReady(ac.signal);
    ac.abort();
    await expect(p2).resolves.toBe(false);
  });
});

/** The admin client: SigV4 accepted by the verifier, fail-over across pods, errors decoded; status mappers. */
import { describe, expect, it } from 'vitest';
import { FakeAdminApi } from '../../test/fake-admin/fake-admin.ts';
import { AdminClient } from './client.ts';
import { AdminError, decommissionPhase, rebalanceActive, rebalanceOutcome } from './types.ts';

const credentials = { accessKey: 'clientadmin', secretKey: 'client-secret-key' };

describe('admin client', () => {
  it('signs requests the verifier accepts, fails over past dead pods, and decodes admin errors', async () => {
    const fake = await FakeAdminApi.start({ pools: ['/d/p0/d{1...4}', '/d/p1/d{1...4}'], credentials });
    try {
      const client = new AdminClient({ endpoints: ['http://127.0.0.1:1', fake.url], credentials, timeoutMs: 2_000 });
      expect((await client.poolsList()).map((p) => p.id)).toEqual([0, 1]);
      const err = await client.poolStatus('nope').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AdminError);
      expect((err as AdminError).code).toBe('InvalidArgument');
      const wrong = new AdminClient({ endpoints: [fake.url], credentials: { ...credentials, secretKey: 'wrong' } });
      expect(((await wrong.poolsList().catch((e: unknown) => e)) as AdminError).code).toBe('SignatureDoesNotMatch');
      expect(rebalanceActive(await client.rebalanceStatus())).toBe(false);
      const dead = new AdminClient({ endpoints: ['http://127.0.0.1:1'], credentials, timeoutMs: 1_000 });
      expect(((await dead.poolsList().catch((e: unknown) => e)) as AdminError).code).toBe('Unreachable');
    } finally {
      await fake.close();
    }
  });

  it('mid-rotation: a node that refuses the new key is asked with the previous one, then the next node; other refusals are final', async () => {
    const next = { accessKey: 'clientadmin-2', secretKey: 'client-secret-key-2' };
    const oldNode = await FakeAdminApi.start({ pools: ['/d/p0/d{1...4}'], credentials });
    const newNode = await FakeAdminApi.start({ pools: ['/d/p0/d{1...4}'], credentials: next });
    try {
      // The node that has not switched answers the previous key.
      const withFallback = new AdminClient({ endpoints: [oldNode.url], credentials: next, fallbackCredentials: credentials });
      expect((await withFallback.poolsList()).map((p) => p.id)).toEqual([0]);
      // Without the previous key, the next node (switched) is tried.
      const onward = new AdminClient({ endpoints: [oldNode.url, newNode.url], credentials: next });
      expect((await onward.poolsList()).map((p) => p.id)).toEqual([0]);
      expect(newNode.requests.filter((r) => r.startsWith('GET /svc/admin/v3/pools/list'))).toHaveLength(1);
      // Neither key works anywhere: the node's refusal is what the caller gets.
      const lost = new AdminClient({ endpoints: [oldNode.url], credentials: next, fallbackCredentials: { accessKey: 'x', secretKey: 'y' } });
      expect(((await lost.poolsList().catch((e: unknown) => e)) as AdminError).code).toBe('InvalidAccessKeyId');
    } finally {
      await oldNode.close();
      await newNode.close();
    }
  });

  it('maps decommissionInfo like mc (complete, failed, canceled, then a start time) and rebalance completion like the spec', () => {
    expect(decommissionPhase({ startTime: '0001-01-01T00:00:00Z' })).toBe('None');
    expect(decommissionPhase({ startTime: '2026-01-01T00:00:00Z' })).toBe('Active');
    expect(decommissionPhase({ startTime: '2026-01-01T00:00:00Z', complete: true })).toBe('Completed');
    expect(decommissionPhase({ failed: true, canceled: true })).toBe('Failed');
    expect(decommissionPhase({ canceled: true })).toBe('Canceled');
    expect(decommissionPhase({ queued: true })).toBe('Queued');
    expect(decommissionPhase(null)).toBe('None');
    const rb = (statuses: string[], extra = {}) => ({ id: 'x', pools: statuses.map((status, id) => ({ id, status })), ...extra });
    expect(rebalanceActive(rb(['Completed', 'Started']))).toBe(true);
    expect(rebalanceOutcome(rb(['Completed', 'Completed']))).toEqual({ done: true, errors: [] });
    expect(rebalanceOutcome(rb(['Completed', 'Stopped'], { stopPropagation: { pendingTerminalReload: true } })).done).toBe(false);
    expect(rebalanceOutcome({ id: 'x', pools: [{ id: 0, status: 'stopped', stopping: true }] }).done).toBe(false);
    expect(rebalanceOutcome({ id: 'x', pools: [{ id: 0, status: 'Failed', lastError: 'disk' }] }).errors).toEqual(['pool 0: rebalance failed: disk']);
    expect(rebalanceOutcome({ id: 'x', pools: [{ id: 0, status: 'Completed' }], stopPropagation: { failedPeers: ['n2'] } }).errors).toEqual(['stop did not reach n2']);
  });
});

/**
 * The admin answers decoded strictly into madmin-go's structs (issue 28,
 * items 10-11): a Go program using madmin's own types cannot run here (no
 * Go module proxy), so each route has a fixture captured from the structs'
 * JSON tags (`fixtures/madmin/`), and `decodeStrict` decodes the live
 * answers of a real two-pool `svc server` the way Go does, refusing
 * unknown and missing fields. Every route answers under `/v3` and `/v4`
 * (current madmin-go asks for `/v4`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, startTwoPoolServer, type TwoPoolServer } from './helpers/admin.ts';
import { until } from './helpers/heal-server.ts';
import { decodeStrict, loadMadminFixture, type MadminFixture } from './helpers/madmin-contract.ts';

let s: TwoPoolServer;
beforeAll(async () => {
  s = await startTwoPoolServer({ SVC_SCANNER_INTERVAL: '300ms' });
}, 60_000);
afterAll(async () => {
  await s?.stop();
});

async function answer(version: 'v3' | 'v4', method: 'GET' | 'POST', path: string, query: Record<string, string> = {}, body?: string): Promise<unknown> {
  const r = await admin(s.url, s.creds, { method, path: `${version}/${path}`, query, ...(body !== undefined ? { body } : {}) });
  expect(r.status, `${method} ${version}/${path}: ${r.body.slice(0, 300)}`).toBe(200);
  return r.json();
}

describe('the strict decoder itself', () => {
  const fx = loadMadminFixture('info');
  it('refuses what madmin-go cannot decode or does not know, and what it needs but is missing', () => {
    const backend = { backendType: 'Erasure', onlineDisks: 1, offlineDisks: 0, standardSCParity: 2, rrSCParity: 1, totalSets: [1], totalDrivesPerSet: [4] };
    expect(decodeStrict(fx, { mode: 'online', backend, pools: { '0': { '0': { id: 0, rawUsage: 1, rawCapacity: 2, usage: 1, objectsCount: 0, versionsCount: 0, deleteMarkersCount: 0, healDisks: 0 } } } })).toEqual([]);
    // the array that made `mc admin info` fail
    expect(decodeStrict(fx, { pools: [{ id: 0 }] })).toEqual(['$.pools: map[int]map[int]ErasureSetInfo expects a JSON object, got [{"id":0}]']);
    expect(decodeStrict(fx, { pools: { zero: {} } })).toEqual(['$.pools: key "zero" is not an integer (map[int]map[int]ErasureSetInfo)']);
    expect(decodeStrict(fx, { mode: 'online', surprise: 1 })).toEqual(['$.surprise: not a field of InfoMessage and not a listed extension']);
    const { totalSets: _dropped, ...withoutSets } = backend;
    expect(decodeStrict(fx, { backend: withoutSets })).toEqual(['$.backend.totalSets: missing (ErasureBackend.totalSets is not omitempty)']);
    expect(decodeStrict(fx, { buckets: { count: -1 } })).toEqual(['$.buckets.count: uint64 expected, got -1']);
    expect(decodeStrict(fx, { buckets: { count: 1.5 } })).toEqual(['$.buckets.count: uint64 expected, got 1.5']);
    // Go matches keys case-insensitively: `deleteMarkers` fills `deletemarkers`
    expect(decodeStrict(fx, { deleteMarkers: { count: 0 } })).toEqual([]);
  });
});

describe('madmin-go decodes every admin answer, under /v3 and /v4', () => {
  const check = (fx: MadminFixture, value: unknown) => expect(decodeStrict(fx, value)).toEqual([]);

  it('info (mc admin info): pools as a map of pool → set → set info, counts from the scanner', async () => {
    const fx = loadMadminFixture('info');
    // the scanner's first cycle fills the object counts and per-set usage
    const info = await until('a scanner cycle', async () => {
      const v = (await answer('v3', 'GET', 'info')) as { objects?: { error?: string } };
      return v.objects?.error === undefined ? v : undefined;
    }, 30_000);
    check(fx, info);
    check(fx, await answer('v4', 'GET', 'info', { metrics: 'false' }));
    const pools = (info as { pools: Record<string, Record<string, { id: number; rawCapacity: number }>> }).pools;
    expect(Object.keys(pools)).toEqual(['0', '1']);
    expect(Object.keys(pools['0']!)).toEqual(['0']);
    expect(pools['1']!['0']!.rawCapacity).toBeGreaterThan(0);
  });

  it('pools/list and pools/status (mc admin decommission status)', async () => {
    for (const v of ['v3', 'v4'] as const) {
      check(loadMadminFixture('pools-list'), await answer(v, 'GET', 'pools/list'));
      check(loadMadminFixture('pools-status'), await answer(v, 'GET', 'pools/status', { pool: s.pools[0] }));
    }
  });

  it('rebalance start and status (mc admin rebalance), per-pool status in SPEC words', async () => {
    check(loadMadminFixture('rebalance-start'), await answer('v4', 'POST', 'rebalance/start'));
    const fx = loadMadminFixture('rebalance-status');
    for (const v of ['v3', 'v4'] as const) {
      const st = (await answer(v, 'GET', 'rebalance/status')) as { pools: { status: string }[] };
      check(fx, st);
      for (const p of st.pools) expect(['none', 'active', 'stopping', 'stopped', 'completed', 'failed']).toContain(p.status);
    }
  });

  it('heal start and status (mc admin heal)', async () => {
    const start = (await answer('v4', 'POST', 'heal/', { forceStart: 'true' }, JSON.stringify({ recursive: true, dryRun: true, scanMode: 1 }))) as { clientToken: string };
    check(loadMadminFixture('heal-start'), start);
    const fx = loadMadminFixture('heal-status');
    check(fx, await answer('v3', 'POST', 'heal/', { clientToken: start.clientToken }));
    check(fx, await answer('v4', 'POST', 'heal/', { clientToken: start.clientToken }));
  });

  it('the identity routes answer under /v4 as under /v3 (mc admin user|policy)', async () => {
    const v3 = (await answer('v3', 'GET', 'list-canned-policies')) as Record<string, unknown>;
    const v4 = (await answer('v4', 'GET', 'list-canned-policies')) as Record<string, unknown>;
    expect(Object.keys(v4).sort()).toEqual(Object.keys(v3).sort());
    expect(Object.keys(v4)).toContain('readwrite');
  });

  it('background-heal/status: every set with its total_objects', async () => {
    const fx = loadMadminFixture('background-heal-status');
    for (const v of ['v3', 'v4'] as const) {
      const st = (await answer(v, 'POST', 'background-heal/status')) as { sets: { total_objects: number }[] };
      check(fx, st);
      expect(st.sets).toHaveLength(2);
    }
  });
});

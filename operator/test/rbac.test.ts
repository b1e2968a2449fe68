/**
 * The chart's RBAC is exactly what the operator needs: with any one of these
 * verbs removed from the rendered Roles, the operator's end-to-end scenario
 * (a cluster created, then grown by a pool) does not finish, and the API
 * server's 403, naming the verb and the resource, is what the operator
 * logged. (controller.test.ts runs the full scenarios under the chart's RBAC
 * and fails on a grant nobody used.)
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeAdminApi } from './fake-admin/fake-admin.ts';
import { Clusters, CREDENTIALS, installOperatorRbac, readyWhenPoolsAgree, startApiWithCrd, testController } from './harness.ts';
import { FixedKubelet, StatefulSetSimulator } from './sim/statefulset-sim.ts';

const pool = (name: string) => ({ name, servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } });

/** Runs the scenario with the chart's RBAC minus one verb; resolves with the error it failed with (or undefined) and the operator's log. */
async function scenario(drop: { resource: string; verb: string } | undefined): Promise<{ failure: string | undefined; log: string; denied: string[] }> {
  const api = await startApiWithCrd();
  const token = installOperatorRbac(api, drop ? { drop } : {});
  const admin = await FakeAdminApi.start({ pools: [], credentials: CREDENTIALS, bytesPerSecond: 10_000 });
  const kubelet = new FixedKubelet();
  kubelet.readiness = readyWhenPoolsAgree(api, admin);
  const sim = new StatefulSetSimulator(api, kubelet, { probeMs: 50 });
  let log = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      log += String(chunk);
      cb();
    },
  });
  const controller = testController(api, token, admin, { log: pino({ level: 'info' }, sink) });
  const clusters = new Clusters(api);
  let failure: string | undefined;
  try {
    await controller.start();
    await clusters.create('prod', { image: 'svc-node:test', credentials: { secretName: 'prod-root' }, pools: [pool('p0')] });
    await clusters.waitReady('prod', 8_000);
    await clusters.editSpec('prod', (s) => ({ ...s, pools: [...s.pools, pool('p1')] }));
    await clusters.waitFor('prod', 'p1 Active', (c) => c.status?.pools?.find((p) => p.name === 'p1')?.state === 'Active' && !c.status.operation, 8_000);
  } catch (err) {
    failure = (err as Error).message;
  } finally {
    controller.stop();
    await sim.stop();
    await admin.close();
    await api.close();
  }
  return { failure, log, denied: [...(api.rbac?.denied ?? [])] };
}

describe("RBAC: the chart's rules, enforced", () => {
  it('with every verb the chart grants, the scenario completes and nothing is refused', async () => {
    const r = await scenario(undefined);
    expect(r.failure).toBeUndefined();
    expect(r.denied).toEqual([]);
  }, 60_000);

  it.each([
    { resource: 'pods', verb: 'delete', refused: 'cannot delete resource "pods" in API group "" in the namespace "storage"' },
    { resource: 'statefulsets', verb: 'create', refused: 'cannot create resource "statefulsets" in API group "apps" in the namespace "storage"' },
    { resource: 'svcclusters/status', verb: 'update', refused: 'cannot update resource "svcclusters/status" in API group "svc.io" in the namespace "storage"' },
    { resource: 'secrets', verb: 'get', refused: 'cannot get resource "secrets" in API group "" in the namespace "storage"' },
    { resource: 'poddisruptionbudgets', verb: 'create', refused: 'cannot create resource "poddisruptionbudgets" in API group "policy" in the namespace "storage"' },
  ])('without $verb on $resource the scenario fails, and the operator logged the 403 naming that verb', async ({ resource, verb, refused }) => {
    const r = await scenario({ resource, verb });
    expect(r.failure).toMatch(/timed out/);
    expect(r.denied.some((d) => d.includes(refused))).toBe(true);
    // The operator's JSON log carries the API server's message as sent.
    const messages = r.log.split('\n').filter(Boolean).map((l) => JSON.stringify(JSON.parse(l) as unknown));
    expect(messages.some((m) => m.includes(JSON.stringify(refused).slice(1, -1))), r.log.slice(-1500)).toBe(true);
  }, 60_000);
});

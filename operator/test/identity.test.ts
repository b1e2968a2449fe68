/**
 * spec.iam end to end: the operator (under the chart's RBAC, against the
 * in-process API server) reads the users' Secrets and the policies'
 * ConfigMaps a SvcCluster names and keeps them in a real `svc server`
 * through its admin API's identity routes: created, changed, removed when
 * they leave the spec; a missing Secret or a malformed policy is reported
 * in the IdentitySynced condition and changes nothing. (The cluster's pools
 * run against the fake admin API as in the other controller tests; the
 * identity routes go to the real server.)
 */
import { KubernetesObjectApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient as SvcAdminClient } from '../../node/src/cli/admin/client.ts';
import { IamAdminClient } from '../src/admin/iam-client.ts';
import type { SvcCluster } from '../src/crd/svccluster.ts';
import { getCondition } from '../src/reconcile/conditions.ts';
import type { Controller } from '../src/runtime/controller.ts';
import { FakeAdminApi } from './fake-admin/fake-admin.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import { Clusters, CREDENTIALS, installOperatorRbac, NS, readyWhenPoolsAgree, startApiWithCrd, testController } from './harness.ts';
import { FixedKubelet, StatefulSetSimulator } from './sim/statefulset-sim.ts';
import { startSvcServer, type SvcServer } from './svc-server.ts';

const pool = (name: string) => ({ name, servers: 2, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } });
const READ = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::data/*'] }] });
const WRITE = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::data/*'] }] });

describe('spec.iam: users and policies from Secrets and ConfigMaps, through a real server', () => {
  let api: FakeApiServer;
  let svc: SvcServer;
  let admin: FakeAdminApi;
  let sim: StatefulSetSimulator;
  let controller: Controller;
  let clusters: Clusters;
  let objects: KubernetesObjectApi;
  let svcAdmin: SvcAdminClient;

  const put = async (kind: 'Secret' | 'ConfigMap', name: string, data: Record<string, string>) => {
    const body = { apiVersion: 'v1', kind, metadata: { name, namespace: NS }, ...(kind === 'Secret' ? { stringData: data } : { data }) };
    await objects.delete(body as never).catch(() => undefined);
    await objects.create(body as never);
  };
  const condition = async (want: (c: SvcCluster) => boolean, what: string) => {
    const end = Date.now() + 20_000;
    for (;;) {
      const c = await clusters.get('prod');
      if (want(c)) return c;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(c.status?.conditions?.find((x) => x.type === 'IdentitySynced'))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const userInfo = (ak: string) => svcAdmin.json<{ policyName: string; status: string }>('GET', 'v3/user-info', { accessKey: ak }).then((r) => r.value, (e: { code?: string }) => e.code);

  beforeAll(async () => {
    svc = await startSvcServer({ pools: 1, drives: 4 });
    svcAdmin = new SvcAdminClient({ name: 't', url: svc.url, accessKey: svc.accessKey, secretKey: svc.secretKey });
    api = await startApiWithCrd();
    const token = installOperatorRbac(api);
    objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
    admin = await FakeAdminApi.start({ pools: [], credentials: CREDENTIALS, bytesPerSecond: 10_000 });
    const kubelet = new FixedKubelet();
    kubelet.readiness = readyWhenPoolsAgree(api, admin);
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 50 });
    controller = testController(api, token, admin, {
      log: pino({ level: process.env['SVC_TEST_LOG'] ?? 'silent' }),
      // the identity routes: a real svc server (with its own root credential)
      identityFactory: () => new IamAdminClient({ endpoints: [svc.url], credentials: { accessKey: svc.accessKey, secretKey: svc.secretKey } }),
    });
    clusters = new Clusters(api);
    await controller.start();
  }, 90_000);

  afterAll(async () => {
    controller?.stop();
    await sim?.stop();
    await admin?.close();
    await api?.close();
    await svc?.stop();
  });

  it('creates the declared policies and users, follows edits, removes what leaves the spec, reports missing sources and refusals', async () => {
    await put('ConfigMap', 'policies', { 'read.json': READ, 'write.json': WRITE });
    await put('Secret', 'user-alice', { accessKey: 'alice', secretKey: 'alice-secret-1' });
    await clusters.create('prod', {
      image: 'svc-node:test',
      credentials: { secretName: 'prod-root' },
      pools: [pool('p0')],
      iam: {
        policies: [{ name: 'read-data', configMap: { name: 'policies', key: 'read.json' } }],
        users: [{ secretName: 'user-alice', policies: ['read-data'] }],
      },
    });
    let c = await condition((x) => getCondition(x.status?.conditions, 'IdentitySynced')?.status === 'True', 'IdentitySynced True');
    expect(c.status?.identity).toMatchObject({ users: ['alice'], policies: ['read-data'] });
    // the status names what was applied, never a secret
    expect(JSON.stringify(c.status)).not.toContain('alice-secret-1');
    expect(await userInfo('alice')).toMatchObject({ policyName: 'read-data', status: 'enabled' });

    // an edit: another policy attached, a second user
    await put('Secret', 'user-bob', { accessKey: 'bob', secretKey: 'bob-secret-12' });
    await clusters.editSpec('prod', (s) => ({
      ...s,
      iam: {
        policies: [
          { name: 'read-data', configMap: { name: 'policies', key: 'read.json' } },
          { name: 'write-data', configMap: { name: 'policies', key: 'write.json' } },
        ],
        users: [
          { secretName: 'user-alice', policies: ['read-data', 'write-data'] },
          { secretName: 'user-bob', policies: ['readonly'] },
        ],
      },
    }));
    c = await condition((x) => (x.status?.identity?.users ?? []).length === 2 && (x.status?.identity?.policies ?? []).length === 2, 'two users applied');
    expect((await userInfo('alice')) as { policyName: string }).toMatchObject({ policyName: 'read-data,write-data' });
    expect(await userInfo('bob')).toMatchObject({ policyName: 'readonly' });

    // a Secret that does not exist: reported, nothing changed
    await clusters.editSpec('prod', (s) => ({ ...s, iam: { ...s.iam, users: [...(s.iam?.users ?? []), { secretName: 'user-ghost' }] } }));
    c = await condition((x) => getCondition(x.status?.conditions, 'IdentitySynced')?.reason === 'IdentitySourceMissing', 'IdentitySourceMissing');
    expect(getCondition(c.status?.conditions, 'IdentitySynced')?.message).toContain('user-ghost');
    expect(c.status?.identity?.users).toEqual(['alice', 'bob']);

    // a malformed policy document: the server's refusal is reported
    await put('ConfigMap', 'policies', { 'read.json': READ, 'write.json': '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject"}]}' });
    await clusters.editSpec('prod', (s) => ({ ...s, iam: { ...s.iam, users: (s.iam?.users ?? []).filter((u) => u.secretName !== 'user-ghost') } }));
    c = await condition((x) => getCondition(x.status?.conditions, 'IdentitySynced')?.reason === 'IdentityApplyFailed', 'IdentityApplyFailed');
    expect(getCondition(c.status?.conditions, 'IdentitySynced')?.message).toContain('MalformedPolicy');

    // bob and write-data leave the spec: removed from the server
    await put('ConfigMap', 'policies', { 'read.json': READ, 'write.json': WRITE });
    await clusters.editSpec('prod', (s) => ({
      ...s,
      iam: { policies: [{ name: 'read-data', configMap: { name: 'policies', key: 'read.json' } }], users: [{ secretName: 'user-alice', policies: ['read-data'] }] },
    }));
    c = await condition((x) => getCondition(x.status?.conditions, 'IdentitySynced')?.status === 'True' && (x.status?.identity?.users ?? []).length === 1, 'bob removed');
    expect(c.status?.identity).toMatchObject({ users: ['alice'], policies: ['read-data'] });
    expect(await userInfo('bob')).toBe('XSvcAdminNoSuchUser');
    const policies = (await svcAdmin.json<Record<string, unknown>>('GET', 'v3/list-canned-policies')).value;
    expect(Object.keys(policies)).not.toContain('write-data');
    expect(Object.keys(policies)).toContain('read-data');
  }, 120_000);
});

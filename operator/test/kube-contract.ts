/**
 * The Kubernetes API semantics the operator relies on, as one shared suite
 * (the Hono `common.case.test.ts` pattern): `fake-apiserver/contract.test.ts`
 * runs it against the in-process fake, `e2e/k3s-contract.test.ts` against a
 * real k3s API server, so the fake cannot drift from Kubernetes unnoticed.
 * Everything goes through the real `@kubernetes/client-node`.
 */
import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  RequestContext,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kube, microTime } from '../src/kube/kube.ts';

export interface ContractTarget {
  readonly kc: KubeConfig;
  /** A namespace that exists and that the suite may fill. */
  readonly namespace: string;
  /** Makes watches from any earlier resourceVersion answer 410 Gone (fake only). */
  readonly compact?: () => void;
  /** Bounds the watch history to `events` (fake only; etcd compacts on its own schedule). */
  readonly historyLimit?: (events: number) => void;
  readonly close: () => Promise<void>;
}

const GROUP = 'contract.svc.io';

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
              status: { type: 'object', properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

interface Widget extends KubernetesObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observedGeneration?: number };
}

function code(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

async function eventually<T>(fn: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Collects watch events until `until` holds or the timeout passes. */
async function watchEvents(kc: KubeConfig, path: string, rv: string, until: (types: string[]) => boolean, ms = 10_000): Promise<{ types: string[]; objects: KubernetesObject[]; errorCode?: number }> {
  const types: string[] = [];
  const objects: KubernetesObject[] = [];
  let errorCode: number | undefined;
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const req = await new Watch(kc).watch(
    path,
    { resourceVersion: rv },
    (type, obj) => {
      if (type === 'ERROR') errorCode = (obj as { code?: number }).code;
      else {
        types.push(type);
        objects.push(obj as KubernetesObject);
      }
      if (until(types) || errorCode !== undefined) resolve();
    },
    (err) => {
      if (err && (err as { statusCode?: number }).statusCode) errorCode = (err as { statusCode: number }).statusCode;
      resolve();
    },
  );
  const timer = setTimeout(resolve, ms);
  await done;
  clearTimeout(timer);
  req.abort();
  return errorCode === undefined ? { types, objects } : { types, objects, errorCode };
}

export function describeKubeContract(name: string, open: () => Promise<ContractTarget>): void {
  describe(`Kubernetes API contract: ${name}`, () => {
    let target: ContractTarget;
    let objects: KubernetesObjectApi;
    let core: CoreV1Api;
    let custom: CustomObjectsApi;
    let ns: string;
    const cm = (n: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): KubernetesObject & { data: Record<string, string> } => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: n, namespace: ns, labels },
      data,
    });

    const ref = (n: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: ns } });
    /** ConfigMap `n` owned by ConfigMap `owner` (`uid`: the owner's), blocking its deletion. */
    const dependent = (n: string, owner: string, uid: string): KubernetesObject => ({
      ...cm(n),
      metadata: { name: n, namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid, blockOwnerDeletion: true }] },
    });
    /** Waits until ConfigMap `n` is gone (the garbage collector took it). */
    const collected = (n: string, what: string) =>
      eventually(
        () =>
          objects.read(ref(n)).then(
            () => undefined,
            (e) => (code(e) === 404 ? true : undefined),
          ),
        what,
        60_000,
      );

    beforeAll(async () => {
      target = await open();
      ns = target.namespace;
      objects = KubernetesObjectApi.makeApiClient(target.kc);
      core = target.kc.makeApiClient(CoreV1Api);
      custom = target.kc.makeApiClient(CustomObjectsApi);
      const ext = target.kc.makeApiClient(ApiextensionsV1Api);
      await ext.createCustomResourceDefinition({ body: WIDGET_CRD as never }).catch((e) => {
        if (code(e) !== 409) throw e;
      });
      await eventually(async () => {
        const crd = await ext.readCustomResourceDefinition({ name: WIDGET_CRD.metadata.name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
      }, 'the Widget CRD to be established');
      // Discovery of a new group can lag behind Established on a real server.
      await eventually(() => objects.list(`${GROUP}/v1`, 'Widget', ns).then(() => true), 'Widget discovery');
    }, 120_000);

    afterAll(async () => {
      await target?.close();
    });

    it('discovery: core and custom groups list their resources', async () => {
      const coreList = await core.getAPIResources();
      expect(coreList.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['configmaps', 'pods', 'pods/status']));
      const res = await custom.getAPIResources({ group: GROUP, version: 'v1' });
      expect(res.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['widgets', 'widgets/status']));
    });

    it('create, then a second create of the same name is 409 AlreadyExists', async () => {
      const created = await objects.create(cm('c-create', { a: '1' }));
      expect(created.metadata?.uid).toBeTruthy();
      expect(created.metadata?.resourceVersion).toBeTruthy();
      await expect(objects.create(cm('c-create'))).rejects.toSatisfy((e: unknown) => code(e) === 409);
    });

    it('replace with a stale resourceVersion is 409 Conflict; with the current one it succeeds', async () => {
      const created = await objects.create(cm('c-stale', { a: '1' }));
      const first = await objects.replace({ ...created, data: { a: '2' } });
      expect(first.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
      await expect(objects.replace({ ...created, data: { a: '3' } })).rejects.toSatisfy((e: unknown) => code(e) === 409);
      const second = await objects.replace({ ...first, data: { a: '3' } });
      expect((second as { data: Record<string, string> }).data.a).toBe('3');
    });

    it('list with a label selector, and the list carries a resourceVersion', async () => {
      await objects.create(cm('c-sel-a', {}, { app: 'contract', tier: 'a' }));
      await objects.create(cm('c-sel-b', {}, { app: 'contract', tier: 'b' }));
      const list = await objects.list('v1', 'ConfigMap', ns, undefined, undefined, undefined, undefined, 'app=contract,tier=b');
      expect(list.items.map((i) => i.metadata?.name)).toEqual(['c-sel-b']);
      expect(list.metadata?.resourceVersion).toBeTruthy();
    });

    it('watch from a list resourceVersion delivers later ADDED, MODIFIED and DELETED in order', async () => {
      const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'watch=contract' });
      const rv = list.metadata!.resourceVersion!;
      const events = watchEvents(target.kc, `/api/v1/namespaces/${ns}/configmaps`, rv, (t) => t.includes('DELETED'));
      await new Promise((r) => setTimeout(r, 300));
      const c = await objects.create(cm('c-watch', { v: '1' }, { watch: 'contract' }));
      await objects.replace({ ...c, data: { v: '2' } });
      await objects.delete(cm('c-watch'));
      const got = await events;
      const mine = got.types.filter((_, i) => got.objects[i]!.metadata?.name === 'c-watch');
      expect(mine).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    });

    it('merge patch and JSON patch', async () => {
      await objects.create(cm('c-patch', { a: '1', b: '2' }));
      const merged = await objects.patch(cm('c-patch', { a: '9', b: null as unknown as string }), undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
      expect((merged as { data: Record<string, string> }).data).toEqual({ a: '9' });
      const patched = await core.patchNamespacedConfigMap({ name: 'c-patch', namespace: ns, body: [{ op: 'add', path: '/data/c', value: '3' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
      expect(patched.data).toEqual({ a: '9', c: '3' });
    });

    it('server-side apply: creates, removes fields the manager stops applying, conflicts with another manager unless forced', async () => {
      const applied = await objects.patch(cm('c-ssa', { a: '1', b: '2' }), undefined, undefined, 'contract-a', true, PatchStrategy.ServerSideApply);
      expect((applied as { data: Record<string, string> }).data).toEqual({ a: '1', b: '2' });
      const again = await objects.patch(cm('c-ssa', { a: '1' }), undefined, undefined, 'contract-a', true, PatchStrategy.ServerSideApply);
      expect((again as { data: Record<string, string> }).data).toEqual({ a: '1' });
      await expect(objects.patch(cm('c-ssa', { a: 'other' }), undefined, undefined, 'contract-b', false, PatchStrategy.ServerSideApply)).rejects.toSatisfy(
        (e: unknown) => code(e) === 409,
      );
      const forced = await objects.patch(cm('c-ssa', { a: 'other' }), undefined, undefined, 'contract-b', true, PatchStrategy.ServerSideApply);
      expect((forced as { data: Record<string, string> }).data.a).toBe('other');
      // Applying the same configuration twice changes nothing (GitOps idempotence).
      const rv = forced.metadata?.resourceVersion;
      const same = await objects.patch(cm('c-ssa', { a: 'other' }), undefined, undefined, 'contract-b', true, PatchStrategy.ServerSideApply);
      expect(same.metadata?.resourceVersion).toBe(rv);
    });

    it('generation moves with spec changes only; status goes through the status subresource', async () => {
      const w: Widget = { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-gen', namespace: ns }, spec: { size: 1 } };
      const created = (await objects.create(w)) as Widget;
      expect(created.metadata?.generation).toBe(1);
      const labelled = (await objects.patch({ ...w, metadata: { ...w.metadata, labels: { x: 'y' } } }, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch)) as Widget;
      expect(labelled.metadata?.generation).toBe(1);
      const bigger = (await objects.patch({ ...w, spec: { size: 2 } }, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch)) as Widget;
      expect(bigger.metadata?.generation).toBe(2);
      // The main resource ignores status...
      const ignored = (await objects.replace({ ...bigger, status: { phase: 'Ignored' } })) as Widget;
      expect(ignored.status?.phase).toBeUndefined();
      // ...and the status subresource ignores spec, keeps generation, checks resourceVersion.
      const st = (await custom.replaceNamespacedCustomObjectStatus({
        group: GROUP,
        version: 'v1',
        namespace: ns,
        plural: 'widgets',
        name: 'w-gen',
        body: { ...ignored, spec: { size: 99 }, status: { phase: 'Ready', observedGeneration: 2 } },
      })) as Widget;
      expect(st.status).toEqual({ phase: 'Ready', observedGeneration: 2 });
      expect(st.spec?.size).toBe(2);
      expect(st.metadata?.generation).toBe(2);
      await expect(
        custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: 'v1', namespace: ns, plural: 'widgets', name: 'w-gen', body: { ...ignored, status: { phase: 'Stale' } } }),
      ).rejects.toSatisfy((e: unknown) => code(e) === 409);
    });

    it('finalizers: delete sets deletionTimestamp; removing the last finalizer deletes', async () => {
      await objects.create({ ...cm('c-fin'), metadata: { name: 'c-fin', namespace: ns, finalizers: ['contract.svc.io/hold'] } });
      await objects.delete(cm('c-fin'));
      const held = await objects.read(ref('c-fin'));
      expect(held.metadata?.deletionTimestamp).toBeTruthy();
      await objects.patch({ ...cm('c-fin'), metadata: { name: 'c-fin', namespace: ns, finalizers: [] } }, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
      await eventually(
        () =>
          objects.read(ref('c-fin')).then(
            () => undefined,
            (e) => (code(e) === 404 ? true : undefined),
          ),
        'the finalized ConfigMap to disappear',
      );
    });

    it('a pod bound to a node is deleted gracefully: Terminating until a delete with grace 0; an unbound pod goes at once', async () => {
      const pod = (name: string, nodeName?: string) => ({
        metadata: { name },
        spec: { ...(nodeName ? { nodeName } : {}), terminationGracePeriodSeconds: 45, containers: [{ name: 'c', image: 'registry.invalid/none:1' }] },
      });
      // No kubelet serves this node, so nothing ends the pod's termination but the last delete.
      const created = await core.createNamespacedPod({ namespace: ns, body: pod('p-grace', 'contract-no-such-node') });
      await core.deleteNamespacedPod({ namespace: ns, name: 'p-grace' });
      const terminating = await core.readNamespacedPod({ namespace: ns, name: 'p-grace' });
      expect(terminating.metadata?.uid).toBe(created.metadata?.uid);
      expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(45);
      // deletionTimestamp: the delete's time plus the grace period (whole seconds)
      const after = (new Date(terminating.metadata!.deletionTimestamp!).getTime() - new Date(created.metadata!.creationTimestamp!).getTime()) / 1000;
      expect(after).toBeGreaterThanOrEqual(44);
      expect(after).toBeLessThan(60);
      // A later delete may shorten the period, not lengthen it.
      await core.deleteNamespacedPod({ namespace: ns, name: 'p-grace', gracePeriodSeconds: 10 });
      expect((await core.readNamespacedPod({ namespace: ns, name: 'p-grace' })).metadata?.deletionGracePeriodSeconds).toBe(10);
      await core.deleteNamespacedPod({ namespace: ns, name: 'p-grace', gracePeriodSeconds: 30 });
      expect((await core.readNamespacedPod({ namespace: ns, name: 'p-grace' })).metadata?.deletionGracePeriodSeconds).toBe(10);
      await core.deleteNamespacedPod({ namespace: ns, name: 'p-grace', gracePeriodSeconds: 0 });
      await eventually(
        () =>
          core.readNamespacedPod({ namespace: ns, name: 'p-grace' }).then(
            () => undefined,
            (e) => (code(e) === 404 ? true : undefined),
          ),
        'the pod to be gone after a delete with grace 0',
      );
      await core.createNamespacedPod({ namespace: ns, body: pod('p-unbound') });
      await core.deleteNamespacedPod({ namespace: ns, name: 'p-unbound' });
      expect(await core.readNamespacedPod({ namespace: ns, name: 'p-unbound' }).then(() => 200, (e: unknown) => code(e))).toBe(404);
    });

    it('owner references: deleting the owner garbage-collects dependents in the background', async () => {
      const owner = await objects.create(cm('c-owner'));
      await objects.create(dependent('c-dependent', 'c-owner', owner.metadata!.uid!));
      await objects.delete(cm('c-owner'), undefined, undefined, undefined, undefined, 'Background');
      await collected('c-dependent', 'the dependent to be collected');
    }, 90_000);

    it('a Lease with millisecond MicroTimes is refused with 400; the operator\'s Lease (six digits) is accepted', async () => {
      const post = (renewTime: string) =>
        objects.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `lease-${renewTime.length}`, namespace: ns }, spec: { holderIdentity: 'a', renewTime } } as KubernetesObject);
      // The typed client turns MicroTime into Date.toISOString(): milliseconds.
      const typed = await target.kc.makeApiClient(CoordinationV1Api).createNamespacedLease({ namespace: ns, body: { metadata: { name: 'typed' }, spec: { holderIdentity: 'a', renewTime: new Date('2026-11-26T20:17:23.108Z') as never } } }).then(() => 200, (e: unknown) => code(e));
      expect(typed).toBe(400);
      expect(await post('2026-11-26T20:17:23.108Z').then(() => 200, (e: unknown) => code(e))).toBe(400);
      expect(await post('2026-11-26T20:17:23Z').then(() => 200, (e: unknown) => code(e))).toBe(400);
      const leases = new Kube(target.kc).leaseClient(ns, 'operator-lease');
      const t0 = new Date('2026-11-26T20:17:23.108Z').toISOString();
      await leases.create({ holderIdentity: 'op-1', leaseDurationSeconds: 15, acquireTime: t0, renewTime: t0, leaseTransitions: 0 });
      const got = await leases.get();
      expect(got?.renewTime).toMatch(/^2026-11-26T20:17:23\.108000Z$/);
      expect(microTime('2026-11-26T20:17:23.108123Z')).toBe('2026-11-26T20:17:23.108123Z');
      await leases.update({ ...got!, renewTime: new Date().toISOString() });
      expect((await leases.get())?.holderIdentity).toBe('op-1');
    });

    it('a PUT without resourceVersion is refused for a Lease and a custom resource, allowed for a ConfigMap', async () => {
      const lease = await objects.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'put-lease', namespace: ns }, spec: { holderIdentity: 'a' } } as KubernetesObject);
      const strip = <T extends KubernetesObject>(o: T) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
      await expect(objects.replace(strip({ ...lease, spec: { holderIdentity: 'b' } } as KubernetesObject))).rejects.toSatisfy((e: unknown) => code(e) === 422);
      const w = await objects.create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-put', namespace: ns }, spec: { size: 1 } } as Widget);
      await expect(objects.replace(strip({ ...w, spec: { size: 2 } } as Widget))).rejects.toSatisfy((e: unknown) => code(e) === 422);
      const c = await objects.create(cm('c-put', { a: '1' }));
      const replaced = (await objects.replace(strip({ ...c, data: { a: '2' } } as KubernetesObject))) as KubernetesObject & { data: Record<string, string> };
      expect(replaced.data).toEqual({ a: '2' });
    });

    it('strategic merge patch merges containers and env by name on a built-in kind, and is refused for a custom resource', async () => {
      const dep = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'smp', namespace: ns },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'smp' } },
          template: { metadata: { labels: { app: 'smp' } }, spec: { containers: [{ name: 'a', image: 'busybox', env: [{ name: 'X', value: '1' }] }, { name: 'b', image: 'busybox' }] } },
        },
      };
      await objects.create(dep as KubernetesObject);
      const patched = (await objects.patch(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'smp', namespace: ns }, spec: { template: { spec: { containers: [{ name: 'a', env: [{ name: 'Y', value: '2' }] }] } } } } as KubernetesObject,
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.StrategicMergePatch,
      )) as unknown as typeof dep;
      const containers = patched.spec.template.spec.containers as { name: string; image: string; env?: { name: string; value: string }[] }[];
      expect(containers.map((c) => c.name)).toEqual(['a', 'b']);
      expect(containers[0]!.env).toEqual([
        { name: 'X', value: '1' },
        { name: 'Y', value: '2' },
      ]);
      await objects.create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-smp', namespace: ns }, spec: { size: 1 } } as Widget);
      await expect(
        objects.patch({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-smp', namespace: ns }, spec: { size: 2 } } as Widget, undefined, undefined, undefined, undefined, PatchStrategy.StrategicMergePatch),
      ).rejects.toSatisfy((e: unknown) => code(e) === 415);
    });

    it('server-side apply merges list-map items of two managers (env by name) instead of replacing the list', async () => {
      const sts = (manager: string, env: { name: string; value: string }[]) =>
        objects.patch(
          {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            metadata: { name: 'ssa-lists', namespace: ns },
            spec: {
              serviceName: 'ssa-lists',
              replicas: 0,
              selector: { matchLabels: { app: 'ssa-lists' } },
              template: { metadata: { labels: { app: 'ssa-lists' } }, spec: { containers: [{ name: 'main', image: 'busybox', env }] } },
            },
          } as KubernetesObject,
          undefined,
          undefined,
          manager,
          true,
          PatchStrategy.ServerSideApply,
        );
      await sts('contract-operator', [{ name: 'A', value: '1' }]);
      // Another manager adds its own env entry to the same container (the container's name is the key).
      const both = (await objects.patch(
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'ssa-lists', namespace: ns },
          spec: { template: { spec: { containers: [{ name: 'main', env: [{ name: 'B', value: '2' }] }] } } },
        } as KubernetesObject,
        undefined,
        undefined,
        'contract-other',
        true,
        PatchStrategy.ServerSideApply,
      )) as unknown as { spec: { template: { spec: { containers: { env: { name: string }[] }[] } } } };
      expect(both.spec.template.spec.containers[0]!.env.map((e) => e.name)).toEqual(['A', 'B']);
      // The first manager stops applying A: A goes, B (the other manager's) stays.
      const after = (await sts('contract-operator', [{ name: 'C', value: '3' }])) as unknown as typeof both;
      expect(after.spec.template.spec.containers[0]!.env.map((e) => e.name).sort()).toEqual(['B', 'C']);
    });

    it('immutable StatefulSet fields (selector, serviceName, volumeClaimTemplates, podManagementPolicy) are refused on update', async () => {
      const base = {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'immutable', namespace: ns },
        spec: {
          serviceName: 'immutable',
          replicas: 0,
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: { app: 'immutable' } },
          template: { metadata: { labels: { app: 'immutable', v: '1' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
        },
      };
      await objects.create(base as KubernetesObject);
      const apply = (spec: Record<string, unknown>) =>
        objects.patch({ ...base, spec: { ...base.spec, ...spec } } as KubernetesObject, undefined, undefined, 'contract-immutable', true, PatchStrategy.ServerSideApply);
      await expect(apply({ serviceName: 'other' })).rejects.toSatisfy((e: unknown) => code(e) === 422);
      await expect(apply({ podManagementPolicy: 'OrderedReady' })).rejects.toSatisfy((e: unknown) => code(e) === 422);
      await expect(apply({ selector: { matchLabels: { app: 'immutable', x: 'y' } }, template: { ...base.spec.template, metadata: { labels: { app: 'immutable', x: 'y' } } } })).rejects.toSatisfy((e: unknown) => code(e) === 422);
      await expect(apply({ volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } }] })).rejects.toSatisfy((e: unknown) => code(e) === 422);
      // The template and replicas may change.
      const ok = (await apply({ replicas: 1, template: { ...base.spec.template, metadata: { labels: { app: 'immutable', v: '2' } } } })) as unknown as { spec: { replicas: number } };
      expect(ok.spec.replicas).toBe(1);
    });

    it('server-side printing: a Table with the CRD\'s printer columns (what kubectl get shows)', async () => {
      await objects.create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-table', namespace: ns }, spec: { size: 7, color: 'red' } } as Widget);
      const cluster = target.kc.getCurrentCluster()!;
      const ctx = new RequestContext(`${cluster.server}/apis/${GROUP}/v1/namespaces/${ns}/widgets`, HttpMethod.GET);
      ctx.setHeaderParam('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json');
      await target.kc.applySecurityAuthentication(ctx);
      const raw = await new IsomorphicFetchHttpLibrary().send(ctx).toPromise();
      expect(raw.httpStatusCode).toBe(200);
      const res = { json: async () => JSON.parse(await raw.body.text()) as unknown };
      const table = (await res.json()) as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
      expect(table.kind).toBe('Table');
      // The CRD's columns, nothing added (a CRD without any gets Name and Age).
      expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Size', 'Color']);
      const row = table.rows.find((r) => r.cells[0] === 'w-table')!;
      expect(row.cells.slice(0, 3)).toEqual(['w-table', 7, 'red']);
    });

    it('a watch that starts below the kept history (trimmed, not compacted by hand) answers 410 Gone', async (ctx) => {
      if (!target.historyLimit) return ctx.skip();
      const list = await core.listNamespacedConfigMap({ namespace: ns });
      target.historyLimit(20);
      for (let i = 0; i < 30; i++) await objects.create(cm(`c-trim-${i}`));
      const got = await watchEvents(target.kc, `/api/v1/namespaces/${ns}/configmaps`, list.metadata!.resourceVersion!, () => false, 3_000);
      expect(got.errorCode).toBe(410);
    });

    it('a streaming list (watch with sendInitialEvents) sends the current objects, then a BOOKMARK marking the end of the initial events', async () => {
      await objects.create(cm('c-stream', {}, { stream: 'contract' }));
      let bookmark: { metadata?: { annotations?: Record<string, string>; resourceVersion?: string } } | undefined;
      const names: string[] = [];
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      const req = await new Watch(target.kc).watch(
        `/api/v1/namespaces/${ns}/configmaps`,
        { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, labelSelector: 'stream=contract' },
        (type, obj) => {
          if (type === 'ADDED') names.push((obj as KubernetesObject).metadata!.name!);
          if (type === 'BOOKMARK' && (obj as typeof bookmark)?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true') {
            bookmark = obj as typeof bookmark;
            resolve();
          }
        },
        () => resolve(),
      );
      const timer = setTimeout(resolve, 10_000);
      await done;
      clearTimeout(timer);
      req.abort();
      expect(names).toEqual(['c-stream']);
      expect(bookmark?.metadata?.resourceVersion).toBeTruthy();
    });

    it('an object created after its owner was deleted (a controller racing the deletion) is garbage-collected', async () => {
      const owner = await objects.create(cm('c-gone-owner'));
      await objects.delete(cm('c-gone-owner'));
      await objects.create(dependent('c-late-dependent', 'c-gone-owner', owner.metadata!.uid!));
      await collected('c-late-dependent', 'the late dependent to be collected');
    }, 90_000);

    it('a watch from a compacted resourceVersion answers 410 Gone', async (ctx) => {
      if (!target.compact) return ctx.skip();
      const list = await core.listNamespacedConfigMap({ namespace: ns });
      await objects.create(cm('c-compact'));
      target.compact();
      const got = await watchEvents(target.kc, `/api/v1/namespaces/${ns}/configmaps`, list.metadata!.resourceVersion!, () => false, 3_000);
      expect(got.errorCode).toBe(410);
    });
  });
}


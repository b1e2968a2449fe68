/**
 * Shared set-up for the operator's integration tests: the fake API server
 * with the generated CRD installed (admission through its schema and CEL
 * rules), the credentials Secret, and helpers that read SvcClusters back the
 * way `kubectl wait` would.
 */
import { readFileSync } from 'node:fs';
import { CustomObjectsApi, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { GENERATED_FILES } from '../src/crd/generated-files.ts';
import { GROUP, PLURAL, type SvcCluster, type SvcClusterSpec, VERSION } from '../src/crd/svccluster.ts';
import { statusCode } from '../src/kube/kube.ts';
import { readyForWait } from '../src/reconcile/conditions.ts';
import { AdminClient } from '../src/admin/client.ts';
import { Kube } from '../src/kube/kube.ts';
import { Controller, type ControllerOptions } from '../src/runtime/controller.ts';
import type { FakeAdminApi } from './fake-admin/fake-admin.ts';
import { crdAdmission } from './crd-admission.ts';
import { helm } from './tools.ts';
import { FakeApiServer } from './fake-apiserver/server.ts';
import { ApiError, type Obj } from './fake-apiserver/store.ts';

export const NS = 'storage';
/** Where the operator chart is installed in tests (release `ops`). */
export const OPERATOR_NS = 'svc-system';
export const OPERATOR_SA = 'ops-svc-operator';
export const CREDENTIALS = { accessKey: 'operatoradmin', secretKey: 'operator-secret-key-0123' };

/**
 * The operator chart's RBAC objects (Roles, ClusterRoles, their bindings and
 * the ServiceAccount), rendered by a real `helm template` of release `ops`
 * in `svc-system`. `drop` removes one verb from the rule that grants it on a
 * resource (to show the operator fails without it).
 */
export function chartRbac(opts: { values?: string[]; drop?: { resource: string; verb: string } } = {}): Obj[] {
  const out = helm(['template', 'ops', 'charts/svc-operator', '--namespace', OPERATOR_NS, ...(opts.values ?? [])]).out;
  const docs = parseAllDocuments(out)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d && ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'ServiceAccount'].includes(String(d.kind)));
  if (opts.drop) {
    const { resource, verb } = opts.drop;
    const rule = docs
      .flatMap((d) => ((d['rules'] as { resources: string[]; verbs: string[] }[] | undefined) ?? []))
      .find((r) => r.resources.includes(resource) && r.verbs.includes(verb));
    if (!rule) throw new Error(`the chart grants no ${verb} on ${resource}`);
    rule.verbs = rule.verbs.filter((v) => v !== verb);
  }
  return docs;
}

/**
 * Turns on RBAC in the API server, stores the chart's RBAC (as `helm install`
 * would) and returns a token of the operator's ServiceAccount.
 */
export function installOperatorRbac(api: FakeApiServer, opts: Parameters<typeof chartRbac>[0] = {}): string {
  api.enableRbac();
  const nsType = api.store.find('', 'v1', 'namespaces')!;
  if (!api.store.tryGet(nsType, undefined, OPERATOR_NS)) api.store.create(nsType, undefined, { metadata: { name: OPERATOR_NS } });
  for (const d of chartRbac(opts)) {
    const [group, version] = String(d.apiVersion).includes('/') ? String(d.apiVersion).split('/') : ['', String(d.apiVersion)];
    const t = api.store.byKind(String(d.apiVersion), String(d.kind));
    if (!t) throw new Error(`no type for ${group}/${version} ${d.kind}`);
    api.store.create(t, t.namespaced ? (d.metadata.namespace ?? OPERATOR_NS) : undefined, d, 'helm');
  }
  return api.serviceAccountToken(OPERATOR_NS, OPERATOR_SA);
}

/**
 * The in-process API server with admission for custom resources (the CRD's
 * schema and CEL rules, whatever CRD is installed), the namespace `storage`
 * and the credentials Secret; the SvcCluster CRD installed unless `crd: false`
 * (a test installs it the way a user would, e.g. with Helm).
 */
export async function startApiWithCrd(opts: { crd?: boolean; tls?: boolean } = {}): Promise<FakeApiServer> {
  const api = await FakeApiServer.start({ tls: opts.tls === true });
  const crd = parse(readFileSync(GENERATED_FILES.crd, 'utf8')) as Obj;
  const compiled = new Map<string, ReturnType<typeof crdAdmission>>();
  api.crdValidator = (crdObj, obj, old) => {
    const key = `${crdObj.metadata.uid}/${JSON.stringify(crdObj['spec']).length}`;
    let admit = compiled.get(key);
    if (!admit) compiled.set(key, (admit = crdAdmission(crdObj as never)));
    const violations = admit(obj, old);
    if (violations.length) throw new ApiError(422, 'Invalid', `${obj.kind} "${obj.metadata.name}" is invalid: ${violations.map((v) => `${v.path}: ${v.message}`).join('; ')}`);
  };
  const objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  // Raw POST, as `kubectl apply` sends it: client-node's typed serializer drops
  // x-kubernetes-list-type / x-kubernetes-list-map-keys from CRD schemas.
  if (opts.crd !== false) {
    const res = await api.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    if (res.status !== 201) throw new Error(`CRD install failed: ${res.status} ${res.text}`);
  }
  await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await objects.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'prod-root', namespace: NS },
    data: { accessKey: Buffer.from(CREDENTIALS.accessKey).toString('base64'), secretKey: Buffer.from(CREDENTIALS.secretKey).toString('base64') },
  } as never);
  return api;
}

export class Clusters {
  readonly #api: FakeApiServer;
  readonly #custom: CustomObjectsApi;
  readonly #objects: KubernetesObjectApi;

  constructor(api: FakeApiServer) {
    this.#api = api;
    this.#custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    this.#objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  }

  async create(name: string, spec: SvcClusterSpec): Promise<SvcCluster> {
    return (await this.#custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'SvcCluster', metadata: { name, namespace: NS }, spec } })) as SvcCluster;
  }

  async get(name: string): Promise<SvcCluster> {
    return (await this.#custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name })) as SvcCluster;
  }

  /** Edits the spec as a GitOps tool would (merge patch of spec only). */
  async editSpec(name: string, edit: (spec: SvcClusterSpec) => SvcClusterSpec): Promise<SvcCluster> {
    // The patch carries the resourceVersion read (optimistic concurrency); when the
    // operator's status write lands in between, the API answers 409 and a GitOps tool
    // reads again and retries, as here.
    for (let attempt = 1; ; attempt++) {
      const c = await this.get(name);
      try {
        return (await this.#objects.patch(
          { apiVersion: c.apiVersion, kind: c.kind, metadata: { name, namespace: NS, resourceVersion: c.metadata.resourceVersion }, spec: edit(structuredClone(c.spec)) } as never,
          undefined,
          undefined,
          'gitops',
          undefined,
          PatchStrategy.MergePatch,
        )) as unknown as SvcCluster;
      } catch (err) {
        if (statusCode(err) !== 409 || attempt >= 10) throw err;
      }
    }
  }

  async delete(name: string): Promise<void> {
    await this.#custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name });
  }

  /** Waits until `pred` holds for the cluster (bounded), returning it. */
  async waitFor(name: string, what: string, pred: (c: SvcCluster) => boolean, timeoutMs = 60_000): Promise<SvcCluster> {
    const end = Date.now() + timeoutMs;
    let last: SvcCluster | undefined;
    for (;;) {
      last = await this.get(name).catch(() => last);
      if (last && pred(last)) return last;
      if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; status: ${JSON.stringify(last?.status, null, 1)?.slice(0, 4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** `kubectl wait --for=condition=Ready`: Ready True, computed for the current generation. */
  waitReady(name: string, timeoutMs?: number): Promise<SvcCluster> {
    return this.waitFor(name, 'Ready', (c) => readyForWait(c.metadata.generation, c.status?.conditions) && c.status?.observedGeneration === c.metadata.generation, timeoutMs);
  }

  get api(): FakeApiServer {
    return this.#api;
  }
}

export function listOf(api: FakeApiServer, group: string, version: string, plural: string, ns = NS): Obj[] {
  return api.store.list(api.store.find(group, version, plural)!, ns);
}

/** The `SVC_VOLUMES` a pod's server container was given. */
const podVolumes = (pod: Obj): string | undefined =>
  (pod['spec'] as { containers: { env: { name: string; value: string }[] }[] }).containers[0]!.env.find((e) => e.name === 'SVC_VOLUMES')?.value;

/**
 * A kubelet readiness for tests against the fake admin API: once every
 * running pod has the same `SVC_VOLUMES`, the admin API's pool list follows
 * it (as real servers restarted with it would), and a pod is ready while
 * its own `SVC_VOLUMES` is that pool list.
 */
export function readyWhenPoolsAgree(api: FakeApiServer, admin: FakeAdminApi): (pod: Obj) => boolean {
  return (pod) => {
    const running = listOf(api, '', 'v1', 'pods').filter((p) => (p['status'] as { phase?: string })?.phase === 'Running');
    const vols = new Set(running.map(podVolumes));
    if (vols.size === 1 && [...vols][0]!.split(' ').join(' ') !== admin.pools.join(' ')) admin.setPools([...vols][0]!.split(' '));
    return admin.pools.join(' ') === podVolumes(pod);
  };
}

/**
 * The operator as the integration tests run it: the chart's service account
 * (`token`), quick polls, one worker, its admin calls to the fake admin
 * API; `extra` sets the log and anything else.
 */
export function testController(api: FakeApiServer, token: string, admin: FakeAdminApi, extra: Partial<ControllerOptions> & Pick<ControllerOptions, 'log'>): Controller {
  return new Controller({
    kube: new Kube(api.kubeConfig(token)),
    clusterDomain: 'cluster.local',
    pollMs: 100,
    idleMs: 30_000,
    stalledMs: 500,
    concurrency: 1,
    adminFactory: (_e, creds) => new AdminClient({ endpoints: [admin.url], credentials: creds }),
    ...extra,
  });
}

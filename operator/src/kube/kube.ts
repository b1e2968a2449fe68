/**
 * The operator's Kubernetes I/O, through `@kubernetes/client-node`:
 * informers that restart themselves (client-node's ListWatch stops on any
 * error but 410, and informers are known to go quiet: each informer has a
 * watchdog that re-lists when it has heard nothing for a while), server-side
 * apply with one field manager, status writes through the status
 * subresource (409 on a stale resourceVersion), events, leases.
 */
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  HttpMethod,
  type Informer,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  type ObjectCache,
  PatchStrategy,
  RequestContext,
  StorageV1Api,
  PolicyV1Api,
  type V1PodDisruptionBudget,
  type V1Pod,
  type V1PersistentVolumeClaim,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, PLURAL, type SvcCluster, type SvcClusterStatus, VERSION } from '../crd/svccluster.ts';
import type { KubeObject } from '../reconcile/render.ts';
import { FIELD_MANAGER, LABEL_CLUSTER } from '../topology/names.ts';
import type { LeaseClient, LeaseRecord } from '../runtime/leader-election.ts';

export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

export const ignoreNotFound = (err: unknown): void => {
  if (statusCode(err) !== 404) throw err;
};

export interface WatchedCache<T extends KubernetesObject> {
  list(namespace?: string): T[];
  start(): Promise<void>;
  stop(): void;
}

/**
 * An informer that keeps running: restarts after errors with backoff, and a
 * watchdog re-lists when no event arrived for `quietMs`.
 */
export function resilientInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
  onChange: (obj: T) => void,
  log: Logger,
  opts: { labelSelector?: string; quietMs?: number } = {},
): WatchedCache<T> {
  let informer: Informer<T> & ObjectCache<T>;
  let stopped = false;
  let backoff = 1000;
  let lastEvent = Date.now();
  let watchdog: NodeJS.Timeout | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  const make = () => {
    informer = makeInformer<T>(kc, path, list as never, opts.labelSelector);
    const seen = (o: T) => {
      lastEvent = Date.now();
      backoff = 1000;
      onChange(o);
    };
    informer.on('add', seen);
    informer.on('update', seen);
    informer.on('delete', seen);
    informer.on('connect', () => {
      lastEvent = Date.now();
    });
    informer.on('error', (err) => {
      if (stopped) return;
      log.warn({ event: 'informer_error', path, err: (err as Error)?.message ?? String(err), retryInMs: backoff }, 'watch failed; restarting');
      restartTimer = setTimeout(() => {
        if (!stopped) void informer.start().catch(() => undefined);
      }, backoff);
      restartTimer.unref();
      backoff = Math.min(backoff * 2, 30_000);
    });
  };
  make();
  return {
    list: (ns) => [...informer.list(ns)],
    async start() {
      await informer.start();
      const quiet = opts.quietMs ?? 5 * 60_000;
      watchdog = setInterval(() => {
        if (Date.now() - lastEvent < quiet || stopped) return;
        log.info({ event: 'informer_watchdog', path }, 'no watch event for a while; re-listing');
        lastEvent = Date.now();
        void informer
          .stop()
          .then(() => informer.start())
          .catch(() => undefined);
      }, Math.min(quiet, 60_000));
      watchdog.unref();
    },
    stop() {
      stopped = true;
      if (watchdog) clearInterval(watchdog);
      if (restartTimer) clearTimeout(restartTimer);
      void informer.stop();
    },
  };
}

export class Kube {
  readonly kc: KubeConfig;
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
  readonly storage: StorageV1Api;
  readonly coordination: CoordinationV1Api;
  readonly ext: ApiextensionsV1Api;
  readonly policy: PolicyV1Api;

  constructor(kc: KubeConfig) {
    this.kc = kc;
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.core = kc.makeApiClient(CoreV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.storage = kc.makeApiClient(StorageV1Api);
    this.coordination = kc.makeApiClient(CoordinationV1Api);
    this.ext = kc.makeApiClient(ApiextensionsV1Api);
    this.policy = kc.makeApiClient(PolicyV1Api);
  }

  async getCluster(namespace: string, name: string): Promise<SvcCluster | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name })) as SvcCluster;
    } catch (err) {
      ignoreNotFound(err);
      return undefined;
    }
  }

  listClusters(namespace?: string): Promise<{ items: SvcCluster[]; metadata?: { resourceVersion?: string } }> {
    return (
      namespace
        ? this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL })
        : this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL })
    ) as Promise<{ items: SvcCluster[] }>;
  }

  /** Writes status through the status subresource; 409 when `c` is not the latest version. */
  async writeStatus(c: SvcCluster, status: SvcClusterStatus): Promise<SvcCluster> {
    return (await this.custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace: c.metadata.namespace!,
      plural: PLURAL,
      name: c.metadata.name,
      body: { ...c, status },
      fieldManager: FIELD_MANAGER,
    })) as SvcCluster;
  }

  /** Sets the finalizer list (merge patch guarded by resourceVersion). */
  async setFinalizers(c: SvcCluster, finalizers: string[]): Promise<SvcCluster> {
    return (await this.objects.patch(
      { apiVersion: c.apiVersion, kind: c.kind, metadata: { name: c.metadata.name, namespace: c.metadata.namespace, resourceVersion: c.metadata.resourceVersion, finalizers } },
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    )) as unknown as SvcCluster;
  }

  async apply(obj: KubeObject): Promise<void> {
    await this.objects.patch(obj as KubernetesObject, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    await this.core.deleteNamespacedPod({ namespace, name }).catch(ignoreNotFound);
  }

  async deleteStatefulSet(namespace: string, name: string): Promise<void> {
    await this.apps.deleteNamespacedStatefulSet({ namespace, name, propagationPolicy: 'Background' }).catch(ignoreNotFound);
  }

  async deleteService(namespace: string, name: string): Promise<void> {
    await this.core.deleteNamespacedService({ namespace, name }).catch(ignoreNotFound);
  }

  async deletePdb(namespace: string, name: string): Promise<void> {
    await this.policy.deleteNamespacedPodDisruptionBudget({ namespace, name }).catch(ignoreNotFound);
  }

  async listPvcs(namespace: string, labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    return (await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector })).items;
  }

  async deletePvc(namespace: string, name: string): Promise<void> {
    await this.core.deleteNamespacedPersistentVolumeClaim({ namespace, name }).catch(ignoreNotFound);
  }

  /** Grows a PVC in place after checking its StorageClass allows expansion. */
  async expandPvc(pvc: V1PersistentVolumeClaim, storage: string | number): Promise<void> {
    const scName = pvc.spec?.storageClassName;
    if (scName) {
      const sc = await this.storage.readStorageClass({ name: scName });
      if (sc.allowVolumeExpansion !== true) throw Object.assign(new Error(`StorageClass ${scName} does not allow volume expansion`), { code: 'VolumeExpansionNotAllowed' });
    }
    await this.objects.patch(
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: pvc.metadata!.name!, namespace: pvc.metadata!.namespace! }, spec: { resources: { requests: { storage: String(storage) } } } } as KubernetesObject,
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    );
  }

  async readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const s = await this.core.readNamespacedSecret({ namespace, name });
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
      for (const [k, v] of Object.entries(s.stringData ?? {})) out[k] = v;
      return out;
    } catch (err) {
      ignoreNotFound(err);
      return undefined;
    }
  }

  async readConfigMap(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const m = await this.core.readNamespacedConfigMap({ namespace, name });
      return { ...(m.data ?? {}) };
    } catch (err) {
      ignoreNotFound(err);
      return undefined;
    }
  }

  async event(c: SvcCluster, type: 'Normal' | 'Warning', reason: string, message: string, now: Date): Promise<void> {
    const ts = now.toISOString();
    await this.core.createNamespacedEvent({
      namespace: c.metadata.namespace!,
      body: {
        metadata: { name: `${c.metadata.name}.${now.getTime().toString(16)}${Math.random().toString(16).slice(2, 8)}`, namespace: c.metadata.namespace! },
        involvedObject: { apiVersion: c.apiVersion, kind: c.kind, name: c.metadata.name, namespace: c.metadata.namespace!, uid: c.metadata.uid!, resourceVersion: c.metadata.resourceVersion! },
        type,
        reason,
        message: message.slice(0, 1000),
        source: { component: 'svc-operator' },
        reportingComponent: 'svc-operator',
        reportingInstance: process.env['HOSTNAME'] ?? 'svc-operator',
        firstTimestamp: ts as unknown as Date,
        lastTimestamp: ts as unknown as Date,
        count: 1,
      },
    });
  }

  informers(namespace: string | undefined, onChange: (kind: string, obj: KubernetesObject) => void, log: Logger, quietMs?: number) {
    const selector = LABEL_CLUSTER;
    const nsPath = (p: string, group = '/api/v1') => (namespace ? `${group}/namespaces/${namespace}/${p}` : `${group}/${p}`);
    const clusters = resilientInformer<SvcCluster & KubernetesObject>(this.kc, nsPath(PLURAL, `/apis/${GROUP}/${VERSION}`), () => this.listClusters(namespace) as never, (o) => onChange('SvcCluster', o), log, { quietMs });
    const pods = resilientInformer<V1Pod>(
      this.kc,
      nsPath('pods'),
      () => (namespace ? this.core.listNamespacedPod({ namespace, labelSelector: selector }) : this.core.listPodForAllNamespaces({ labelSelector: selector })),
      (o) => onChange('Pod', o),
      log,
      { labelSelector: selector, quietMs },
    );
    const statefulSets = resilientInformer<V1StatefulSet>(
      this.kc,
      nsPath('statefulsets', '/apis/apps/v1'),
      () => (namespace ? this.apps.listNamespacedStatefulSet({ namespace, labelSelector: selector }) : this.apps.listStatefulSetForAllNamespaces({ labelSelector: selector })),
      (o) => onChange('StatefulSet', o),
      log,
      { labelSelector: selector, quietMs },
    );
    const pvcs = resilientInformer<V1PersistentVolumeClaim>(
      this.kc,
      nsPath('persistentvolumeclaims'),
      () =>
        namespace ? this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector }) : this.core.listPersistentVolumeClaimForAllNamespaces({ labelSelector: selector }),
      (o) => onChange('PersistentVolumeClaim', o),
      log,
      { labelSelector: selector, quietMs },
    );
    const pdbs = resilientInformer<V1PodDisruptionBudget>(
      this.kc,
      nsPath('poddisruptionbudgets', '/apis/policy/v1'),
      () =>
        namespace ? this.policy.listNamespacedPodDisruptionBudget({ namespace, labelSelector: selector }) : this.policy.listPodDisruptionBudgetForAllNamespaces({ labelSelector: selector }),
      (o) => onChange('PodDisruptionBudget', o),
      log,
      { labelSelector: selector, quietMs },
    );
    return { clusters, pods, statefulSets, pvcs, pdbs };
  }

  /**
   * A JSON request through the kubeconfig's server, TLS and credentials,
   * without the typed client's (de)serialisers. Errors carry `code` (the HTTP
   * status) and `body`, like the typed client's.
   */
  async rawJson<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('no current cluster in the kubeconfig');
    const ctx = new RequestContext(`${cluster.server.replace(/\/+$/, '')}${path}`, HttpMethod[method]);
    ctx.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', 'application/json');
      ctx.setBody(JSON.stringify(body));
    }
    await this.kc.applySecurityAuthentication(ctx);
    const res = await new IsomorphicFetchHttpLibrary().send(ctx).toPromise();
    const text = await res.body.text();
    if (res.httpStatusCode >= 300) {
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        // not a Status object
      }
      throw Object.assign(new Error(`${method} ${path}: HTTP ${res.httpStatusCode}: ${message}`), { code: res.httpStatusCode, body: text });
    }
    return JSON.parse(text) as T;
  }

  /**
   * The leader-election Lease, sent as JSON written here: Kubernetes parses
   * acquireTime/renewTime as MicroTime (exactly six fractional digits) and
   * refuses anything else with 400, while client-node's typed serialiser
   * turns them into `Date.toISOString()` (milliseconds).
   */
  leaseClient(namespace: string, name: string): LeaseClient {
    type LeaseJson = { metadata?: { resourceVersion?: string }; spec?: Record<string, unknown> };
    const toRecord = (l: LeaseJson): LeaseRecord => ({
      holderIdentity: l.spec?.['holderIdentity'] as string | undefined,
      leaseDurationSeconds: l.spec?.['leaseDurationSeconds'] as number | undefined,
      acquireTime: l.spec?.['acquireTime'] as string | undefined,
      renewTime: l.spec?.['renewTime'] as string | undefined,
      leaseTransitions: l.spec?.['leaseTransitions'] as number | undefined,
      resourceVersion: l.metadata?.resourceVersion,
    });
    const body = (r: LeaseRecord) => {
      const spec: Record<string, unknown> = {};
      if (r.holderIdentity !== undefined) spec['holderIdentity'] = r.holderIdentity;
      if (r.leaseDurationSeconds !== undefined) spec['leaseDurationSeconds'] = r.leaseDurationSeconds;
      if (r.acquireTime !== undefined) spec['acquireTime'] = microTime(r.acquireTime);
      if (r.renewTime !== undefined) spec['renewTime'] = microTime(r.renewTime);
      if (r.leaseTransitions !== undefined) spec['leaseTransitions'] = r.leaseTransitions;
      return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace, ...(r.resourceVersion ? { resourceVersion: r.resourceVersion } : {}) }, spec };
    };
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
    return {
      get: async () => {
        try {
          return toRecord(await this.rawJson<LeaseJson>('GET', `${base}/${encodeURIComponent(name)}`));
        } catch (err) {
          ignoreNotFound(err);
          return undefined;
        }
      },
      create: async (r) => {
        await this.rawJson('POST', base, body(r));
      },
      update: async (r) => {
        await this.rawJson('PUT', `${base}/${encodeURIComponent(name)}`, body(r));
      },
    };
  }
}

/** Kubernetes MicroTime: RFC 3339 in UTC with exactly six fractional digits (`2026-11-26T20:17:23.108000Z`). */
export function microTime(t: string | Date): string {
  const d = typeof t === 'string' ? new Date(t) : t;
  if (Number.isNaN(d.getTime())) throw new Error(`not a time: ${String(t)}`);
  const micros = typeof t === 'string' ? (/\.(\d{4,6})/.exec(t)?.[1] ?? '').padEnd(6, '0').slice(3, 6) : '000';
  return d.toISOString().replace(/\.(\d{3})Z$/, `.$1${micros}Z`);
}

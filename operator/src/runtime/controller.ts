/**
 * The SvcCluster controller: observe → decide (the pure planner) → act.
 *
 * One reconcile per cluster key at a time (work queue). The planner's status
 * is written *before* its actions run (the journal), so a crash between the
 * two resumes in the new phase, whose actions are idempotent. Outcomes of
 * admin calls that cannot be observed later (a rebalance id, a clear) are
 * recorded in `status.operation` right after the call.
 */
import { randomUUID } from 'node:crypto';
import type { KubernetesObject, V1Pod, V1PersistentVolumeClaim, V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { type AdminApi, AdminClient, type Credentials } from '../admin/client.ts';
import { type IdentityApi, IamAdminClient } from '../admin/iam-client.ts';
import { AdminError } from '../admin/types.ts';
import { type ConditionInput, setCondition } from '../reconcile/conditions.ts';
import { applyIdentity, desiredIdentity, identityDue, identityHash } from '../reconcile/identity.ts';
import type { SvcCluster, SvcClusterStatus } from '../crd/svccluster.ts';
import { type Kube, statusCode, type WatchedCache } from '../kube/kube.ts';
import type { Action, AdminObs, Observation, PlanContext, PodObs, StatefulSetObs, PvcObs } from '../reconcile/observation.ts';
import { planReconcile, statusEqual } from '../reconcile/planner.ts';
import { ANNOTATION_LAUNCH_HASH, ANNOTATION_TEMPLATE_HASH, clusterDomain, headlessDomain, LABEL_CLUSTER, LABEL_POOL, LEGACY_FINALIZER, S3_PORT } from '../topology/names.ts';
import { reconcileTls } from './tls-manager.ts';
import { WorkQueue } from './workqueue.ts';

export interface ControllerOptions {
  readonly kube: Kube;
  readonly log: Logger;
  /** Watched namespace; undefined = all. */
  readonly namespace?: string | undefined;
  readonly clusterDomain: string;
  readonly pollMs: number;
  readonly idleMs: number;
  readonly stalledMs: number;
  readonly concurrency: number;
  readonly now?: () => Date;
  /** Admin API factory (tests may point it elsewhere); `ca`: what https pods are verified against. */
  readonly adminFactory?: (endpoints: string[], creds: Credentials, ca?: string, fallback?: Credentials) => AdminApi;
  /** The admin API's identity routes (spec.iam); default: an `IamAdminClient` over the same endpoints. */
  readonly identityFactory?: (endpoints: string[], creds: Credentials, ca?: string) => IdentityApi;
  readonly informerQuietMs?: number;
}

const keyOf = (ns: string, name: string) => `${ns}/${name}`;

/** How long the previous root credential is still tried after the Secret changed (kubelets refresh Secret volumes within a minute or two). */
export const ROTATION_GRACE_MS = 15 * 60_000;

export class Controller {
  readonly #o: ControllerOptions;
  readonly #queue: WorkQueue;
  #caches: ReturnType<Kube['informers']> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #running = false;
  /** Per cluster: the credentials Secret's key, and the one before it during a rotation. */
  readonly #keys = new Map<string, { current: Credentials; previous?: Credentials; since?: number }>();

  constructor(o: ControllerOptions) {
    this.#o = o;
    this.#queue = new WorkQueue({
      handler: (key) => this.reconcile(key),
      concurrency: o.concurrency,
      baseBackoffMs: 5_000,
      maxBackoffMs: 300_000,
      onError: (key, err, retryInMs) => o.log.error({ event: 'reconcile_failed', cluster: key, err: errText(err), retryInMs }, 'reconcile failed'),
    });
  }

  get queue(): WorkQueue {
    return this.#queue;
  }

  /** Caches synced, reconciles running. */
  async start(): Promise<void> {
    await this.startCaches();
    this.run();
  }

  /**
   * Lists and watches everything the controller reads. Every replica does
   * this (a standby is ready to take over with warm caches); the operator is
   * Ready once it returns.
   */
  async startCaches(): Promise<void> {
    if (this.#caches) return;
    const caches = this.#o.kube.informers(
      this.#o.namespace,
      (kind, obj) => this.#onChange(kind, obj),
      this.#o.log,
      this.#o.informerQuietMs,
    );
    this.#caches = caches;
    await Promise.all([caches.pods.start(), caches.statefulSets.start(), caches.pvcs.start(), caches.pdbs.start()]);
    await caches.clusters.start();
    this.#o.log.info({ event: 'caches_synced', namespace: this.#o.namespace ?? '(all)' }, 'caches synced');
  }

  /** Starts reconciling (the leader only): every cluster now, then on every change and periodically. */
  run(): void {
    const caches = this.#caches;
    if (!caches) throw new Error('run() before startCaches()');
    if (this.#running) return;
    this.#running = true;
    const all = () => {
      for (const c of caches.clusters.list()) this.#queue.add(keyOf(c.metadata.namespace!, c.metadata.name));
    };
    all();
    // Level-triggered safety net: every cluster is looked at again periodically.
    this.#resync = setInterval(all, this.#o.idleMs);
    this.#resync.unref();
    this.#o.log.info({ event: 'controller_started', namespace: this.#o.namespace ?? '(all)' }, 'controller started');
  }

  stop(): void {
    if (this.#resync) clearInterval(this.#resync);
    this.#queue.stop();
    if (this.#caches) for (const c of Object.values(this.#caches)) (c as WatchedCache<KubernetesObject>).stop();
  }

  #onChange(kind: string, obj: KubernetesObject): void {
    if (!this.#running) return;
    const ns = obj.metadata?.namespace;
    if (!ns) return;
    const name = kind === 'SvcCluster' ? obj.metadata?.name : obj.metadata?.labels?.[LABEL_CLUSTER];
    if (name) this.#queue.add(keyOf(ns, name));
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number }> {
    const [ns, name] = key.split('/') as [string, string];
    const kube = this.#o.kube;
    let c = await kube.getCluster(ns, name);
    if (!c) return {};
    const log = this.#o.log.child({ cluster: name, namespace: ns });

    // No finalizer: deleting a SvcCluster never waits for the operator. Children go with
    // their owner (garbage collection); PVCs stay unless storage.pvcRetention is Delete
    // (the StatefulSets' persistentVolumeClaimRetentionPolicy). Earlier releases added
    // svc.io/finalizer, which wedges a deletion once the operator is gone: take it off.
    if (c.metadata.finalizers?.includes(LEGACY_FINALIZER)) {
      c = await kube.setFinalizers(
        c,
        c.metadata.finalizers.filter((f) => f !== LEGACY_FINALIZER),
      );
      log.info({ event: 'legacy_finalizer_removed' }, `removed ${LEGACY_FINALIZER}: deletion no longer waits for the operator`);
    }
    if (c.metadata.deletionTimestamp) return {};

    // spec.tls first: the Secret the pods mount, the CA the admin calls trust.
    const tls = await reconcileTls(c, kube, clusterDomain(c, this.#o.clusterDomain), this.#now());
    for (const e of tls.events) await this.#event(c, e.type, e.reason, e.message, log);
    const { obs, admin, identity } = await this.#observe(c, tls.obs);
    const ctx: PlanContext = { clusterDomain: this.#o.clusterDomain, pollMs: this.#o.pollMs, idleMs: this.#o.idleMs, stalledMs: this.#o.stalledMs, newId: () => randomUUID() };
    const plan = planReconcile(c, obs, ctx);

    // Journal first.
    if (!statusEqual(c.status, plan.status)) {
      try {
        c = await kube.writeStatus(c, plan.status);
      } catch (err) {
        if (statusCode(err) === 409) return { requeueAfterMs: 200 };
        throw err;
      }
    }
    for (const e of plan.events) await this.#event(c, e.type, e.reason, e.message, log);
    const op = plan.status.operation;
    if (op) log.info({ event: 'reconcile', operation: op.id, type: op.type, phase: op.phase, actions: plan.actions.length }, `${op.type} ${op.phase}`);

    const failure = await this.#act(c, plan.actions, admin, log);
    if (identity && (c.spec.iam !== undefined || (c.status?.identity?.users?.length ?? 0) + (c.status?.identity?.policies?.length ?? 0) > 0)) {
      await this.#syncIdentity(ns, name, identity.api, identity.rootSecret, log);
    }
    if (failure) {
      // Record the failed step in the journal; the planner reads it next time.
      const fresh = await kube.getCluster(ns, name);
      if (fresh?.status?.operation && op && fresh.status.operation.id === op.id) {
        const next: SvcClusterStatus = structuredClone(fresh.status);
        next.operation!.lastError = { ...failure, at: this.#now().toISOString() };
        await kube.writeStatus(fresh, next).catch((err) => {
          if (statusCode(err) !== 409) throw err;
        });
      }
      return { requeueAfterMs: Math.min(this.#o.pollMs, 5_000) };
    }
    return { requeueAfterMs: plan.actions.some((a) => a.kind === 'admin') ? Math.min(plan.requeueAfterMs, 1_000) : plan.requeueAfterMs };
  }

  /**
   * spec.iam: the declared users and policies applied through the admin API
   * when the declaration changed or every IDENTITY_RESYNC_MS (reconcile/identity.ts);
   * the outcome is the IdentitySynced condition, what it created is status.identity.
   */
  async #syncIdentity(ns: string, name: string, api: IdentityApi, rootSecret: string, log: Logger): Promise<void> {
    const kube = this.#o.kube;
    const c = await kube.getCluster(ns, name);
    if (!c) return;
    const now = this.#now();
    const prev = c.status?.identity;
    const read = await desiredIdentity(c.spec, { secret: (n) => kube.readSecret(ns, n), configMap: (n) => kube.readConfigMap(ns, n) });
    let identity = prev;
    let cond: ConditionInput;
    if ('problem' in read) {
      cond = { type: 'IdentitySynced', status: 'False', reason: 'IdentitySourceMissing', message: read.problem };
    } else {
      const hash = identityHash(read.desired, rootSecret);
      if (!identityDue(prev, hash, now)) return;
      try {
        identity = await applyIdentity(api, read.desired, prev, hash, now);
        cond = { type: 'IdentitySynced', status: 'True', reason: 'AsExpected', message: `${read.desired.users.length} users and ${read.desired.policies.length} policies applied` };
        log.info({ event: 'identity_synced', users: identity.users, policies: identity.policies }, 'spec.iam applied');
      } catch (err) {
        const msg = err instanceof AdminError ? `${err.code}: ${err.message}` : errText(err);
        cond = { type: 'IdentitySynced', status: 'False', reason: 'IdentityApplyFailed', message: msg };
        log.warn({ event: 'identity_sync_failed', err: msg }, 'spec.iam could not be applied');
      }
    }
    const next: SvcClusterStatus = structuredClone(c.status ?? {});
    next.conditions = setCondition(next.conditions, cond, now, c.metadata.generation);
    if (identity) next.identity = identity;
    if (statusEqual(c.status, next)) return;
    await kube.writeStatus(c, next).catch((err: unknown) => {
      if (statusCode(err) !== 409) throw err;
    });
    if (cond.status === 'False') await this.#event(c, 'Warning', cond.reason, cond.message, log);
  }

  async #event(c: SvcCluster, type: 'Normal' | 'Warning', reason: string, message: string, log: Logger): Promise<void> {
    log[type === 'Warning' ? 'warn' : 'info']({ event: 'k8s_event', reason }, message);
    await this.#o.kube.event(c, type, reason, message, this.#now()).catch((err) => log.warn({ event: 'event_failed', err: errText(err) }, 'could not record event'));
  }

  async #observe(c: SvcCluster, tls: Observation['tls']): Promise<{ obs: Observation; admin: AdminApi | undefined; identity?: { api: IdentityApi; rootSecret: string } }> {
    const ns = c.metadata.namespace!;
    const name = c.metadata.name;
    const domain = clusterDomain(c, this.#o.clusterDomain);
    const mine = <T extends KubernetesObject>(list: T[]) => list.filter((o) => o.metadata?.labels?.[LABEL_CLUSTER] === name);
    const caches = this.#caches!;
    // A pod serves TLS when its template mounts the certificate (during a switch, old and new pods differ).
    const scheme = (p: V1Pod) => (p.spec?.volumes?.some((v) => v.name === 'tls') ? 'https' : 'http');
    const pods: PodObs[] = mine(caches.pods.list(ns) as V1Pod[]).map((p) => podObs(p, `${scheme(p)}://${p.metadata!.name}.${headlessDomain(c, domain)}:${S3_PORT}`));
    const statefulSets: StatefulSetObs[] = mine(caches.statefulSets.list(ns) as V1StatefulSet[]).map(stsObs);
    const pdbs = mine(caches.pdbs.list(ns) as KubernetesObject[]).map((b) => b.metadata!.name!);
    const pvcs: PvcObs[] = mine(caches.pvcs.list(ns) as V1PersistentVolumeClaim[]).map((v) => ({
      name: v.metadata!.name!,
      pool: v.metadata!.labels?.[LABEL_POOL] ?? '',
      phase: v.status?.phase ?? 'Pending',
      storage: v.spec?.resources?.requests?.['storage'],
    }));
    let credentialsProblem: string | undefined;
    let creds: Credentials | undefined;
    const secret = await this.#o.kube.readSecret(ns, c.spec.credentials.secretName);
    if (!secret) credentialsProblem = `Secret ${ns}/${c.spec.credentials.secretName} not found`;
    else if (!secret['accessKey'] || !secret['secretKey']) credentialsProblem = `Secret ${ns}/${c.spec.credentials.secretName} needs the keys accessKey and secretKey`;
    else creds = { accessKey: secret['accessKey'], secretKey: secret['secretKey'] };
    const fallback = creds ? this.#rotation(c, creds) : undefined;

    let adminObs: AdminObs | undefined;
    let admin: AdminApi | undefined;
    // Ready pods first: any node forwards pool operations to the pool leader.
    const endpoints = [...pods.filter((p) => p.ready), ...pods.filter((p) => !p.ready && p.running)].map((p) => p.url);
    if (creds && endpoints.length > 0 && c.spec.paused !== true) {
      admin = (this.#o.adminFactory ?? ((e, k, ca, f) => new AdminClient({ endpoints: e, credentials: k, ca, fallbackCredentials: f })))(endpoints, creds, tls?.ca, fallback);
      try {
        const [poolsList, rebalance] = await Promise.all([admin.poolsList(), admin.rebalanceStatus()]);
        adminObs = { reachable: true, pools: poolsList, rebalance };
      } catch (err) {
        adminObs = { reachable: false, error: errText(err) };
      }
    }
    const identity =
      creds && endpoints.length > 0 && c.spec.paused !== true && adminObs?.reachable === true
        ? { api: (this.#o.identityFactory ?? ((e, k, ca) => new IamAdminClient({ endpoints: e, credentials: k, ca })))(endpoints, creds, tls?.ca), rootSecret: creds.secretKey }
        : undefined;
    return { obs: { now: this.#now(), credentialsProblem, statefulSets, pods, pvcs, pdbs, admin: adminObs, tls }, admin, ...(identity ? { identity } : {}) };
  }

  /**
   * Root credential rotation (the credentials Secret edited): every node
   * re-reads its key files and switches when its kubelet has refreshed the
   * Secret volume, each at its own moment, with no restart and no pause of
   * a running drain or rebalance (internode calls accept both keys meanwhile).
   * The operator signs with the Secret's key and, for ROTATION_GRACE_MS,
   * falls back to the previous one with a node that has not switched yet.
   * Returns that previous key while it applies.
   */
  #rotation(c: SvcCluster, creds: Credentials): Credentials | undefined {
    const key = keyOf(c.metadata.namespace!, c.metadata.name);
    const now = this.#now().getTime();
    const known = this.#keys.get(key);
    if (!known) {
      this.#keys.set(key, { current: creds });
      return undefined;
    }
    if (known.current.accessKey !== creds.accessKey || known.current.secretKey !== creds.secretKey) {
      this.#keys.set(key, { current: creds, previous: known.current, since: now });
      this.#o.log.info({ event: 'root_credential_rotated', cluster: c.metadata.name, namespace: c.metadata.namespace, accessKey: creds.accessKey }, 'credentials Secret changed: nodes switch as their Secret volumes refresh; the previous key stays usable with nodes that have not switched');
      void this.#event(c, 'Normal', 'CredentialsRotated', `the root credential in Secret ${c.spec.credentials.secretName} changed (access key ${creds.accessKey}); every node switches without a restart within its kubelet's sync period`, this.#o.log);
      return known.current;
    }
    if (known.previous && known.since !== undefined && now - known.since < ROTATION_GRACE_MS) return known.previous;
    return undefined;
  }

  /** Runs actions in order, stopping at the first failure. Admin failures are returned for the journal. */
  async #act(c: SvcCluster, actions: Action[], admin: AdminApi | undefined, log: Logger): Promise<{ action: string; code: string; message: string } | undefined> {
    const kube = this.#o.kube;
    const ns = c.metadata.namespace!;
    for (const a of actions) {
      switch (a.kind) {
        case 'apply':
          await kube.apply(a.object);
          break;
        case 'deletePods':
          log.info({ event: 'delete_pods', pods: a.names }, `deleting ${a.names.length} pods`);
          await Promise.all(a.names.map((n) => kube.deletePod(ns, n)));
          break;
        case 'deleteStatefulSet':
          await kube.deleteStatefulSet(ns, a.name);
          break;
        case 'deleteService':
          await kube.deleteService(ns, a.name);
          break;
        case 'deletePdb':
          await kube.deletePdb(ns, a.name);
          break;
        case 'deletePvcs':
          for (const v of await kube.listPvcs(ns, `${LABEL_CLUSTER}=${c.metadata.name},${LABEL_POOL}=${a.pool}`)) await kube.deletePvc(ns, v.metadata!.name!);
          break;
        case 'expandPvcs':
          try {
            for (const v of await kube.listPvcs(ns, `${LABEL_CLUSTER}=${c.metadata.name},${LABEL_POOL}=${a.pool}`)) await kube.expandPvc(v, a.storage);
          } catch (err) {
            await this.#event(c, 'Warning', 'PvcExpansionFailed', errText(err), log);
          }
          break;
        case 'admin': {
          if (!admin) return { action: a.call, code: 'Unreachable', message: 'no node answers the admin API' };
          try {
            const result = await callAdmin(admin, a.call, a.pool);
            log.info({ event: 'admin_call', call: a.call, pool: a.pool }, `admin ${a.call} done`);
            await this.#recordDone(c, a.call, result?.id);
          } catch (err) {
            const e = err instanceof AdminError ? err : new AdminError(0, 'Error', errText(err));
            log.warn({ event: 'admin_call_failed', call: a.call, pool: a.pool, code: e.code, err: e.message }, `admin ${a.call} failed`);
            return { action: a.call, code: e.code, message: e.message };
          }
          break;
        }
      }
    }
    return undefined;
  }

  async #recordDone(c: SvcCluster, action: string, rebalanceId: string | undefined): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const fresh = await this.#o.kube.getCluster(c.metadata.namespace!, c.metadata.name);
      const op = fresh?.status?.operation;
      if (!fresh || !op) return;
      const next = structuredClone(fresh.status!);
      next.operation!.lastDone = { action, at: this.#now().toISOString() };
      delete next.operation!.lastError;
      if (rebalanceId) next.operation!.rebalanceId = rebalanceId;
      try {
        await this.#o.kube.writeStatus(fresh, next);
        return;
      } catch (err) {
        if (statusCode(err) !== 409) throw err;
      }
    }
  }
}

async function callAdmin(admin: AdminApi, call: Extract<Action, { kind: 'admin' }>['call'], pool: string | undefined): Promise<{ id?: string } | undefined> {
  switch (call) {
    case 'decommissionStart':
      await admin.decommissionStart([pool!]);
      return undefined;
    case 'decommissionCancel':
      await admin.decommissionCancel(pool!);
      return undefined;
    case 'decommissionClear':
      await admin.decommissionClear(pool!);
      return undefined;
    case 'rebalanceStart':
      return admin.rebalanceStart();
    case 'rebalanceStop':
      await admin.rebalanceStop();
      return undefined;
  }
}

export function podObs(p: V1Pod, url: string): PodObs {
  const cs = p.status?.containerStatuses?.find((s) => s.name === 'svc') ?? p.status?.containerStatuses?.[0];
  return {
    name: p.metadata!.name!,
    pool: p.metadata!.labels?.[LABEL_POOL] ?? '',
    ordinal: Number(p.metadata!.name!.split('-').pop()),
    launchHash: p.metadata?.annotations?.[ANNOTATION_LAUNCH_HASH],
    templateHash: p.metadata?.annotations?.[ANNOTATION_TEMPLATE_HASH],
    running: p.status?.phase === 'Running' && cs?.state?.running !== undefined,
    ready: p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true,
    waitingReason: cs?.state?.waiting?.reason,
    unschedulable: p.status?.conditions?.some((x) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'Unschedulable') === true,
    terminating: p.metadata?.deletionTimestamp !== undefined,
    url,
  };
}

export function stsObs(s: V1StatefulSet): StatefulSetObs {
  return {
    name: s.metadata!.name!,
    pool: s.metadata!.labels?.[LABEL_POOL] ?? '',
    replicas: s.spec?.replicas ?? 0,
    readyReplicas: s.status?.readyReplicas ?? 0,
    launchHash: s.spec?.template?.metadata?.annotations?.[ANNOTATION_LAUNCH_HASH],
    storage: s.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.['storage'],
    storageClassName: s.spec?.volumeClaimTemplates?.[0]?.spec?.storageClassName,
    credentialsSecret: s.spec?.template?.spec?.volumes?.find((v) => v.name === 'credentials')?.secret?.secretName,
  };
}

/** An error as one line: the API server's Status message when there is one (e.g. a 403 naming the verb), else the error's. */
export function errText(err: unknown): string {
  if (err instanceof Error) {
    const e = err as { body?: unknown; code?: unknown };
    let body = e.body;
    if (typeof body === 'string' && body.startsWith('{')) {
      try {
        body = JSON.parse(body) as unknown;
      } catch {
        // not JSON
      }
    }
    const status = body as { kind?: string; message?: string; reason?: string; code?: number } | undefined;
    if (status?.kind === 'Status' && status.message) return `${status.code ?? e.code ?? ''} ${status.reason ?? ''}: ${status.message}`.trim();
    if (typeof body === 'string' && body) return `${err.message}: ${body.slice(0, 300)}`;
    return err.message;
  }
  return String(err);
}

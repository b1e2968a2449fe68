/**
 * What kube-controller-manager's Deployment controller and the kubelet do
 * with a Deployment, over the in-process API server's store, enough for a
 * `helm upgrade --wait` of the operator chart:
 *
 * - one ReplicaSet per pod template (`<deployment>-<hash>`, label
 *   `pod-template-hash`), pods `<rs>-<random>` run by a pluggable kubelet;
 * - RollingUpdate: surge up to `maxSurge` new pods, take old pods down only
 *   while at least `replicas - maxUnavailable` pods are available (Ready),
 *   defaults 25 % / 25 % (rounded up / down, never both 0), as Kubernetes
 *   resolves them; Recreate: old pods first;
 * - a pod being deleted stops receiving traffic at once, its container gets
 *   SIGTERM and the object goes when the container exited (graceful stop);
 * - status: replicas, updatedReplicas, readyReplicas, availableReplicas,
 *   unavailableReplicas, observedGeneration, and the conditions Available
 *   (MinimumReplicasAvailable / MinimumReplicasUnavailable) and Progressing
 *   (NewReplicaSetAvailable, ReplicaSetUpdated, or False with
 *   ProgressDeadlineExceeded after `progressDeadlineSeconds` without
 *   progress), which is what kstatus and `kubectl rollout status` read.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj, ResourceType, StoredEvent } from '../fake-apiserver/store.ts';
import type { Kubelet } from './statefulset-sim.ts';

interface DeploymentSpec {
  replicas?: number;
  selector: { matchLabels?: Record<string, string> };
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
  progressDeadlineSeconds?: number;
  template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> };
}

/** An int-or-percent of `total`, as Kubernetes resolves it (`up`: round up). */
export function resolveIntOrPercent(v: number | string | undefined, dflt: string, total: number, up: boolean): number {
  const x = v ?? dflt;
  if (typeof x === 'number') return x;
  const m = /^(\d+)%$/.exec(x);
  if (!m) return Number(x);
  const f = (Number(m[1]) * total) / 100;
  return up ? Math.ceil(f) : Math.floor(f);
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Progress {
  lastChange: number;
  signature: string;
}

export class DeploymentSimulator {
  readonly #api: FakeApiServer;
  readonly #kubelet: Kubelet;
  readonly #t: { dep: ResourceType; rs: ResourceType; pod: ResourceType };
  readonly #running = new Map<string, 'starting' | 'running' | 'failed'>();
  readonly #stopping = new Set<string>();
  readonly #progress = new Map<string, Progress>();
  readonly #unsubscribe: () => void;
  readonly #timer: NodeJS.Timeout;
  #syncing = false;
  #again = false;
  #stopped = false;

  constructor(api: FakeApiServer, kubelet: Kubelet, opts: { probeMs?: number } = {}) {
    this.#api = api;
    this.#kubelet = kubelet;
    const s = api.store;
    this.#t = { dep: s.find('apps', 'v1', 'deployments')!, rs: s.find('apps', 'v1', 'replicasets')!, pod: s.find('', 'v1', 'pods')! };
    this.#unsubscribe = s.onEvent((e: StoredEvent) => {
      if (e.typeKey === 'apps/deployments') this.kick();
    });
    this.#timer = setInterval(() => this.kick(), opts.probeMs ?? 250);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    clearInterval(this.#timer);
    const pods = this.#api.store.list(this.#t.pod).filter((p) => this.#running.has(this.#key(p)));
    await Promise.all(pods.map((p) => this.#kubelet.stop(p).catch(() => undefined)));
  }

  kick(): void {
    if (this.#stopped) return;
    if (this.#syncing) {
      this.#again = true;
      return;
    }
    this.#syncing = true;
    setImmediate(() => {
      void this.#sync()
        .catch(() => undefined)
        .finally(() => {
          this.#syncing = false;
          if (this.#again) {
            this.#again = false;
            this.kick();
          }
        });
    });
  }

  #key(p: Obj): string {
    return `${p.metadata.namespace}/${p.metadata.name}/${p.metadata.uid}`;
  }

  #ready(p: Obj): boolean {
    return (p['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  }

  async #sync(): Promise<void> {
    const store = this.#api.store;
    for (const d of store.list(this.#t.dep)) {
      const ns = d.metadata.namespace!;
      const spec = d['spec'] as DeploymentSpec;
      const replicas = spec.replicas ?? 1;
      const hash = createHash('sha256').update(JSON.stringify(spec.template)).digest('hex').slice(0, 10);
      const owned = (o: Obj) => o.metadata.ownerReferences?.some((r) => r.uid === d.metadata.uid) === true;
      let sets = store.list(this.#t.rs, ns).filter(owned);
      let newRs = sets.find((r) => r.metadata.labels?.['pod-template-hash'] === hash);
      if (!newRs) {
        newRs = store.create(
          this.#t.rs,
          ns,
          {
            metadata: {
              name: `${d.metadata.name}-${hash}`,
              labels: { ...(spec.template.metadata?.labels ?? {}), 'pod-template-hash': hash },
              ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true }],
            },
            spec: { replicas: 0, selector: { matchLabels: { ...(spec.selector.matchLabels ?? {}), 'pod-template-hash': hash } }, template: structuredClone(spec.template) },
          },
          'kube-controller-manager',
        );
        sets = [...sets, newRs];
      }
      const podsOf = (rs: Obj) => store.list(this.#t.pod, ns).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === rs.metadata.uid));
      const olds = sets.filter((r) => r !== newRs);
      const count = (rs: Obj) => (rs['spec'] as { replicas: number }).replicas;
      const setReplicas = (rs: Obj, n: number) => {
        const cur = store.get(this.#t.rs, ns, rs.metadata.name);
        (cur['spec'] as { replicas: number }).replicas = n;
        store.update(this.#t.rs, ns, cur, { manager: 'kube-controller-manager' });
      };
      const available = (rs: Obj) => podsOf(rs).filter((p) => this.#ready(p) && !p.metadata.deletionTimestamp && !this.#stopping.has(this.#key(p))).length;
      if (spec.strategy?.type === 'Recreate') {
        for (const o of olds) if (count(o) > 0) setReplicas(o, 0);
        if (olds.every((o) => podsOf(o).length === 0) && count(newRs) !== replicas) setReplicas(newRs, replicas);
      } else {
        let maxSurge = resolveIntOrPercent(spec.strategy?.rollingUpdate?.maxSurge, '25%', replicas, true);
        const maxUnavailable = resolveIntOrPercent(spec.strategy?.rollingUpdate?.maxUnavailable, '25%', replicas, false);
        if (maxSurge === 0 && maxUnavailable === 0) maxSurge = 1;
        const total = sets.reduce((a, r) => a + count(r), 0);
        if (count(newRs) < replicas && total < replicas + maxSurge) setReplicas(newRs, Math.min(replicas, count(newRs) + replicas + maxSurge - total));
        if (count(newRs) > replicas) setReplicas(newRs, replicas);
        // Scale old ReplicaSets down while availability allows (unavailable old pods go first and freely).
        let allowed = sets.reduce((a, r) => a + available(r), 0) - (replicas - maxUnavailable);
        for (const o of olds) {
          const unhealthy = Math.max(0, count(o) - available(o));
          const healthyDown = Math.min(count(o) - unhealthy, Math.max(0, allowed));
          if (unhealthy + healthyDown === 0) continue;
          allowed -= healthyDown;
          setReplicas(o, count(o) - unhealthy - healthyDown);
        }
      }
      // ReplicaSets → pods.
      for (const rs of store.list(this.#t.rs, ns).filter(owned)) await this.#syncReplicaSet(rs, podsOf(rs));
      for (const o of store.list(this.#t.rs, ns).filter(owned)) if (o.metadata.labels?.['pod-template-hash'] !== hash && count(o) === 0 && podsOf(o).length === 0) store.delete(this.#t.rs, ns, o.metadata.name);
      this.#writeStatus(d, hash, replicas);
    }
  }

  async #syncReplicaSet(rs: Obj, pods: Obj[]): Promise<void> {
    const store = this.#api.store;
    const ns = rs.metadata.namespace!;
    const want = (rs['spec'] as { replicas: number }).replicas;
    const live = pods.filter((p) => !this.#stopping.has(this.#key(p)));
    const template = (rs['spec'] as { template: DeploymentSpec['template'] }).template;
    for (let i = live.length; i < want; i++) {
      const pod = store.create(
        this.#t.pod,
        ns,
        {
          metadata: {
            name: `${rs.metadata.name}-${randomBytes(3).toString('hex').slice(0, 5)}`,
            labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': rs.metadata.labels?.['pod-template-hash'] ?? '' },
            annotations: { ...(template.metadata?.annotations ?? {}) },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true }],
          },
          spec: structuredClone(template.spec),
        },
        'kube-controller-manager',
      );
      this.#launch(pod);
    }
    // Scale down: not-ready pods first, then the newest.
    const extra = live.length - want;
    if (extra > 0) {
      const order = [...live].sort((a, b) => Number(this.#ready(a)) - Number(this.#ready(b)) || String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)));
      for (const p of order.slice(0, extra)) this.#terminate(p);
    }
    await Promise.all(
      live.map(async (p) => {
        if (this.#running.get(this.#key(p)) !== 'running') return;
        const ready = await this.#kubelet.ready(p).catch(() => false);
        if (ready !== this.#ready(p) && !this.#stopping.has(this.#key(p))) this.#setStatus(p, ready);
      }),
    );
  }

  #launch(pod: Obj): void {
    const key = this.#key(pod);
    this.#running.set(key, 'starting');
    this.#setStatus(pod, false, 'ContainerCreating');
    this.#kubelet.start(pod).then(
      () => {
        if (!this.#running.has(key)) return;
        this.#running.set(key, 'running');
        this.#setStatus(pod, false);
      },
      (err: { reason?: string }) => {
        if (!this.#running.has(key)) return;
        this.#running.set(key, 'failed');
        this.#setStatus(pod, false, err?.reason ?? 'CrashLoopBackOff');
      },
    );
  }

  /** Graceful termination: out of service now, SIGTERM, the object goes when the container exited. */
  #terminate(p: Obj): void {
    const key = this.#key(p);
    if (this.#stopping.has(key)) return;
    this.#stopping.add(key);
    this.#setStatus(p, false);
    void this.#kubelet
      .stop(p)
      .catch(() => undefined)
      .finally(() => {
        this.#running.delete(key);
        try {
          this.#api.store.delete(this.#t.pod, p.metadata.namespace, p.metadata.name);
        } catch {
          // already gone
        }
        this.#stopping.delete(key);
        this.kick();
      });
  }

  #setStatus(pod: Obj, ready: boolean, waiting?: string): void {
    const store = this.#api.store;
    const cur = store.tryGet(this.#t.pod, pod.metadata.namespace, pod.metadata.name);
    if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
    cur['status'] = {
      phase: waiting ? 'Pending' : 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now() }],
      containerStatuses: [{ name: 'operator', ready, restartCount: 0, image: '', imageID: '', started: !waiting, state: waiting ? { waiting: { reason: waiting } } : { running: { startedAt: now() } } }],
    };
    try {
      store.update(this.#t.pod, pod.metadata.namespace, cur, { subresource: 'status', manager: 'kubelet' });
    } catch {
      // raced with a delete
    }
  }

  #writeStatus(d: Obj, hash: string, replicas: number): void {
    const store = this.#api.store;
    const cur = store.tryGet(this.#t.dep, d.metadata.namespace, d.metadata.name);
    if (!cur) return;
    const spec = cur['spec'] as DeploymentSpec;
    const pods = store.list(this.#t.pod, d.metadata.namespace).filter((p) => {
      const rs = p.metadata.ownerReferences?.[0]?.name ?? '';
      return rs.startsWith(`${d.metadata.name}-`) && !this.#stopping.has(this.#key(p));
    });
    const updated = pods.filter((p) => p.metadata.labels?.['pod-template-hash'] === hash);
    const ready = pods.filter((p) => this.#ready(p)).length;
    const maxUnavailable = spec.strategy?.type === 'Recreate' ? 0 : resolveIntOrPercent(spec.strategy?.rollingUpdate?.maxUnavailable, '25%', replicas, false);
    const complete = updated.length === replicas && pods.length === replicas && ready === replicas;
    const signature = JSON.stringify([hash, pods.length, updated.length, ready]);
    const key = `${d.metadata.namespace}/${d.metadata.name}`;
    let prog = this.#progress.get(key);
    if (!prog || prog.signature !== signature) this.#progress.set(key, (prog = { signature, lastChange: Date.now() }));
    const deadline = (spec.progressDeadlineSeconds ?? 600) * 1000;
    const prev = (cur['status'] as { conditions?: { type: string; status: string; reason: string; lastTransitionTime: string }[] } | undefined)?.conditions ?? [];
    const cond = (type: string, status: string, reason: string, message: string) => {
      const old = prev.find((c) => c.type === type);
      const t = old && old.status === status ? old.lastTransitionTime : now();
      return { type, status, reason, message, lastUpdateTime: old && old.status === status && old.reason === reason ? (old as { lastUpdateTime?: string }).lastUpdateTime ?? t : now(), lastTransitionTime: t };
    };
    const availableOk = ready >= replicas - maxUnavailable;
    const progressing = complete
      ? cond('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${d.metadata.name}-${hash}" has successfully progressed.`)
      : Date.now() - prog.lastChange > deadline
        ? cond('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${d.metadata.name}-${hash}" has timed out progressing.`)
        : cond('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${d.metadata.name}-${hash}" is progressing.`);
    const status = {
      observedGeneration: cur.metadata.generation,
      replicas: pods.length,
      updatedReplicas: updated.length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, replicas - ready),
      conditions: [
        cond('Available', availableOk ? 'True' : 'False', availableOk ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', availableOk ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.'),
        progressing,
      ],
    };
    const strip = (s: unknown) => JSON.stringify(s, (k, v: unknown) => (k === 'lastUpdateTime' || k === 'lastTransitionTime' ? undefined : v));
    if (strip(cur['status']) === strip(status)) return;
    cur['status'] = status;
    try {
      store.update(this.#t.dep, d.metadata.namespace, cur, { subresource: 'status', manager: 'kube-controller-manager' });
    } catch {
      // raced; next pass
    }
  }
}

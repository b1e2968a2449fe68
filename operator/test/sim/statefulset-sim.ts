/**
 * What kube-controller-manager and the kubelet would do with StatefulSets,
 * over the fake API server's store: pods `<sts>-<i>` and PVCs
 * `<claim>-<sts>-<i>` (Bound at once, retained when the StatefulSet goes),
 * `OnDelete` (a pod keeps its template until deleted; a recreated pod gets
 * the current template), scale down by deleting the highest ordinals, and
 * StatefulSet status. A pluggable `Kubelet` runs the "containers": fixed
 * readiness for fast tests, or real `svc` processes for the process-level
 * end-to-end test. A deleted pod is recreated only after its container
 * stopped, as the StatefulSet controller waits for the old pod to be gone.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../fake-apiserver/errors.ts';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj, ResourceType, StoredEvent } from '../fake-apiserver/store.ts';

export interface Kubelet {
  /** Starts the pod's container; a rejection with `reason` becomes the container's waiting reason. */
  start(pod: Obj): Promise<void>;
  stop(pod: Obj): Promise<void>;
  /** The readiness probe. */
  ready(pod: Obj): Promise<boolean>;
  /** What the kubelet reports of the container besides readiness (none: never restarted). */
  container?(pod: Obj): ContainerReport | undefined;
}

/** A container's restarts and last exit, as `containerStatuses[]` carries them. */
export interface ContainerReport {
  restartCount: number;
  /** Why it does not run now: `CrashLoopBackOff` while a restart waits out its back-off. */
  waiting?: string;
  /** `lastState.terminated`: how the previous run ended. */
  lastTerminated?: { exitCode: number; signal?: number; reason: string; finishedAt: string };
}

/** Containers that start at once; readiness and image pulls are scripted. */
export class FixedKubelet implements Kubelet {
  readiness: (pod: Obj) => boolean = () => true;
  /** Images that fail to pull (ImagePullBackOff). */
  readonly badImages = new Set<string>();
  readonly started: string[] = [];
  readonly stopped: string[] = [];
  async start(pod: Obj): Promise<void> {
    const image = (pod['spec'] as { containers: { image: string }[] }).containers[0]!.image;
    if (this.badImages.has(image)) throw Object.assign(new Error('pull failed'), { reason: 'ImagePullBackOff' });
    this.started.push(pod.metadata.name);
  }
  /** How long a container takes to stop (its graceful shutdown). */
  stopDelayMs = 0;
  async stop(pod: Obj): Promise<void> {
    if (this.stopDelayMs > 0) await new Promise((r) => setTimeout(r, this.stopDelayMs));
    this.stopped.push(pod.metadata.name);
  }
  async ready(pod: Obj): Promise<boolean> {
    return this.readiness(pod);
  }
}

interface PodRuntime {
  uid: string;
  state: 'starting' | 'running' | 'failed';
  reason?: string;
}

export class StatefulSetSimulator {
  readonly #api: FakeApiServer;
  readonly #kubelet: Kubelet;
  readonly #pods = new Map<string, PodRuntime>();
  readonly #stopping = new Map<string, Promise<void>>();
  /** Pods created but not scheduled (unbound claims): namespace/name → uid. */
  readonly #unscheduled = new Map<string, string>();
  readonly #unsubscribe: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** PVCs this predicate names stay Pending (no storage for them), e.g. a new pool's. */
  pendingClaims: (claim: string) => boolean = () => false;
  #syncing = false;
  #again = false;
  #stopped = false;
  readonly #t: { sts: ResourceType; pod: ResourceType; pvc: ResourceType };

  /**
   * Kubernetes nodes pods are scheduled onto (`spec.nodeName`); by default
   * one, as a single-node cluster (kind, k3s) has. A bound pod is deleted
   * gracefully (Terminating until its container stopped). A pod whose
   * template spreads over `kubernetes.io/hostname`
   * (topologySpreadConstraints or pod anti-affinity) goes to the node with
   * the fewest pods its selector matches; one without any goes where most
   * pods already run (bin-packing, the worst case nothing in the template
   * rules out).
   */
  nodes: readonly string[] = ['node-1'];

  constructor(api: FakeApiServer, kubelet: Kubelet, opts: { probeMs?: number } = {}) {
    this.#api = api;
    this.#kubelet = kubelet;
    const s = api.store;
    this.#t = { sts: s.find('apps', 'v1', 'statefulsets')!, pod: s.find('', 'v1', 'pods')!, pvc: s.find('', 'v1', 'persistentvolumeclaims')! };
    this.#unsubscribe = s.onEvent((e) => this.#onEvent(e));
    this.#timer = setInterval(() => this.kick(), opts.probeMs ?? 200);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    const store = this.#api.store;
    await Promise.all([...this.#stopping.values()]);
    await Promise.all(store.list(this.#t.pod).map((p) => this.#kubelet.stop(p).catch(() => undefined)));
  }

  #onEvent(e: StoredEvent): void {
    const uid = e.object.metadata.uid!;
    if (e.typeKey === '/pods' && e.type === 'MODIFIED' && e.object.metadata.deletionTimestamp && !this.#terminating.has(uid)) {
      // Graceful deletion of a bound pod: the kubelet stops the container (the probes stop with
      // it), then deletes the pod for good with a grace period of 0; until then the pod is there,
      // Terminating, and no replacement of that name can be made.
      this.#terminating.add(uid);
      const ns = e.object.metadata.namespace;
      const podName = e.object.metadata.name;
      this.#stopPod(e.object, () => {
        // (already gone: a forced delete, or the namespace)
        racing(() => this.#api.store.delete(this.#t.pod, ns, podName, { gracePeriodSeconds: 0, preconditionUid: uid }));
      });
    }
    if (e.typeKey === '/pods' && e.type === 'DELETED') {
      // A pod that terminated gracefully was stopped already; an unbound or force-deleted one stops now.
      if (!this.#terminating.delete(uid)) this.#stopPod(e.object);
    }
    if (e.typeKey === 'apps/statefulsets' || e.typeKey === '/pods') this.kick();
  }

  /** Pods (by uid) whose graceful termination began. */
  readonly #terminating = new Set<string>();

  /** Stops a pod's container (after any earlier stop of that name), then `after`; a recreate of the name waits for both. */
  #stopPod(pod: Obj, after?: () => void): void {
    const name = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const rt = this.#pods.get(name);
    if (rt?.uid === pod.metadata.uid) this.#pods.delete(name);
    if (this.#unscheduled.get(name) === pod.metadata.uid) this.#unscheduled.delete(name);
    const prev = this.#stopping.get(name) ?? Promise.resolve();
    const done = prev
      .then(() => this.#kubelet.stop(pod))
      .catch(() => undefined)
      .finally(() => {
        after?.();
        if (this.#stopping.get(name) === done) this.#stopping.delete(name);
        this.kick();
      });
    this.#stopping.set(name, done);
  }

  /** Runs a sync pass soon (coalesced). */
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

  async #sync(): Promise<void> {
    const store = this.#api.store;
    for (const sts of store.list(this.#t.sts)) {
      const ns = sts.metadata.namespace!;
      const spec = sts['spec'] as {
        replicas: number;
        template: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> };
        volumeClaimTemplates?: { metadata: { name: string; labels?: Record<string, string> }; spec: Record<string, unknown> }[];
      };
      const revision = `${sts.metadata.name}-${createHash('sha256').update(JSON.stringify(spec.template)).digest('hex').slice(0, 10)}`;
      const pods = store.list(this.#t.pod, ns).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === sts.metadata.uid));
      for (let i = 0; i < spec.replicas; i++) {
        const name = `${sts.metadata.name}-${i}`;
        for (const vct of spec.volumeClaimTemplates ?? []) {
          const claim = `${vct.metadata.name}-${name}`;
          const had = store.tryGet(this.#t.pvc, ns, claim);
          if (had && (had['status'] as { phase?: string } | undefined)?.phase === 'Pending' && !this.pendingClaims(claim)) {
            // Storage became available: the claim binds.
            had['status'] = { phase: 'Bound', capacity: { storage: (had['spec'] as { resources: { requests: { storage: string } } }).resources.requests.storage } };
            store.update(this.#t.pvc, ns, had, { subresource: 'status', manager: 'kube-controller-manager' });
          }
          if (!had) {
            const created = store.create(this.#t.pvc, ns, { metadata: { name: claim, labels: { ...(vct.metadata.labels ?? {}) } }, spec: structuredClone(vct.spec) }, 'kube-controller-manager');
            created['status'] = this.pendingClaims(claim)
              ? { phase: 'Pending' }
              : { phase: 'Bound', capacity: { storage: (vct.spec as { resources: { requests: { storage: string } } }).resources.requests.storage } };
            store.update(this.#t.pvc, ns, created, { subresource: 'status', manager: 'kube-controller-manager' });
          }
        }
        const claims = (spec.volumeClaimTemplates ?? []).map((vct) => `${vct.metadata.name}-${name}`);
        const unbound = claims.filter((claim) => (store.tryGet(this.#t.pvc, ns, claim)?.['status'] as { phase?: string } | undefined)?.phase !== 'Bound');
        const existing = pods.find((p) => p.metadata.name === name);
        if (existing) {
          // Scheduled once its claims bind, as the scheduler does.
          if (this.#unscheduled.has(`${ns}/${name}`) && unbound.length === 0 && this.#unscheduled.get(`${ns}/${name}`) === existing.metadata.uid) {
            const bound = this.#bind(existing, spec.template.spec);
            if (bound !== undefined) {
              this.#unscheduled.delete(`${ns}/${name}`);
              this.#launch(bound);
            }
          }
          continue;
        }
        if (this.#stopping.has(`${ns}/${name}`)) continue;
        const pod = store.create(
          this.#t.pod,
          ns,
          {
            metadata: {
              name,
              labels: { ...(spec.template.metadata.labels ?? {}), 'controller-revision-hash': revision, 'statefulset.kubernetes.io/pod-name': name },
              annotations: { ...(spec.template.metadata.annotations ?? {}) },
              ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts.metadata.name, uid: sts.metadata.uid!, controller: true, blockOwnerDeletion: true }],
            },
            spec: {
              ...structuredClone(spec.template.spec),
              hostname: name,
              subdomain: (sts['spec'] as { serviceName: string }).serviceName,
              // (a pod whose claims are not bound yet is not scheduled: no node until they are)
              ...(this.nodes.length > 0 && unbound.length === 0 ? { nodeName: this.#schedule(ns, spec.template.spec) } : {}),
            },
          },
          'kube-controller-manager',
        );
        if (unbound.length > 0) {
          // A pod whose PersistentVolumeClaims are not bound is never scheduled: no kubelet starts it.
          this.#unscheduled.set(`${ns}/${name}`, pod.metadata.uid!);
          this.#setUnschedulable(pod, `0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims (${unbound.join(', ')})`);
        } else this.#launch(pod);
      }
      // Scale down: the highest ordinals go first.
      for (const p of pods) {
        const ordinal = Number(p.metadata.name.slice(sts.metadata.name.length + 1));
        if (ordinal >= spec.replicas) {
          racing(() => store.delete(this.#t.pod, ns, p.metadata.name));
        }
      }
      this.#probe(pods);
      this.#writeStsStatus(sts, revision);
    }
  }

  /** The scheduler's binding of a pod that waited for its claims: its node set (`pods/binding`); undefined when it raced with another write (the next pass tries again). */
  #bind(pod: Obj, podSpec: Record<string, unknown>): Obj | undefined {
    if (this.nodes.length === 0) return pod;
    const next = structuredClone(pod);
    (next['spec'] as { nodeName?: string }).nodeName = this.#schedule(pod.metadata.namespace!, podSpec);
    return racing(() => this.#api.store.update(this.#t.pod, pod.metadata.namespace, next, { manager: 'kube-scheduler' }));
  }

  #schedule(ns: string, podSpec: Record<string, unknown>): string {
    type Selector = { matchLabels?: Record<string, string> };
    const spread = ((podSpec['topologySpreadConstraints'] as { topologyKey: string; labelSelector?: Selector }[] | undefined) ?? []).filter((c) => c.topologyKey === 'kubernetes.io/hostname').map((c) => c.labelSelector);
    const anti = (
      (podSpec['affinity'] as { podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm: { topologyKey: string; labelSelector?: Selector } }[] } } | undefined)?.podAntiAffinity
        ?.preferredDuringSchedulingIgnoredDuringExecution ?? []
    )
      .filter((t) => t.podAffinityTerm.topologyKey === 'kubernetes.io/hostname')
      .map((t) => t.podAffinityTerm.labelSelector);
    const selectors = [...spread, ...anti].filter((x): x is Selector => x !== undefined);
    const pods = this.#api.store.list(this.#t.pod, ns);
    const on = (node: string, sel?: Selector) =>
      pods.filter((p) => (p['spec'] as { nodeName?: string }).nodeName === node && Object.entries(sel?.matchLabels ?? {}).every(([k, v]) => p.metadata.labels?.[k] === v)).length;
    const scored = this.nodes.map((n, i) => ({ n, i, score: selectors.length > 0 ? -selectors.reduce((a, sel) => a + on(n, sel), 0) : on(n) }));
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    return scored[0]!.n;
  }

  #launch(pod: Obj): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const rt: PodRuntime = { uid: pod.metadata.uid!, state: 'starting' };
    this.#pods.set(key, rt);
    this.#setPodStatus(pod, { phase: 'Pending', waiting: 'ContainerCreating', ready: false });
    this.#kubelet.start(pod).then(
      () => {
        if (this.#pods.get(key) !== rt) return;
        rt.state = 'running';
        this.#setPodStatus(pod, { phase: 'Running', ready: false });
        this.kick();
      },
      (err: { reason?: string }) => {
        if (this.#pods.get(key) !== rt) return;
        rt.state = 'failed';
        rt.reason = err?.reason ?? 'CrashLoopBackOff';
        this.#setPodStatus(pod, { phase: 'Pending', waiting: rt.reason, ready: false });
        // A volume that cannot be mounted yet (a Secret not there yet): the kubelet keeps trying.
        if (rt.reason === 'ContainerCreating') {
          setTimeout(() => {
            if (this.#pods.get(key) === rt) this.#launch(pod);
          }, 500).unref();
        }
      },
    );
  }

  /** Pods (by uid) whose probe is under way. */
  readonly #probing = new Set<string>();

  /**
   * Probes the pods, each on its own: a probe waits up to its timeout, and as with the kubelet,
   * a node that is slow to answer holds neither the other pods' probes nor the controller.
   */
  #probe(pods: Obj[]): void {
    for (const p of pods) {
      const uid = p.metadata.uid!;
      if (this.#probing.has(uid)) continue;
      this.#probing.add(uid);
      void this.#probeOne(p)
        .catch(() => undefined)
        .finally(() => this.#probing.delete(uid));
    }
  }

  async #probeOne(p: Obj): Promise<void> {
    const key = `${p.metadata.namespace}/${p.metadata.name}`;
    const rt = this.#pods.get(key);
    if (!rt || rt.uid !== p.metadata.uid || rt.state === 'failed') return;
    const ready = rt.state === 'running' ? await this.#kubelet.ready(p).catch(() => false) : false;
    if (this.#stopped || this.#pods.get(key) !== rt) return;
    // (read again: the status may have changed while the probe waited)
    const cur = this.#api.store.tryGet(this.#t.pod, p.metadata.namespace, p.metadata.name);
    if (!cur || cur.metadata.uid !== rt.uid) return;
    const status = cur['status'] as { conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount?: number; state?: { waiting?: { reason?: string } } }[] } | undefined;
    // A restart or a back-off is reported whether or not the pod has started yet.
    const report = this.#kubelet.container?.(cur);
    const reported = status?.containerStatuses?.[0];
    const waiting = report?.waiting ?? (rt.state === 'starting' ? 'ContainerCreating' : undefined);
    const changed = report !== undefined && (report.restartCount !== (reported?.restartCount ?? 0) || waiting !== reported?.state?.waiting?.reason);
    if (rt.state === 'starting') {
      if (changed) this.#setPodStatus(cur, { phase: 'Pending', waiting: 'ContainerCreating', ready: false });
      return;
    }
    const wasReady = status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (ready !== wasReady || changed) this.#setPodStatus(cur, { phase: 'Running', ready });
  }

  #setUnschedulable(pod: Obj, message: string): void {
    const store = this.#api.store;
    const cur = store.tryGet(this.#t.pod, pod.metadata.namespace, pod.metadata.name);
    if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
    cur['status'] = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: new Date().toISOString() }] };
    racing(() => store.update(this.#t.pod, pod.metadata.namespace, cur, { subresource: 'status', manager: 'kube-scheduler' }));
  }

  #setPodStatus(pod: Obj, s: { phase: string; ready: boolean; waiting?: string }): void {
    const store = this.#api.store;
    const cur = store.tryGet(this.#t.pod, pod.metadata.namespace, pod.metadata.name);
    if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
    const now = new Date().toISOString();
    const report = this.#kubelet.container?.(cur);
    const waiting = report?.waiting ?? s.waiting;
    const was = (cur['status'] as { containerStatuses?: { state?: { running?: { startedAt: string } } }[] } | undefined)?.containerStatuses?.[0]?.state?.running;
    cur['status'] = {
      phase: s.phase,
      podIP: '127.0.0.1',
      conditions: [{ type: 'Ready', status: s.ready ? 'True' : 'False', lastTransitionTime: now }],
      containerStatuses: [
        {
          name: 'svc',
          ready: s.ready && waiting === undefined,
          started: s.phase === 'Running' && waiting === undefined,
          restartCount: report?.restartCount ?? 0,
          image: (cur['spec'] as { containers: { image: string }[] }).containers[0]!.image,
          imageID: '',
          state: waiting ? { waiting: { reason: waiting } } : { running: { startedAt: was?.startedAt ?? now } },
          lastState: report?.lastTerminated ? { terminated: report.lastTerminated } : {},
        },
      ],
    };
    racing(() => store.update(this.#t.pod, pod.metadata.namespace, cur, { subresource: 'status', manager: 'kubelet' }));
  }

  #writeStsStatus(sts: Obj, revision: string): void {
    const store = this.#api.store;
    const cur = store.tryGet(this.#t.sts, sts.metadata.namespace, sts.metadata.name);
    if (!cur) return;
    const pods = store.list(this.#t.pod, sts.metadata.namespace).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === cur.metadata.uid));
    const ready = pods.filter((p) => (p['status'] as { conditions?: { type: string; status: string }[] })?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    const updated = pods.filter((p) => p.metadata.labels?.['controller-revision-hash'] === revision).length;
    const status = {
      observedGeneration: cur.metadata.generation,
      replicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      currentReplicas: updated,
      updatedReplicas: updated,
      currentRevision: revision,
      updateRevision: revision,
    };
    if (JSON.stringify(cur['status']) === JSON.stringify(status)) return;
    cur['status'] = status;
    racing(() => store.update(this.#t.sts, sts.metadata.namespace, cur, { subresource: 'status', manager: 'kube-controller-manager' }));
  }
}

/**
 * A write that may race with the object's deletion or another writer, as the controllers it
 * stands for do: NotFound and Conflict are that race and leave the next pass to try again;
 * any other refusal is the simulator's own mistake and is thrown.
 */
function racing<T>(write: () => T): T | undefined {
  try {
    return write();
  } catch (err) {
    if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return undefined;
    throw err;
  }
}

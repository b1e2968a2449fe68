/**
 * A kubelet for the operator's own pods: each pod runs the real
 * `svc-operator` process (this repository's `operator/bin/svc-operator.js`;
 * the image name is not looked at) with the container's environment as the
 * chart renders it (`value` and `fieldRef` of metadata.namespace/name), the
 * pod name as HOSTNAME, credentials of the pod's ServiceAccount (a token the
 * API server knows, in a kubeconfig: what the projected token gives a real
 * pod), its own loopback address for the probe listener (the pod network),
 * and the readiness probe of the template (`httpGet` path on the probes
 * port). Stopping a pod is SIGTERM, then SIGKILL after the grace period.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj } from '../fake-apiserver/store.ts';
import { NODE_BIN, REPO } from '../svc-server.ts';
import type { Kubelet } from './statefulset-sim.ts';

interface Container {
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  ports?: { name?: string; containerPort: number }[];
}

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly ip: string;
  readonly probePort: number;
}

export class OperatorKubelet implements Kubelet {
  readonly #api: FakeApiServer;
  readonly #base: string;
  readonly #net = `127.${randomInt(16, 250)}.${randomInt(1, 250)}`;
  #next = 2;
  readonly #procs = new Map<string, Running>();
  /** Extra environment for every pod (e.g. shorter poll intervals). */
  extraEnv: Record<string, string> = {};
  /** Pods started, by name, in order. */
  readonly started: string[] = [];

  constructor(api: FakeApiServer, base: string) {
    this.#api = api;
    this.#base = base;
  }

  async start(pod: Obj): Promise<void> {
    const spec = pod['spec'] as { containers: Container[]; serviceAccountName?: string; terminationGracePeriodSeconds?: number };
    const c = spec.containers[0]!;
    const name = pod.metadata.name;
    const ns = pod.metadata.namespace!;
    const ip = `${this.#net}.${this.#next++}`;
    const dir = join(this.#base, 'pods', name);
    await mkdir(dir, { recursive: true });
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, this.#api.kubeConfigYaml(this.#api.serviceAccountToken(ns, spec.serviceAccountName ?? 'default')));
    const probePort = c.ports?.find((p) => p.name === c.readinessProbe?.httpGet?.port || p.containerPort === c.readinessProbe?.httpGet?.port)?.containerPort ?? 8081;
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', HOSTNAME: name, KUBECONFIG: kubeconfig };
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (field === 'metadata.namespace') env[e.name] = ns;
      if (field === 'metadata.name') env[e.name] = name;
    }
    env['SVC_OPERATOR_PROBE_ADDRESS'] = `${ip}:${probePort}`;
    Object.assign(env, this.extraEnv);
    const log = createWriteStream(join(dir, 'operator.log'), { flags: 'a' });
    const child = spawn(NODE_BIN, [join(REPO, 'operator/bin/svc-operator.js')], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    this.#procs.set(name, { child, exited, ip, probePort });
    this.started.push(name);
    const end = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw Object.assign(new Error(`svc-operator exited: ${await this.log(name)}`), { reason: 'CrashLoopBackOff' });
      const live = await fetch(`http://${ip}:${probePort}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (live) return;
      if (Date.now() > end) throw Object.assign(new Error('svc-operator not live within 30 s'), { reason: 'CrashLoopBackOff' });
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(pod: Obj): Promise<void> {
    const p = this.#procs.get(pod.metadata.name);
    if (!p) return;
    const grace = ((pod['spec'] as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? 30) * 1000;
    p.child.kill('SIGTERM');
    const t = setTimeout(() => p.child.kill('SIGKILL'), grace);
    await p.exited;
    clearTimeout(t);
    this.#procs.delete(pod.metadata.name);
  }

  async ready(pod: Obj): Promise<boolean> {
    const p = this.#procs.get(pod.metadata.name);
    const path = (pod['spec'] as { containers: Container[] }).containers[0]?.readinessProbe?.httpGet?.path;
    if (!p || p.child.exitCode !== null || !path) return false;
    return fetch(`http://${p.ip}:${p.probePort}${path}`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
  }

  /** Whether pod `name`'s process says it leads (`/leaderz`). */
  async leading(name: string): Promise<boolean> {
    const p = this.#procs.get(name);
    if (!p || p.child.exitCode !== null) return false;
    return fetch(`http://${p.ip}:${p.probePort}/leaderz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
  }

  running(): string[] {
    return [...this.#procs.keys()];
  }

  async log(name: string): Promise<string> {
    return readFile(join(this.#base, 'pods', name, 'operator.log'), 'utf8').then(
      (s) => s.slice(-4000),
      () => '',
    );
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.#procs.values()].map(async (p) => {
        p.child.kill('SIGKILL');
        await p.exited;
      }),
    );
  }
}

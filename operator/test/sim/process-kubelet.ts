/**
 * A kubelet that runs real `svc` processes for pods. Each pod gets its own
 * loopback address (127.A.B.k: all of 127/8 is local, so every pod binds the
 * same :9000 its volume expression names) published through the DNS shim,
 * and its own mount namespace in which the PVC folders are bind-mounted at
 * the pod's volumeMounts (`/data/d0`, ...) and the credentials Secret at
 * `/run/secrets/svc`. The environment is the pod template's own, except the
 * listen addresses, which become the pod's address (the pod network).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj } from '../fake-apiserver/store.ts';
import { NODE_BIN, REPO, SVC_JS } from '../svc-server.ts';
import type { Kubelet } from './statefulset-sim.ts';

export const DNS_SHIM = join(REPO, 'operator/test/dns-shim.mjs');

interface Container {
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string }[];
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  ip: string;
}

export class ProcessKubelet implements Kubelet {
  readonly #api: FakeApiServer;
  readonly base: string;
  readonly dnsMap: string;
  readonly #net = `127.${randomInt(16, 250)}.${randomInt(1, 250)}`;
  readonly #ips = new Map<string, string>();
  readonly #procs = new Map<string, Running>();
  readonly #dns: Record<string, string> = {};
  /** Pods started, in order (name@ip). */
  readonly history: string[] = [];

  constructor(api: FakeApiServer, base: string) {
    this.#api = api;
    this.base = base;
    this.dnsMap = join(base, 'dns.json');
  }

  /** The pod's address; stable per pod name (a recreated pod keeps its DNS name). */
  ipOf(pod: string): string {
    let ip = this.#ips.get(pod);
    if (!ip) this.#ips.set(pod, (ip = `${this.#net}.${this.#ips.size + 2}`));
    return ip;
  }

  #publishing: Promise<void> = Promise.resolve();

  /** Adds a name to the DNS map (writes serialised; readers see whole files). */
  #publish(host: string, ip: string): Promise<void> {
    this.#dns[host] = ip;
    this.#publishing = this.#publishing.then(async () => {
      const tmp = `${this.dnsMap}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(this.#dns));
      await rename(tmp, this.dnsMap);
    });
    return this.#publishing;
  }

  async start(pod: Obj): Promise<void> {
    const spec = pod['spec'] as { containers: Container[]; volumes: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] }; emptyDir?: unknown }[]; hostname: string; subdomain: string };
    const c = spec.containers[0]!;
    const name = pod.metadata.name;
    const ns = pod.metadata.namespace!;
    const ip = this.ipOf(name);
    await this.#publish(`${spec.hostname}.${spec.subdomain}.${ns}.svc.cluster.local`, ip);
    const podDir = join(this.base, 'pods', name);
    const mounts: [string, string][] = [];
    for (const m of c.volumeMounts) {
      const vol = spec.volumes?.find((v) => v.name === m.name);
      if (vol?.emptyDir !== undefined) continue; // the svc process writes no scratch files
      if (vol?.secret) {
        const dir = join(podDir, 'secret', m.name);
        await mkdir(dir, { recursive: true });
        const secret = this.#api.store.get(this.#api.store.find('', 'v1', 'secrets')!, ns, vol.secret.secretName);
        const data = (secret['data'] ?? {}) as Record<string, string>;
        for (const item of vol.secret.items ?? Object.keys(data).map((k) => ({ key: k, path: k }))) {
          await writeFile(join(dir, item.path), Buffer.from(data[item.key] ?? '', 'base64'), { mode: 0o600 });
        }
        mounts.push([dir, m.mountPath]);
        continue;
      }
      // A volumeClaimTemplate: the PVC <claim>-<pod> keeps its folder across pod restarts.
      const dir = join(this.base, 'pvc', `${m.name}-${name}`);
      await mkdir(dir, { recursive: true });
      mounts.push([dir, m.mountPath]);
    }
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root' };
    for (const e of c.env) if (e.value !== undefined) env[e.name] = e.value;
    env['SVC_ADDRESS'] = `${ip}:9000`;
    env['SVC_CONSOLE_ADDRESS'] = `${ip}:9001`;
    env['SVC_STARTUP_READINESS_MAX_WAIT_SECS'] = env['SVC_STARTUP_READINESS_MAX_WAIT_SECS'] ?? '120';
    env['NODE_OPTIONS'] = `--import ${DNS_SHIM}`;
    env['SVC_TEST_DNS_MAP'] = this.dnsMap;
    // Private mounts: tmpfs on the top folders, then every volume bind-mounted in place.
    const tops = [...new Set(mounts.map(([, target]) => `/${target.split('/')[1]}`))];
    const script = [
      ...tops.map((t) => `mount -t tmpfs tmpfs ${t}`),
      ...mounts.flatMap(([src, target]) => [`mkdir -p ${target}`, `mount --bind ${src} ${target}`]),
      `exec "${NODE_BIN}" "${SVC_JS}" server`,
    ].join(' && ');
    await mkdir(podDir, { recursive: true });
    const log = createWriteStream(join(podDir, 'svc.log'), { flags: 'a' });
    const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    void exited.then(() => {
      if (this.#procs.get(name)?.child === child) this.#procs.delete(name);
    });
    this.#procs.set(name, { child, exited, ip });
    this.history.push(`${name}@${ip}`);
    const end = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw Object.assign(new Error(`svc exited: ${await this.log(name)}`), { reason: 'CrashLoopBackOff' });
      const live = await fetch(`http://${ip}:9000/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (live) return;
      if (Date.now() > end) throw Object.assign(new Error('svc not live within 30 s'), { reason: 'CrashLoopBackOff' });
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(pod: Obj): Promise<void> {
    const p = this.#procs.get(pod.metadata.name);
    if (!p) return;
    p.child.kill('SIGTERM');
    const t = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
    await p.exited;
    clearTimeout(t);
  }

  async ready(pod: Obj): Promise<boolean> {
    const p = this.#procs.get(pod.metadata.name);
    if (!p) return false;
    const r = await fetch(`http://${p.ip}:9000/health/ready`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
    return r?.status === 200;
  }

  /** Base URL of a running pod. */
  url(pod: string): string {
    return `http://${this.ipOf(pod)}:9000`;
  }

  running(): string[] {
    return [...this.#procs.keys()];
  }

  async log(pod: string): Promise<string> {
    return readFile(join(this.base, 'pods', pod, 'svc.log'), 'utf8').then(
      (s) => s.slice(-3000),
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

/**
 * A kubelet that runs real `svc` processes for pods. Each pod gets its own
 * loopback address (127.A.B.k: all of 127/8 is local, so every pod binds the
 * same :9000 its volume expression names) published through the DNS shim,
 * and its own mount namespace in which the PVC folders are bind-mounted at
 * the pod's volumeMounts (`/data/d0`, ...) and the Secret volumes (`secret`
 * and `projected` sources: the credentials at `/run/secrets/svc`, the TLS
 * certificate at `/etc/svc/certs`). As the kubelet does, Secret volumes are
 * written as `..data` → a timestamped folder and swapped atomically when the
 * Secret changes (checked every 300 ms), so a running pod sees the new files;
 * `secretSyncDelayMs` spreads that over the pods as kubelets, each syncing
 * on its own schedule, do.
 * Probes follow the pod's probe scheme (HTTPS probes verify nothing, like
 * the kubelet's). The environment is the pod template's own, except the
 * listen addresses, which become the pod's address (the pod network).
 *
 * As a real kubelet with `restartPolicy: Always`, a container that exits
 * without being asked to (a crash, an exit code) is started again in the
 * same pod after a back-off that doubles (1 s up to 16 s here; 10 s up to
 * 5 min on a real node), and the pod's Secret volumes keep syncing meanwhile
 * (they belong to the pod, not to the container). Each exit is recorded
 * (code, signal, time, the log's last lines) and written into the pod's log,
 * so a test whose wait times out can say what happened (`describe`). The pod's
 * status carries them as the kubelet's does (`restartCount`, `lastState`,
 * `CrashLoopBackOff` during a back-off: `container`). A container that does
 * not answer `/health` within its startup probe's window (period x failure
 * threshold), or later fails its liveness probe `failureThreshold` times in a
 * row, is killed and restarted; a stop is SIGTERM, then SIGKILL after
 * the pod's `terminationGracePeriodSeconds` (30 s unless set), as svc's drain
 * (`SVC_SHUTDOWN_TIMEOUT`) counts on.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { dirname, join } from 'node:path';
import { Agent, fetch } from 'undici';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj } from '../fake-apiserver/store.ts';
import { parseQuantity } from '../../src/reconcile/quantity.ts';
import { NODE_BIN, REPO, SVC_JS } from '../svc-server.ts';
import type { ContainerReport, Kubelet } from './statefulset-sim.ts';

export const DNS_SHIM = join(REPO, 'operator/test/dns-shim.mjs');

interface Probe {
  httpGet?: { scheme?: string; path?: string; port?: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
  timeoutSeconds?: number;
}

interface Container {
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string }[];
  readinessProbe?: Probe;
  startupProbe?: Probe;
  livenessProbe?: Probe;
}

type SecretSource = { name?: string; secretName?: string; items?: { key: string; path: string }[]; optional?: boolean };
interface PodVolume {
  name: string;
  secret?: SecretSource;
  projected?: { sources: { secret?: SecretSource }[] };
  emptyDir?: unknown;
}

/** How a container's run ended. */
export interface ContainerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
  /** The last lines its log had then. */
  logTail: string;
}

interface Running {
  /** The pod's uid (a pod of the same name made later is another pod). */
  uid: string | undefined;
  /** The container's current process (undefined while it waits to be restarted). */
  child: ChildProcess | undefined;
  /** Settles when the current process's exit is recorded (before any restart's back-off). */
  exited: Promise<void>;
  ip: string;
  scheme: 'http' | 'https';
  stopRefresh: () => void;
  /** Set when the kubelet stops the pod (or its node died): an exit then is not restarted. */
  stopping: boolean;
  restarts: number;
  lastExit?: ContainerExit;
  startedAt: number;
  /** Set while a restart waits out its back-off. */
  backingOff: boolean;
  /** The readiness probe's state for the current process: ready, and the failures in a row since. */
  readiness: { ready: boolean; failures: number; failingSince: number };
  /** Set once a process of the container has passed its startup probe (the pod has started). */
  live: boolean;
}

/** Back-off before the n-th restart of a container (a real kubelet: 10 s doubling to 5 min). */
const RESTART_BACKOFF_MS = (n: number) => Math.min(1_000 * 2 ** n, 16_000);
/** Log lines kept with each exit. */
const EXIT_LOG_LINES = 40;

/** HTTPS probes and liveness checks: the kubelet does not verify certificates. */
const unverified = new Agent({ connect: { rejectUnauthorized: false } });

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
  /** Every container exit, in order, stops included. */
  readonly exits: (ContainerExit & { pod: string; pid: number | undefined })[] = [];
  /** Processes the liveness probe had killed. */
  readonly livenessKills: { pod: string; pid: number | undefined; at: number }[] = [];
  /** How long a changed Secret takes to reach one pod's volume (drawn per pod and change). */
  secretSyncDelayMs: () => number = () => 0;
  /** Pod name → when a Secret volume of it last changed. */
  readonly secretRefreshed = new Map<string, number>();

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
    // each write holds the whole map, so one that failed is made good by the next: it fails its own caller only
    const write = this.#publishing
      .catch(() => undefined)
      .then(async () => {
        const tmp = `${this.dnsMap}.${process.pid}.tmp`;
        await writeFile(tmp, JSON.stringify(this.#dns));
        await rename(tmp, this.dnsMap);
      });
    this.#publishing = write;
    return write;
  }

  /** A Secret volume's files (path → bytes); a required Secret or key that is missing throws (the pod cannot start). */
  #secretFiles(ns: string, vol: PodVolume): Map<string, Buffer> {
    const sources: SecretSource[] = vol.secret ? [vol.secret] : (vol.projected?.sources ?? []).flatMap((x) => (x.secret ? [x.secret] : []));
    const files = new Map<string, Buffer>();
    const t = this.#api.store.find('', 'v1', 'secrets')!;
    for (const src of sources) {
      const secretName = src.secretName ?? src.name!;
      let data: Record<string, string>;
      try {
        data = (this.#api.store.get(t, ns, secretName)['data'] ?? {}) as Record<string, string>;
      } catch (err) {
        if (src.optional) continue;
        throw Object.assign(new Error(`secret ${secretName} not found: ${(err as Error).message}`), { reason: 'ContainerCreating' });
      }
      for (const item of src.items ?? Object.keys(data).map((k) => ({ key: k, path: k }))) {
        if (data[item.key] === undefined) {
          if (src.optional) continue;
          throw Object.assign(new Error(`secret ${secretName} has no key ${item.key}`), { reason: 'ContainerCreating' });
        }
        files.set(item.path, Buffer.from(data[item.key]!, 'base64'));
      }
    }
    return files;
  }

  /** Writes `files` into `dir` the kubelet's way: a new `..<stamp>` folder, `..data` swapped to it, top-level names linked through `..data`. */
  async #writeAtomically(dir: string, files: Map<string, Buffer>, previous: string | undefined): Promise<string> {
    const stamp = `..${Date.now()}_${Math.random().toString(16).slice(2, 8)}`;
    for (const [path, bytes] of files) {
      await mkdir(dirname(join(dir, stamp, path)), { recursive: true });
      await writeFile(join(dir, stamp, path), bytes, { mode: 0o600 });
    }
    await mkdir(join(dir, stamp), { recursive: true });
    await rm(join(dir, '..data_tmp'), { force: true });
    await symlink(stamp, join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    for (const top of new Set([...files.keys()].map((p) => p.split('/')[0]!))) {
      await symlink(join('..data', top), join(dir, top)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
    if (previous !== undefined) await rm(join(dir, previous), { recursive: true, force: true });
    return stamp;
  }

  /**
   * The PVC's volume: a file system of its own, sized as the claim requests (tmpfs; default 1 GiB),
   * as a provisioned PersistentVolume is. Folders on the host's one shared disk would make every
   * drive report that disk's size and use (other processes' files included), and the decommission
   * capacity check (free of the remaining pools >= 1.3 x use of the drained one) would then depend
   * on how full the machine's disk is. Mounted once on the host and kept until `stopAll`.
   */
  async #volume(ns: string, claim: string): Promise<string> {
    const dir = join(this.base, 'pvc', claim);
    if (this.#volumes.has(dir)) return dir;
    await mkdir(dir, { recursive: true });
    const pvc = this.#api.store.tryGet(this.#api.store.find('', 'v1', 'persistentvolumeclaims')!, ns, claim);
    const request = (pvc?.['spec'] as { resources?: { requests?: { storage?: string } } } | undefined)?.resources?.requests?.storage;
    const bytes = request ? Math.ceil(parseQuantity(request)) : 2 ** 30;
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, `svc-pvc-${claim}`, dir]);
    this.#volumes.add(dir);
    return dir;
  }

  readonly #volumes = new Set<string>();

  /**
   * Pods whose start is under way (volumes being set up, before the process exists): a
   * deletion meanwhile cancels the start instead of finding nothing to stop and leaving a
   * process behind for a pod that is gone.
   */
  readonly #starting = new Map<string, { uid: string | undefined; cancelled: boolean }>();

  async start(pod: Obj): Promise<void> {
    const name = pod.metadata.name;
    const token = { uid: pod.metadata.uid, cancelled: false };
    this.#starting.set(name, token);
    try {
      await this.#start(pod, () => {
        if (token.cancelled) throw Object.assign(new Error(`pod ${name} was deleted while it started`), { reason: 'Deleted' });
      });
    } finally {
      if (this.#starting.get(name) === token) this.#starting.delete(name);
    }
  }

  async #start(pod: Obj, live: () => void): Promise<void> {
    const spec = pod['spec'] as { containers: Container[]; volumes: PodVolume[]; hostname: string; subdomain: string };
    const c = spec.containers[0]!;
    const name = pod.metadata.name;
    const ns = pod.metadata.namespace!;
    const ip = this.ipOf(name);
    await this.#publish(`${spec.hostname}.${spec.subdomain}.${ns}.svc.cluster.local`, ip);
    live();
    const podDir = join(this.base, 'pods', name);
    const mounts: [string, string][] = [];
    const secretVolumes: { dir: string; vol: PodVolume; hash: string; stamp: string; due?: { hash: string; at: number } }[] = [];
    for (const m of c.volumeMounts) {
      const vol = spec.volumes?.find((v) => v.name === m.name);
      if (vol?.emptyDir !== undefined) continue; // the svc process writes no scratch files
      if (vol?.secret || vol?.projected) {
        const dir = join(podDir, 'secret', m.name);
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir, { recursive: true });
        const files = this.#secretFiles(ns, vol);
        const stamp = await this.#writeAtomically(dir, files, undefined);
        secretVolumes.push({ dir, vol, hash: filesHash(files), stamp });
        mounts.push([dir, m.mountPath]);
        continue;
      }
      // A volumeClaimTemplate: the PVC <claim>-<pod> keeps its folder across pod restarts.
      const dir = await this.#volume(ns, `${m.name}-${name}`);
      mounts.push([dir, m.mountPath]);
    }
    live();
    // The kubelet's Secret volume sync: new content appears in the running pod.
    let refreshing = false;
    const refresh = setInterval(() => {
      if (refreshing) return;
      refreshing = true;
      void (async () => {
        for (const v of secretVolumes) {
          let files: Map<string, Buffer>;
          try {
            files = this.#secretFiles(ns, v.vol);
          } catch {
            continue;
          }
          const h = filesHash(files);
          if (h === v.hash) continue;
          if (v.due?.hash !== h) v.due = { hash: h, at: Date.now() + this.secretSyncDelayMs() };
          if (Date.now() < v.due.at) continue;
          v.stamp = await this.#writeAtomically(v.dir, files, v.stamp);
          v.hash = h;
          this.secretRefreshed.set(name, Date.now());
        }
      })().finally(() => {
        refreshing = false;
      });
    }, 300);
    refresh.unref();
    const scheme = c.readinessProbe?.httpGet?.scheme === 'HTTPS' ? 'https' : 'http';
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root' };
    for (const e of c.env) if (e.value !== undefined) env[e.name] = e.value;
    env['SVC_ADDRESS'] = `${ip}:9000`;
    env['SVC_CONSOLE_ADDRESS'] = `${ip}:9001`;
    env['SVC_STARTUP_READINESS_MAX_WAIT_SECS'] = env['SVC_STARTUP_READINESS_MAX_WAIT_SECS'] ?? '120';
    env['NODE_OPTIONS'] = `--import ${DNS_SHIM}`;
    env['SVC_TEST_DNS_MAP'] = this.dnsMap;
    // Private mounts: tmpfs on the top folders, then every volume bind-mounted in place.
    // (under /etc only the volume's own parent: /etc/hosts and friends stay visible; the host gets that empty folder as a mount point)
    const tops = [...new Set(mounts.map(([, target]) => (target.startsWith('/etc/') ? dirname(target) : `/${target.split('/')[1]}`)))];
    for (const t of tops) if (t.startsWith('/etc/')) await mkdir(t, { recursive: true });
    const script = [
      ...tops.map((t) => `mount -t tmpfs tmpfs ${t}`),
      ...mounts.flatMap(([src, target]) => [`mkdir -p ${target}`, `mount --bind ${src} ${target}`]),
      `exec "${NODE_BIN}" "${SVC_JS}" server`,
    ].join(' && ');
    await mkdir(podDir, { recursive: true });
    try {
      live();
    } catch (err) {
      clearInterval(refresh);
      throw err;
    }
    // From here on a stop finds the pod: no await between the check above and the registration.
    const log = createWriteStream(join(podDir, 'svc.log'), { flags: 'a' });
    const r: Running = { uid: pod.metadata.uid, child: undefined, exited: Promise.resolve(), ip, scheme, stopRefresh: () => clearInterval(refresh), stopping: false, restarts: 0, startedAt: Date.now(), backingOff: false, readiness: { ready: false, failures: 0, failingSince: 0 }, live: false };
    this.#procs.set(name, r);
    const launch = (): ChildProcess => {
      const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.pipe(log, { end: false });
      child.stderr!.pipe(log, { end: false });
      r.child = child;
      r.startedAt = Date.now();
      r.backingOff = false;
      r.readiness = { ready: false, failures: 0, failingSince: 0 };
      r.exited = new Promise<void>((done) =>
        child.once('exit', (code, signal) => {
          void this.#exited(name, r, child, code, signal, log, launch, done).finally(done);
        }),
      );
      return child;
    };
    launch();
    this.history.push(`${name}@${ip}`);
    void this.#probe(name, r, pod, c, log);
    // The pod counts as started once a process of it passed its startup probe.
    while (!r.live && !r.stopping) await sleep(100);
  }

  /**
   * The kubelet's probes of one pod's container, for each of its processes in turn: the startup
   * probe (a process not live within the window is killed and restarted, as is one that exits
   * first: restartPolicy Always, with the back-off), then the liveness probe every
   * `periodSeconds` within `timeoutSeconds` (a process that fails it `failureThreshold` times in
   * a row is killed, SIGTERM then SIGKILL after the grace period, and restarted the same way).
   * Ends when the pod is stopped.
   */
  async #probe(name: string, r: Running, pod: Obj, c: Container, log: NodeJS.WritableStream): Promise<void> {
    const windowMs = startupWindowMs(c);
    const liveness = c.livenessProbe;
    const periodMs = (liveness?.periodSeconds ?? 10) * 1000;
    let child: ChildProcess | undefined;
    let started = false;
    let failures = 0;
    for (;;) {
      if (r.stopping || this.#procs.get(name) !== r) return;
      const cur = r.child;
      if (cur === undefined || cur.exitCode !== null || cur.signalCode !== null) {
        // exited: #exited records it and starts the container again after the back-off
        await sleep(100);
        continue;
      }
      if (cur !== child) {
        child = cur;
        started = false;
        failures = 0;
      }
      if (!started) {
        const ok = await httpOk(`${r.scheme}://${r.ip}:9000/health`, 2_000);
        if (r.child !== child) continue;
        if (ok) {
          started = true;
          r.live = true;
          continue;
        }
        if (windowMs !== undefined && Date.now() - r.startedAt > windowMs) {
          log.write(`--- kubelet: startup probe of ${name} failed for ${windowMs} ms; killing the container ---\n`);
          await terminate(child, graceMs(pod), r.exited);
          continue;
        }
        await sleep(100);
        continue;
      }
      await sleep(liveness ? periodMs : 200);
      if (!liveness || r.stopping || r.child !== child) continue;
      const port = typeof liveness.httpGet?.port === 'number' ? liveness.httpGet.port : 9000;
      const ok = await httpOk(`${r.scheme}://${r.ip}:${port}${liveness.httpGet?.path ?? '/health'}`, (liveness.timeoutSeconds ?? 1) * 1000);
      if (r.stopping || r.child !== child) continue;
      if (ok) {
        failures = 0;
        continue;
      }
      const threshold = liveness.failureThreshold ?? 3;
      if (++failures < threshold) continue;
      log.write(`--- kubelet: liveness probe of ${name} failed ${failures} times in a row; killing the container ---\n`);
      this.livenessKills.push({ pod: name, pid: child.pid, at: Date.now() });
      await terminate(child, graceMs(pod), r.exited);
    }
  }

  /**
   * A container's process ended: recorded and written into the pod's log; unless the kubelet
   * stopped the pod, started again after the back-off (restartPolicy Always).
   */
  async #exited(
    name: string,
    r: Running,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
    log: NodeJS.WritableStream,
    launch: () => ChildProcess,
    recorded: () => void,
  ): Promise<void> {
    if (r.child !== child) return;
    r.child = undefined;
    const tail = (await this.log(name)).split('\n').slice(-EXIT_LOG_LINES).join('\n');
    r.lastExit = { code, signal, at: Date.now(), logTail: tail };
    this.exits.push({ ...r.lastExit, pod: name, pid: child.pid });
    if (r.stopping) {
      if (this.#procs.get(name) === r) this.#procs.delete(name);
      r.stopRefresh();
      return;
    }
    // The exit is recorded: whoever waits for it (a stop, the startup probe's kill) goes on
    // without waiting out the back-off.
    recorded();
    const wait = RESTART_BACKOFF_MS(r.restarts);
    log.write(`--- kubelet: container svc of ${name} exited (code ${code}, signal ${signal}) after ${Date.now() - r.startedAt} ms; restart ${r.restarts + 1} in ${wait} ms ---\n`);
    r.backingOff = true;
    await new Promise((res) => setTimeout(res, wait));
    if (r.stopping || this.#procs.get(name) !== r) return;
    r.restarts++;
    launch();
  }

  async stop(pod: Obj): Promise<void> {
    const uid = pod.metadata.uid;
    const starting = this.#starting.get(pod.metadata.name);
    if (starting && (uid === undefined || starting.uid === uid)) starting.cancelled = true;
    const p = this.#procs.get(pod.metadata.name);
    // (a pod of the same name made since is not this one's to stop)
    if (!p || (uid !== undefined && p.uid !== undefined && p.uid !== uid)) return;
    p.stopping = true;
    p.stopRefresh();
    this.#procs.delete(pod.metadata.name);
    const child = p.child;
    if (!child) return;
    await terminate(child, graceMs(pod), p.exited);
  }

  /**
   * The readiness probe as the kubelet runs it: within the probe's `timeoutSeconds` (1 s unless
   * set); one success makes the container ready, and a ready one turns unready only after
   * `failureThreshold` failures in a row (3 unless set) spanning that many periods, not at the
   * first slow answer of a loaded node. A container that is not running is not ready.
   */
  async ready(pod: Obj): Promise<boolean> {
    const p = this.#procs.get(pod.metadata.name);
    const child = p?.child;
    if (!p || !child || (pod.metadata.uid !== undefined && p.uid !== undefined && p.uid !== pod.metadata.uid)) return false;
    const probe = (pod['spec'] as { containers: Container[] }).containers[0]?.readinessProbe;
    const res = await fetch(`${p.scheme}://${p.ip}:9000/health/ready`, { signal: AbortSignal.timeout((probe?.timeoutSeconds ?? 1) * 1000), dispatcher: unverified }).catch(() => undefined);
    if (p.child !== child) return false;
    if (res?.status === 200) {
      p.readiness = { ready: true, failures: 0, failingSince: 0 };
      return true;
    }
    const r = p.readiness;
    if (!r.ready) return false;
    if (r.failures++ === 0) r.failingSince = Date.now();
    const threshold = probe?.failureThreshold ?? 3;
    if (r.failures >= threshold && Date.now() - r.failingSince >= (threshold - 1) * (probe?.periodSeconds ?? 10) * 1000) r.ready = false;
    return r.ready;
  }

  /** A Kubernetes node fails: every pod scheduled there dies at once (SIGKILL) and stays dead; returns their names. */
  async killNode(node: string): Promise<string[]> {
    const pods = this.#api.store.list(this.#api.store.find('', 'v1', 'pods')!).filter((p) => (p['spec'] as { nodeName?: string }).nodeName === node);
    const killed: string[] = [];
    for (const p of pods) {
      const r = this.#procs.get(p.metadata.name);
      if (!r) continue;
      r.stopping = true;
      r.stopRefresh();
      r.child?.kill('SIGKILL');
      await r.exited;
      killed.push(p.metadata.name);
    }
    return killed;
  }

  /** The container's restarts, back-off and last exit, as the kubelet reports them in the pod's status. */
  container(pod: Obj): ContainerReport | undefined {
    const p = this.#procs.get(pod.metadata.name);
    if (!p || (pod.metadata.uid !== undefined && p.uid !== undefined && p.uid !== pod.metadata.uid)) return undefined;
    const exit = p.lastExit;
    const signal = exit?.signal ? osConstants.signals[exit.signal] : undefined;
    return {
      restartCount: p.restarts,
      ...(p.backingOff ? { waiting: 'CrashLoopBackOff' } : {}),
      ...(exit
        ? { lastTerminated: { exitCode: exit.code ?? 128 + (signal ?? 0), ...(signal !== undefined ? { signal } : {}), reason: exit.code === 0 ? 'Completed' : 'Error', finishedAt: new Date(exit.at).toISOString() } }
        : {}),
    };
  }

  /** How often a pod's container was restarted after exiting on its own. */
  restarts(pod: string): number {
    return this.#procs.get(pod)?.restarts ?? 0;
  }

  /** The last exit of a pod's container, if it exited. */
  lastExit(pod: string): ContainerExit | undefined {
    return this.#procs.get(pod)?.lastExit;
  }

  /** For a failed wait: the pod's container state, restarts, last exit with its log lines, and the log's tail now. */
  async describe(pod: string): Promise<string> {
    const p = this.#procs.get(pod);
    const state = p === undefined ? 'no pod running' : p.child ? `running (pid ${p.child.pid}, since ${new Date(p.startedAt).toISOString()})` : 'waiting to restart (back-off)';
    const exit = p?.lastExit;
    const last = exit ? `last exit: code ${exit.code}, signal ${exit.signal} at ${new Date(exit.at).toISOString()}; its last log lines:\n${exit.logTail}\n` : 'no exit recorded\n';
    const refreshed = this.secretRefreshed.get(pod);
    return `=== pod ${pod}: ${state}; restarts ${p?.restarts ?? 0}; Secret volume last refreshed ${refreshed ? new Date(refreshed).toISOString() : 'never'}\n${last}--- log now (tail) ---\n${(await this.log(pod)).split('\n').slice(-EXIT_LOG_LINES).join('\n')}\n`;
  }

  /** Base URL of a running pod. */
  url(pod: string): string {
    return `${this.#procs.get(pod)?.scheme ?? 'http'}://${this.ipOf(pod)}:9000`;
  }

  /** The process id of a running pod's svc (a restart changes it). */
  pid(pod: string): number | undefined {
    return this.#procs.get(pod)?.child?.pid;
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

  /** Stops every pod and releases the PVC volumes (their contents go with them). */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.#procs.values()].map(async (p) => {
        p.stopping = true;
        p.stopRefresh();
        p.child?.kill('SIGKILL');
        await p.exited;
      }),
    );
    this.#procs.clear();
    for (const dir of this.#volumes) await run('umount', ['--lazy', dir]).catch(() => undefined);
    this.#volumes.clear();
  }
}

/** The pod's `terminationGracePeriodSeconds` in ms (Kubernetes' default: 30 s). */
function graceMs(pod: Obj): number {
  return ((pod['spec'] as { terminationGracePeriodSeconds?: number } | undefined)?.terminationGracePeriodSeconds ?? 30) * 1000;
}

/** How long a container may take to answer its liveness endpoint: the startup probe's window, else the liveness probe's (Kubernetes' defaults: every 10 s, 3 failures); none without probes. */
function startupWindowMs(c: Container): number | undefined {
  const probe = c.startupProbe ?? c.livenessProbe;
  if (probe === undefined) return undefined;
  return (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3) * 1000;
}

/** The kubelet's kill: SIGTERM, SIGKILL once the grace period is over; settles when `exited` does. */
async function terminate(child: ChildProcess, grace: number, exited: Promise<void>): Promise<void> {
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), grace);
  await exited;
  clearTimeout(t);
}

/** A probe's HTTP GET: a status from 200 to 399 within `timeoutMs` succeeds (as the kubelet counts it). */
function httpOk(url: string, timeoutMs: number): Promise<boolean> {
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs), dispatcher: unverified }).then(
    (res) => {
      void res.body?.cancel();
      return res.status >= 200 && res.status < 400;
    },
    () => false,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms).unref());
}

/** Runs a command; rejects with its stderr. */
function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(cmd, args, (err, _out, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`)) : resolve())));
}

function filesHash(files: Map<string, Buffer>): string {
  const h = createHash('sha256');
  for (const [k, v] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(k).update('\0').update(v).update('\0');
  return h.digest('hex');
}

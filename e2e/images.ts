/**
 * The images `e2e/build-images.sh` built (svc-node:<tag>, svc-operator:<tag>)
 * and the containers the image tests run from them, with testcontainers
 * (Ryuk off: its image would come from a registry; every test stops what it
 * started, and containers carry a label a new run clears first).
 *
 * `podContainer` runs one pod of an operator-rendered StatefulSet the way a
 * kubelet would: the container's own env (SVC_VOLUMES and the rest exactly
 * as the operator renders them), its securityContext (non-root uid, read-only
 * root filesystem, no capabilities, no privilege escalation), the emptyDir as
 * a tmpfs, every drive PVC as a host folder owned by the pod's uid, and the
 * credentials Secret as a kubelet-style volume (read-only). Networking is the
 * host's: each pod binds its own 127.A.B.k address, and the headless-Service
 * names of every pod resolve to those addresses (`--add-host`), which is what
 * the pod network and cluster DNS give it on Kubernetes.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { writeSecretVolume } from '../node/test/helpers/secret-volume.ts';
import type { KubeObject } from '../operator/src/reconcile/render.ts';

process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
// Every container here uses the host's network; without this, testcontainers run inside a
// container (CI, this machine) looks up the engine's bridge network, which is off (--bridge=none).
process.env['TESTCONTAINERS_HOST_OVERRIDE'] ??= '127.0.0.1';

export const IMAGE_TAG = process.env['SVC_IMAGE_TAG'] ?? 'dev';
export const NODE_IMAGE = `svc-node:${IMAGE_TAG}`;
export const OPERATOR_IMAGE = `svc-operator:${IMAGE_TAG}`;
const LABEL = 'svc.e2e';

function docker(args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
}

/**
 * Undefined when the engine answers and both images exist; otherwise the
 * reason (the caller prints one skip line). With SVC_E2E_REQUIRE_IMAGES=1
 * (CI, after build-images.sh) a missing engine or image is an error instead.
 */
export function imagesMissing(): string | undefined {
  let reason: string | undefined;
  try {
    docker(['info', '--format', '{{.ServerVersion}}']);
    for (const image of [NODE_IMAGE, OPERATOR_IMAGE]) {
      try {
        docker(['image', 'inspect', '--format', '{{.Id}}', image]);
      } catch {
        reason = `image ${image} not built (run e2e/build-images.sh)`;
      }
    }
  } catch {
    reason = 'no Docker engine answers';
  }
  if (reason !== undefined && process.env['SVC_E2E_REQUIRE_IMAGES'] === '1') throw new Error(`SVC_E2E_REQUIRE_IMAGES=1 but ${reason}`);
  if (reason === undefined) {
    // Containers a crashed earlier run left behind (no Ryuk to reap them).
    const stale = docker(['ps', '-aq', '--filter', `label=${LABEL}=run`]).split('\n').filter(Boolean);
    for (const id of stale) {
      const owner = docker(['inspect', '--format', `{{ index .Config.Labels "${LABEL}.pid" }}`, id]).trim();
      if (!processAlive(Number(owner))) docker(['rm', '-f', id]);
    }
  }
  return reason;
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A container with the labels that let a later run clear it, and a read-only root filesystem when asked. */
export class TestPodContainer extends GenericContainer {
  constructor(image: string) {
    super(image);
    this.withLabels({ [LABEL]: 'run', [`${LABEL}.pid`]: String(process.pid) });
  }

  withReadOnlyRootFilesystem(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }
}

interface PodTemplateContainer {
  image: string;
  args?: string[];
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
}

interface PodTemplateSpec {
  securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean };
  containers: PodTemplateContainer[];
  volumes: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] }; emptyDir?: Record<string, unknown> }[];
}

export interface PodRun {
  /** Pod name, `<sts>-<ordinal>`. */
  readonly name: string;
  /** The pod's address (127.A.B.k). */
  readonly ip: string;
  /** Host folder per volumeMount name (the PVCs and the Secret volume). */
  readonly dirs: Record<string, string>;
  readonly container: StartedTestContainer;
}

/**
 * Starts pod `ordinal` of a rendered StatefulSet. `hosts` maps every pod's
 * DNS name to its address; `secrets` holds the Secret data the credentials
 * volume shows; `base` is a host folder for this pod's volumes (kept across a
 * restart of the same pod, like its PVCs).
 */
export async function podContainer(o: {
  sts: KubeObject;
  ordinal: number;
  ip: string;
  hosts: Record<string, string>;
  secrets: Record<string, Record<string, string>>;
  base: string;
  image?: string;
}): Promise<PodRun> {
  const spec = (o.sts['spec'] as { template: { spec: PodTemplateSpec } }).template.spec;
  const c = spec.containers[0]!;
  const name = `${o.sts.metadata.name}-${o.ordinal}`;
  const uid = spec.securityContext?.runAsUser ?? 0;
  const gid = spec.securityContext?.runAsGroup ?? uid;
  const env: Record<string, string> = {};
  for (const e of c.env) if (e.value !== undefined) env[e.name] = e.value;
  // The pod network: the pod's own address (the operator renders ":9000", every interface of the pod).
  env['SVC_ADDRESS'] = `${o.ip}:9000`;
  env['SVC_CONSOLE_ADDRESS'] = `${o.ip}:9001`;
  const binds: { source: string; target: string; mode: 'ro' | 'rw' }[] = [];
  const tmpfs: Record<string, string> = {};
  const dirs: Record<string, string> = {};
  for (const m of c.volumeMounts) {
    const vol = spec.volumes.find((v) => v.name === m.name);
    if (vol?.emptyDir !== undefined) {
      tmpfs[m.mountPath] = `rw,size=64m,uid=${uid},gid=${gid}`;
      continue;
    }
    if (vol?.secret) {
      const dir = join(o.base, name, 'secret', m.name);
      const data = o.secrets[vol.secret.secretName] ?? {};
      const items = vol.secret.items ?? Object.keys(data).map((k) => ({ key: k, path: k }));
      await writeSecretVolume(dir, Object.fromEntries(items.map((i) => [i.path, data[i.key] ?? ''])), 0o644);
      dirs[m.name] = dir;
      binds.push({ source: dir, target: m.mountPath, mode: 'ro' });
      continue;
    }
    // A PVC from a volumeClaimTemplate: the claim <vct>-<pod> keeps its folder across restarts.
    const dir = join(o.base, 'pvc', `${m.name}-${name}`);
    mkdirSync(dir, { recursive: true });
    chownSync(dir, uid, gid);
    dirs[m.name] = dir;
    binds.push({ source: dir, target: m.mountPath, mode: 'rw' });
  }
  let container = new TestPodContainer(o.image ?? c.image)
    .withName(`svc-e2e-${name}-${process.pid}`)
    .withNetworkMode('host')
    .withEnvironment(env)
    .withCommand(c.args ?? [])
    .withBindMounts(binds)
    .withTmpFs(tmpfs)
    .withExtraHosts(Object.entries(o.hosts).map(([host, ipAddress]) => ({ host, ipAddress })))
    .withStartupTimeout(120_000);
  if (uid !== 0) container = container.withUser(`${uid}:${gid}`);
  if (c.securityContext?.readOnlyRootFilesystem) container = container.withReadOnlyRootFilesystem();
  if (c.securityContext?.allowPrivilegeEscalation === false) container = container.withSecurityOpt('no-new-privileges');
  if (c.securityContext?.capabilities?.drop?.includes('ALL')) container = container.withDroppedCapabilities('ALL');
  // Listening: a node of a cluster binds its listeners while it waits for its peers.
  container = container.withWaitStrategy(Wait.forLogMessage(/"event":"startup_listening"/));
  return { name, ip: o.ip, dirs, container: await container.start() };
}

/** A fresh 127.A.B.0/24 for one test file (pods get .2, .3, ...): nothing else on this machine binds there. */
export function podSubnet(): (k: number) => string {
  const a = 16 + Math.floor(Math.random() * 230);
  const b = 1 + Math.floor(Math.random() * 250);
  return (k) => `127.${a}.${b}.${k + 2}`;
}

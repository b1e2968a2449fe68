/**
 * Builders for every child object of a SvcCluster. Pure: the same inputs give
 * byte-identical objects (golden tests in render.test.ts catch accidental
 * template churn, which would restart pods on an operator upgrade).
 */
import type { LaunchConfigT, OwnerReference, PoolSpec, SvcCluster } from '../crd/svccluster.ts';
import { API_VERSION, KIND } from '../crd/svccluster.ts';
import { isIP } from 'node:net';
import {
  ANNOTATION_LAUNCH_HASH,
  ANNOTATION_TEMPLATE_HASH,
  CERTS_DIR,
  certificateName,
  CONSOLE_PORT,
  clusterLabels,
  clusterSelector,
  consoleServiceName,
  drivePath,
  driveClaimName,
  headlessDomain,
  headlessServiceName,
  pdbName,
  podHost,
  poolLabels,
  poolSelector,
  S3_PORT,
  s3ServiceName,
  statefulSetName,
  tlsSecretName,
} from '../topology/names.ts';
import { ecValue, poolDisruptionBudget, shortHash, volumeList } from '../topology/volumes.ts';

export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: OwnerReference[] };
  [key: string]: unknown;
};

/** Operator-wide settings that shape rendering. */
export interface RenderSettings {
  /** Default cluster DNS domain (operator env), overridden by spec.clusterDomain. */
  readonly clusterDomain: string;
}

export const CREDENTIALS_DIR = '/run/secrets/svc';
export const DEFAULT_STARTUP_WAIT_SECONDS = 120;
/** The node image's user (Dockerfile.node). */
export const NODE_UID = 10001;

export function ownerReference(c: SvcCluster): OwnerReference {
  return { apiVersion: API_VERSION, kind: KIND, name: c.metadata.name, uid: c.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

function meta(c: SvcCluster, name: string, labels: Record<string, string>, annotations?: Record<string, string>): KubeObject['metadata'] {
  const m: KubeObject['metadata'] = { name, namespace: c.metadata.namespace ?? 'default', labels, ownerReferences: [ownerReference(c)] };
  if (annotations && Object.keys(annotations).length > 0) m.annotations = annotations;
  return m;
}

/**
 * Requests when neither the pool nor the cluster sets `resources`: sized for
 * a small node (2 vCPU, 4 GiB) running one pod, so the pods are Burstable
 * (never evicted first as BestEffort) and the scheduler counts them. A node
 * idles near 130 MiB and streams large objects in bounded buffers (about
 * 200 MiB at peak); the limit keeps a runaway from taking the node's memory.
 * No CPU limit: throttling a storage node stalls every request it serves.
 */
export const DEFAULT_RESOURCES = { requests: { cpu: '250m', memory: '512Mi' }, limits: { memory: '2Gi' } } as const;

/**
 * Spread defaults when neither the pool nor the cluster sets `affinity` /
 * `topologySpreadConstraints` (an explicit empty value opts out): one pool's
 * pods spread over nodes and zones (skew 1, ScheduleAnyway) and prefer not
 * to share a node (soft anti-affinity), so one node down costs each pool one
 * server at most where the cluster has the nodes. Soft: a cluster with
 * fewer nodes than servers still schedules every pod.
 */
export function defaultSpread(cluster: string, pool: string): { affinity: Record<string, unknown>; topologySpreadConstraints: Record<string, unknown>[] } {
  const labelSelector = { matchLabels: poolSelector(cluster, pool) };
  return {
    affinity: {
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector, topologyKey: 'kubernetes.io/hostname' } }] },
    },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector },
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector },
    ],
  };
}

/** Pool value over cluster value over the defaults; empty collections are omitted (GitOps-friendly). */
function scheduling(c: SvcCluster, pool: PoolSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const dflt = defaultSpread(c.metadata.name, pool.name);
  const nodeSelector = pool.nodeSelector ?? c.spec.nodeSelector;
  if (nodeSelector && Object.keys(nodeSelector).length) out['nodeSelector'] = nodeSelector;
  const affinity = pool.affinity ?? c.spec.affinity ?? dflt.affinity;
  if (affinity && Object.keys(affinity).length) out['affinity'] = affinity;
  const tolerations = pool.tolerations ?? c.spec.tolerations;
  if (tolerations?.length) out['tolerations'] = tolerations;
  const spread = pool.topologySpreadConstraints ?? c.spec.topologySpreadConstraints ?? dflt.topologySpreadConstraints;
  if (spread?.length) out['topologySpreadConstraints'] = spread;
  if (c.spec.priorityClassName) out['priorityClassName'] = c.spec.priorityClassName;
  return out;
}

function probe(scheme: 'HTTP' | 'HTTPS', path: string, timing: { periodSeconds?: number; failureThreshold?: number; timeoutSeconds?: number; initialDelaySeconds?: number } | undefined, dflt: { period: number; failure: number; timeout: number }) {
  const p: Record<string, unknown> = {
    httpGet: { path, port: 's3', scheme },
    periodSeconds: timing?.periodSeconds ?? dflt.period,
    failureThreshold: timing?.failureThreshold ?? dflt.failure,
    timeoutSeconds: timing?.timeoutSeconds ?? dflt.timeout,
  };
  if (timing?.initialDelaySeconds !== undefined) p['initialDelaySeconds'] = timing.initialDelaySeconds;
  return p;
}

/**
 * Probes: liveness `/health` (200 while degraded, never peer health),
 * readiness `/health/ready`, and a startup probe on `/health` whose window
 * covers SVC_STARTUP_READINESS_MAX_WAIT_SECS plus a minute, so a node waiting
 * for its peers is never killed by the kubelet.
 */
export function buildProbes(c: SvcCluster): Record<string, Record<string, unknown>> {
  const wait = c.spec.startupReadinessMaxWaitSeconds ?? DEFAULT_STARTUP_WAIT_SECONDS;
  const startupPeriod = c.spec.probes?.startup?.periodSeconds ?? 10;
  // The kubelet does not verify certificates: HTTPS probes work with any of the three TLS modes.
  const scheme = c.spec.tls ? 'HTTPS' : 'HTTP';
  return {
    startupProbe: probe(scheme, '/health', c.spec.probes?.startup, { period: startupPeriod, failure: Math.ceil((wait + 60) / startupPeriod), timeout: 5 }),
    livenessProbe: probe(scheme, '/health', c.spec.probes?.liveness, { period: 10, failure: 6, timeout: 5 }),
    readinessProbe: probe(scheme, '/health/ready', c.spec.probes?.readiness, { period: 5, failure: 3, timeout: 5 }),
  };
}

function launchEnv(launch: LaunchConfigT): { name: string; value: string }[] {
  const env = [{ name: 'SVC_VOLUMES', value: launch.volumes }];
  if (launch.setDriveCount !== undefined) env.push({ name: 'SVC_ERASURE_SET_DRIVE_COUNT', value: String(launch.setDriveCount) });
  const std = ecValue(launch.standardParity);
  if (std) env.push({ name: 'SVC_STORAGE_CLASS_STANDARD', value: std });
  const rrs = ecValue(launch.reducedParity);
  if (rrs) env.push({ name: 'SVC_STORAGE_CLASS_RRS', value: rrs });
  return env;
}

const coordinatedImage = (c: SvcCluster): boolean => (c.spec.restartPolicy?.imageChange ?? 'Coordinated') === 'Coordinated';

function otherEnv(c: SvcCluster): Record<string, unknown>[] {
  const env: Record<string, unknown>[] = [
    { name: 'SVC_ADDRESS', value: `:${S3_PORT}` },
    { name: 'SVC_CONSOLE_ADDRESS', value: `:${CONSOLE_PORT}` },
    { name: 'SVC_ACCESS_KEY_FILE', value: `${CREDENTIALS_DIR}/accessKey` },
    { name: 'SVC_SECRET_KEY_FILE', value: `${CREDENTIALS_DIR}/secretKey` },
    { name: 'SVC_STARTUP_READINESS_MAX_WAIT_SECS', value: String(c.spec.startupReadinessMaxWaitSeconds ?? DEFAULT_STARTUP_WAIT_SECONDS) },
  ];
  if (c.spec.tls) env.push({ name: 'SVC_CERTS_DIR', value: CERTS_DIR });
  const obs = c.spec.observability;
  if (obs?.otlpEndpoint) env.push({ name: 'SVC_OBS_ENDPOINT', value: obs.otlpEndpoint });
  if (obs?.serviceName) env.push({ name: 'SVC_OBS_SERVICE_NAME', value: obs.serviceName });
  if (obs?.logLevel) env.push({ name: 'SVC_OBS_LOGGER_LEVEL', value: obs.logLevel });
  for (const e of c.spec.env ?? []) env.push({ ...e });
  return env;
}

function podSpec(c: SvcCluster, pool: PoolSpec, launch: LaunchConfigT | undefined): Record<string, unknown> {
  const mounts: Record<string, unknown>[] = [];
  for (let d = 0; d < pool.volumesPerServer; d++) mounts.push({ name: driveClaimName(d), mountPath: drivePath(d) });
  mounts.push({ name: 'credentials', mountPath: CREDENTIALS_DIR, readOnly: true }, { name: 'tmp', mountPath: '/tmp' });
  if (c.spec.tls) mounts.push({ name: 'tls', mountPath: CERTS_DIR, readOnly: true });
  const container: Record<string, unknown> = {
    name: 'svc',
    image: launch && coordinatedImage(c) ? launch.image : c.spec.image,
    imagePullPolicy: c.spec.imagePullPolicy ?? 'IfNotPresent',
    args: ['server'],
    env: [...(launch ? launchEnv(launch) : []), ...otherEnv(c)],
    ports: [
      { name: 's3', containerPort: S3_PORT, protocol: 'TCP' },
      { name: 'console', containerPort: CONSOLE_PORT, protocol: 'TCP' },
    ],
    volumeMounts: mounts,
    ...buildProbes(c),
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  };
  const resources = pool.resources ?? c.spec.resources ?? DEFAULT_RESOURCES;
  if (resources && Object.keys(resources).length) container['resources'] = resources;
  const spec: Record<string, unknown> = {
    serviceAccountName: c.metadata.name,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    // SIGTERM drains requests in flight for SVC_SHUTDOWN_TIMEOUT (30 s by default), then stops jobs and the layer.
    terminationGracePeriodSeconds: 60,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: NODE_UID,
      runAsGroup: NODE_UID,
      fsGroup: NODE_UID,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [container],
    volumes: [
      {
        name: 'credentials',
        secret: {
          secretName: c.spec.credentials.secretName,
          items: [
            { key: 'accessKey', path: 'accessKey' },
            { key: 'secretKey', path: 'secretKey' },
          ],
          defaultMode: 0o440,
        },
      },
      { name: 'tmp', emptyDir: {} },
      ...(c.spec.tls ? [tlsVolume(c)] : []),
    ],
    ...scheduling(c, pool),
  };
  if (c.spec.imagePullSecrets?.length) spec['imagePullSecrets'] = c.spec.imagePullSecrets;
  return spec;
}

/**
 * The certificate directory of every pod (`docs/tls.md`): the Secret's
 * `tls.crt` and `tls.key` as `public.crt` and `private.key`, its `ca.crt`
 * (when there is one) in `CAs/`. A projected volume (not subPath), so the
 * kubelet refreshes the files when the Secret changes and svc reloads them
 * without a restart.
 */
function tlsVolume(c: SvcCluster): Record<string, unknown> {
  const name = tlsSecretName(c);
  return {
    name: 'tls',
    projected: {
      defaultMode: 0o440,
      sources: [
        {
          secret: {
            name,
            items: [
              { key: 'tls.crt', path: 'public.crt' },
              { key: 'tls.key', path: 'private.key' },
            ],
          },
        },
        { secret: { name, items: [{ key: 'ca.crt', path: 'CAs/ca.crt' }], optional: true } },
      ],
    },
  };
}

/**
 * The names the cluster's certificate covers (modes certManager and
 * generated): every pod's stable DNS name, a wildcard over the headless
 * domain (so pods of a pool added later are covered before the certificate
 * is reissued), the headless, S3 and console Services in their short and
 * qualified forms, and `spec.tls.extraNames`. DNS names first, then IPs.
 */
export function tlsNames(c: SvcCluster, domain: string): { dns: string[]; ips: string[] } {
  const ns = c.metadata.namespace ?? 'default';
  const dns: string[] = [];
  const add = (n: string) => {
    if (!dns.includes(n)) dns.push(n);
  };
  for (const p of c.spec.pools) for (let i = 0; i < p.servers; i++) add(podHost(c, p.name, i, domain));
  add(`*.${headlessDomain(c, domain)}`);
  const services = [headlessServiceName(c.metadata.name), s3ServiceName(c.metadata.name)];
  if (c.spec.services?.console?.enabled !== false) services.push(consoleServiceName(c.metadata.name));
  for (const svc of services) for (const n of [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.${domain}`]) add(n);
  const ips: string[] = [];
  for (const n of c.spec.tls?.extraNames ?? []) {
    if (isIP(n) !== 0) {
      if (!ips.includes(n)) ips.push(n);
    } else add(n.toLowerCase());
  }
  return { dns, ips };
}

/** Mode certManager: the Certificate cert-manager turns into the Secret `<cluster>-tls`. */
export function buildCertificate(c: SvcCluster, domain: string): KubeObject {
  const cm = c.spec.tls!.certManager!;
  const names = tlsNames(c, domain);
  const spec: Record<string, unknown> = {
    secretName: tlsSecretName(c),
    issuerRef: { name: cm.issuerRef.name, kind: cm.issuerRef.kind ?? 'Issuer', group: cm.issuerRef.group ?? 'cert-manager.io' },
    dnsNames: names.dns,
    // ECDSA P-256, a new key at every renewal
    privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    usages: ['server auth', 'client auth', 'digital signature', 'key encipherment'],
    secretTemplate: { labels: clusterLabels(c.metadata.name) },
  };
  if (names.ips.length > 0) spec['ipAddresses'] = names.ips;
  if (cm.duration) spec['duration'] = cm.duration;
  if (cm.renewBefore) spec['renewBefore'] = cm.renewBefore;
  return { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: meta(c, certificateName(c.metadata.name), clusterLabels(c.metadata.name)), spec };
}

/**
 * Hash of everything in a pool's pod template that is *not* launch-critical
 * (resources, scheduling, probes, extra env, image under `Rolling`): a change
 * here is a rolling restart, a change of the launch hash a coordinated one.
 */
export function templateHash(c: SvcCluster, pool: PoolSpec): string {
  const spec = podSpec(c, pool, undefined);
  if (coordinatedImage(c)) (spec['containers'] as Record<string, unknown>[])[0]!['image'] = '';
  return shortHash(spec);
}

export function buildStatefulSet(
  c: SvcCluster,
  pool: PoolSpec,
  launch: LaunchConfigT,
  opts: { replicas?: number | undefined; claimStorage?: string | number | undefined } = {},
): KubeObject {
  const name = statefulSetName(c.metadata.name, pool.name);
  const labels = poolLabels(c.metadata.name, pool.name);
  const retention = c.spec.storage?.pvcRetention === 'Delete' ? 'Delete' : 'Retain';
  const claims = [];
  for (let d = 0; d < pool.volumesPerServer; d++) {
    const spec: Record<string, unknown> = {
      accessModes: pool.volumeClaimTemplate.accessModes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: opts.claimStorage ?? pool.volumeClaimTemplate.resources.requests.storage } },
    };
    if (pool.volumeClaimTemplate.storageClassName) spec['storageClassName'] = pool.volumeClaimTemplate.storageClassName;
    claims.push({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: driveClaimName(d), labels }, spec });
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta(c, name, labels),
    spec: {
      serviceName: headlessServiceName(c.metadata.name),
      replicas: opts.replicas ?? pool.servers,
      podManagementPolicy: 'Parallel',
      // Kubernetes never restarts a pod with a half-applied launch config:
      // the operator deletes pods itself (coordinated or rolling restart).
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: retention, whenScaled: 'Retain' },
      selector: { matchLabels: poolSelector(c.metadata.name, pool.name) },
      template: {
        metadata: {
          labels,
          annotations: { [ANNOTATION_LAUNCH_HASH]: launch.hash, [ANNOTATION_TEMPLATE_HASH]: templateHash(c, pool) },
        },
        spec: podSpec(c, pool, launch),
      },
      volumeClaimTemplates: claims,
    },
  };
}

export function buildServices(c: SvcCluster): KubeObject[] {
  const name = c.metadata.name;
  const labels = clusterLabels(name);
  const s3 = c.spec.services?.s3;
  const consoleCfg = c.spec.services?.console;
  const out: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(c, headlessServiceName(name), labels),
      spec: {
        clusterIP: 'None',
        // Peers must resolve each other before any node is Ready.
        publishNotReadyAddresses: true,
        selector: clusterSelector(name),
        ports: [{ name: 's3', port: S3_PORT, targetPort: 's3', protocol: 'TCP' }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(c, s3ServiceName(name), labels, s3?.annotations),
      spec: {
        type: s3?.type ?? 'ClusterIP',
        selector: clusterSelector(name),
        ports: [{ name: 's3', port: S3_PORT, targetPort: 's3', protocol: 'TCP' }],
      },
    },
  ];
  if (consoleCfg?.enabled !== false) {
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(c, consoleServiceName(name), labels, consoleCfg?.annotations),
      spec: {
        type: consoleCfg?.type ?? 'ClusterIP',
        selector: clusterSelector(name),
        ports: [{ name: 'console', port: CONSOLE_PORT, targetPort: 'console', protocol: 'TCP' }],
      },
    });
  }
  return out;
}

/**
 * One PodDisruptionBudget per pool: evictions (node drains, cluster
 * upgrades) may take down at most as many of the pool's pods as every
 * erasure set of the pool survives with its write quorum, from the pool's
 * parity and set layout (`poolDisruptionBudget`). The operator's own
 * restarts are not evictions and keep their own budget.
 */
export function buildPdb(c: SvcCluster, pool: PoolSpec, launch: LaunchConfigT): KubeObject {
  const sts = statefulSetName(c.metadata.name, pool.name);
  const expression = volumeList(launch.volumes).find((e) => new RegExp(`^https?://${sts}-(\\{0\\.\\.\\.\\d+\\}|0)\\.`).test(e));
  const budget = expression === undefined ? 0 : (poolDisruptionBudget(launch, expression) ?? 0);
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(c, pdbName(c.metadata.name, pool.name), poolLabels(c.metadata.name, pool.name)),
    spec: { maxUnavailable: budget, selector: { matchLabels: poolSelector(c.metadata.name, pool.name) } },
  };
}

export function buildServiceAccount(c: SvcCluster): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta(c, c.metadata.name, clusterLabels(c.metadata.name)),
    automountServiceAccountToken: false,
  };
}

export function endpoints(c: SvcCluster, domain: string): { s3: string; console?: string } {
  const ns = c.metadata.namespace ?? 'default';
  const scheme = c.spec.tls ? 'https' : 'http';
  const out: { s3: string; console?: string } = { s3: `${scheme}://${s3ServiceName(c.metadata.name)}.${ns}.svc.${domain}:${S3_PORT}` };
  if (c.spec.services?.console?.enabled !== false) out.console = `${scheme}://${consoleServiceName(c.metadata.name)}.${ns}.svc.${domain}:${CONSOLE_PORT}`;
  return out;
}

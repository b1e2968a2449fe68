/**
 * The SvcCluster custom resource: one TypeScript schema from which come the
 * CRD in `crds/`, the operator's types and the CEL rules Kubernetes enforces
 * at admission. Field reasoning: docs/operator.md and the shared operator
 * design (§2).
 *
 * Decisions where the design left room:
 * - Parity is an integer (`erasure.standardParity: 4`), rendered as `EC:4`:
 *   CEL can then check it against the narrowest pool without string parsing.
 * - No schema `default:` anywhere: defaults are computed in code, so GitOps
 *   tools never see the API server add fields they did not write.
 * - `pools` is a list-map keyed by `name`, so per-pool transition rules
 *   (immutable geometry) can compare a pool with its own old self.
 */
import {
  Affinity,
  Condition,
  DNS_LABEL_PATTERN,
  EnvVar,
  LocalObjectReference,
  Quantity,
  ResourceRequirements,
  StringEnum,
  StringMap,
  type Static,
  Toleration,
  TopologySpreadConstraint,
  Type,
  withRules,
} from './k8s-schema.ts';

export const GROUP = 'svc.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'SvcCluster';
export const PLURAL = 'svcclusters';
export const SINGULAR = 'svccluster';
export const SHORT_NAMES = ['svcc'];

/** Longest StatefulSet name: `controller-revision-hash=<sts>-<10 chars>` must fit a 63-char label. */
export const MAX_STATEFULSET_NAME = 52;
export const MAX_POOLS = 32;
export const MAX_SERVERS_PER_POOL = 64;
export const MAX_VOLUMES_PER_SERVER = 32;

/** Names the operator owns in every pod: refused in `spec.env`. */
export const RESERVED_ENV_PREFIXES = ['SVC_VOLUMES', 'SVC_ERASURE_SET_DRIVE_COUNT', 'SVC_STORAGE_CLASS_', 'SVC_ACCESS_KEY', 'SVC_SECRET_KEY', 'COMPAT_', 'SVC_CERTS_DIR'] as const;

const celReserved = RESERVED_ENV_PREFIXES.map((p) => `e.name.startsWith('${p}')`).join(' || ');

/**
 * The server's set-width rules (svc-topology's set-width.ts) in CEL, for
 * a pool `p` as the operator renders it (`<sts>-{0...S-1}.../data/d{0...V-1}`,
 * a one-server host and a one-drive path written literally): a width w of 2
 * to 16 divides the pool's S×V drives and is symmetric with its first range
 * (the servers when S > 1, else the drives). A test holds these equal to the
 * server's own code on a grid of layouts.
 */
const celDrives = (p: string) => `(${p}.servers * ${p}.volumesPerServer)`;
const celFirstRange = (p: string) => `(${p}.servers > 1 ? ${p}.servers : ${p}.volumesPerServer)`;
const celWidthOk = (p: string, w: string) => `${celDrives(p)} % ${w} == 0 && (${celFirstRange(p)} % ${w} == 0 || ${w} % ${celFirstRange(p)} == 0)`;
const WIDTHS_DESC = '[16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]';
/** The set width the server picks for pool `p`: the pinned one, else the widest valid one (guard with a non-empty check). */
const celWidth = (p: string) => `(has(self.erasure) && has(self.erasure.setDriveCount) ? self.erasure.setDriveCount : ${WIDTHS_DESC}.filter(w, ${celWidthOk(p, 'w')})[0])`;
const celParityFits = (field: 'standardParity' | 'reducedParity') =>
  `!has(self.erasure) || !has(self.erasure.${field}) || self.pools.all(p, ${WIDTHS_DESC}.filter(w, ${celWidthOk('p', 'w')}).size() == 0 || self.erasure.${field} * 2 <= ${celWidth('p')})`;

const ProbeTiming = Type.Object({
  periodSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
  failureThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
  initialDelaySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
});

const VolumeClaimTemplate = Type.Object({
  storageClassName: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'StorageClass of every drive PVC of this pool' })),
  accessModes: Type.Optional(Type.Array(StringEnum(['ReadWriteOnce', 'ReadWriteOncePod', 'ReadWriteMany', 'ReadOnlyMany']), { maxItems: 4 })),
  resources: Type.Object({
    requests: Type.Object({ storage: Quantity({ description: 'size of each drive; may only grow (PVC expansion)' }) }),
  }),
});

const Scheduling = {
  resources: Type.Optional(ResourceRequirements),
  nodeSelector: Type.Optional(StringMap()),
  affinity: Type.Optional(Affinity),
  tolerations: Type.Optional(Type.Array(Toleration, { maxItems: 64 })),
  topologySpreadConstraints: Type.Optional(Type.Array(TopologySpreadConstraint, { maxItems: 16 })),
};

export const PoolSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 40, pattern: DNS_LABEL_PATTERN, description: 'pool name; the StatefulSet is <cluster>-<name>' }),
    servers: Type.Integer({ minimum: 1, maximum: MAX_SERVERS_PER_POOL, description: 'pods in this pool (immutable)' }),
    volumesPerServer: Type.Integer({ minimum: 1, maximum: MAX_VOLUMES_PER_SERVER, description: 'drives (PVCs) per pod (immutable)' }),
    volumeClaimTemplate: VolumeClaimTemplate,
    decommission: Type.Optional(Type.Boolean({ description: 'true: drain this pool and remove it; false again cancels a running drain' })),
    ...Scheduling,
  },
  withRules([
    {
      rule: 'self.servers == oldSelf.servers && self.volumesPerServer == oldSelf.volumesPerServer',
      message: 'servers and volumesPerServer of a pool are immutable: add a new pool to grow the cluster',
    },
    {
      rule: "(has(self.volumeClaimTemplate.storageClassName) ? self.volumeClaimTemplate.storageClassName : '') == (has(oldSelf.volumeClaimTemplate.storageClassName) ? oldSelf.volumeClaimTemplate.storageClassName : '')",
      message: 'volumeClaimTemplate.storageClassName of a pool is immutable',
    },
    { rule: 'self.servers * self.volumesPerServer >= 2', message: 'a pool needs at least two drives (servers x volumesPerServer >= 2)' },
    {
      rule: `${celDrives('self')} < 2 || ${WIDTHS_DESC}.exists(w, ${celWidthOk('self', 'w')})`,
      message: 'the pool\'s drives (servers x volumesPerServer) cannot be split into symmetric erasure sets of 2 to 16 drives, as every node would refuse at start-up',
    },
  ]),
);

/** A Go duration as cert-manager writes it (`2160h`, `1h30m`, `90m`). */
const GoDuration = (description: string) => Type.String({ pattern: '^([0-9]+(\\.[0-9]+)?(h|m|s))+$', maxLength: 32, description });

const TlsSpec = Type.Object(
  {
    secretName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 253, description: 'mode 1: an existing kubernetes.io/tls Secret (tls.crt, tls.key, optional ca.crt) whose certificate names every pod (*.<cluster>-hl.<namespace>.svc.<domain>)' }),
    ),
    certManager: Type.Optional(
      Type.Object(
        {
          issuerRef: Type.Object({
            name: Type.String({ minLength: 1, maxLength: 253 }),
            kind: Type.Optional(StringEnum(['Issuer', 'ClusterIssuer'])),
            group: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'default cert-manager.io' })),
          }),
          duration: Type.Optional(GoDuration('certificate lifetime (cert-manager default when unset)')),
          renewBefore: Type.Optional(GoDuration('renew this long before the end (cert-manager default when unset)')),
        },
        { description: 'mode 2: the operator creates a cert-manager Certificate <cluster>-tls with this issuer' },
      ),
    ),
    generated: Type.Optional(
      Type.Object(
        {
          duration: Type.Optional(GoDuration('certificate lifetime (default 2160h: 90 days)')),
          renewBefore: Type.Optional(GoDuration('renew this long before the end (default a third of the lifetime)')),
        },
        { description: 'mode 3: the operator keeps a CA (<cluster>-tls-ca) and issues and renews the certificate (<cluster>-tls) itself' },
      ),
    ),
    extraNames: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 64, description: 'more DNS names or IP addresses for the certificate (modes 2 and 3), e.g. an ingress host' }),
    ),
  },
  withRules([
    {
      rule: '(has(self.secretName) ? 1 : 0) + (has(self.certManager) ? 1 : 0) + (has(self.generated) ? 1 : 0) == 1',
      message: 'tls takes exactly one of secretName, certManager or generated',
    },
    { rule: '!has(self.extraNames) || !has(self.secretName)', message: 'tls.extraNames applies to certManager and generated certificates; with secretName the certificate is yours' },
  ]),
);

const IamName = (what: string) => Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9+=,.@_-]+$', description: what });

/** Users and policies declared from Secrets and ConfigMaps (GitOps): the operator applies them through the admin API. */
const IamSpec = Type.Object(
  {
    policies: Type.Optional(
      Type.Array(
        Type.Object({
          name: IamName('policy name (not a canned one: readonly, readwrite, writeonly, diagnostics, consoleAdmin)'),
          configMap: Type.Object(
            { name: Type.String({ minLength: 1, maxLength: 253 }), key: Type.String({ minLength: 1, maxLength: 253 }) },
            { description: 'ConfigMap key holding the AWS IAM policy document (JSON)' },
          ),
        }),
        { maxItems: 256, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
      ),
    ),
    users: Type.Optional(
      Type.Array(
        Type.Object({
          secretName: Type.String({ minLength: 1, maxLength: 253, description: 'Secret with keys accessKey (the user name) and secretKey' }),
          policies: Type.Optional(Type.Array(IamName('policy attached to the user'), { maxItems: 64 })),
        }),
        { maxItems: 1024, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['secretName'] },
      ),
    ),
  },
  { description: 'identities the operator keeps in the cluster: policies from ConfigMaps, users from Secrets; those it created and that leave this list are removed' },
);

const ServiceExposure = {
  type: Type.Optional(StringEnum(['ClusterIP', 'NodePort', 'LoadBalancer'])),
  annotations: Type.Optional(StringMap()),
};

export const SvcClusterSpecSchema = Type.Object(
  {
    image: Type.String({ minLength: 1, description: 'storage node image' }),
    imagePullPolicy: Type.Optional(StringEnum(['Always', 'IfNotPresent', 'Never'])),
    imagePullSecrets: Type.Optional(Type.Array(LocalObjectReference, { maxItems: 16 })),
    credentials: Type.Object(
      { secretName: Type.String({ minLength: 1, description: 'Secret with keys accessKey and secretKey (root credential); rotate by editing its keys' }) },
      {
        description: 'root credential; mounted as files, never placed in env values',
        ...withRules([{ rule: 'self.secretName == oldSelf.secretName', message: 'credentials.secretName is immutable: rotate the root credential by editing the Secret\'s keys (nodes take them without a restart)' }]),
      },
    ),
    clusterDomain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' })),
    erasure: Type.Optional(
      Type.Object(
        {
          setDriveCount: Type.Optional(Type.Integer({ minimum: 2, maximum: 16, description: 'pins the erasure set width (SVC_ERASURE_SET_DRIVE_COUNT)' })),
          standardParity: Type.Optional(Type.Integer({ minimum: 0, maximum: 8, description: 'STANDARD parity (EC:<n>)' })),
          reducedParity: Type.Optional(Type.Integer({ minimum: 0, maximum: 8, description: 'REDUCED_REDUNDANCY parity (EC:<n>)' })),
        },
        withRules([
          {
            rule: '!has(self.standardParity) || !has(self.reducedParity) || self.standardParity == 0 || self.reducedParity == 0 || self.standardParity >= self.reducedParity',
            message: 'standardParity must be at least reducedParity when both are non-zero',
          },
        ]),
      ),
    ),
    pools: Type.Array(PoolSpecSchema, {
      minItems: 1,
      maxItems: MAX_POOLS,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      description: 'server pools in order; append new pools at the end, remove one with decommission: true',
    }),
    rebalance: Type.Optional(
      Type.Object({
        onExpansion: Type.Optional(StringEnum(['Auto', 'Manual'])),
        requestId: Type.Optional(Type.String({ maxLength: 128, description: 'change to request a rebalance now' })),
      }),
    ),
    restartPolicy: Type.Optional(
      Type.Object({
        imageChange: Type.Optional(StringEnum(['Coordinated', 'Rolling'])),
        readyTimeoutSeconds: Type.Optional(Type.Integer({ minimum: 30, maximum: 86400 })),
      }),
    ),
    startupReadinessMaxWaitSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 86400, description: 'SVC_STARTUP_READINESS_MAX_WAIT_SECS; the startup probe is sized to it' }),
    ),
    probes: Type.Optional(
      Type.Object({ startup: Type.Optional(ProbeTiming), readiness: Type.Optional(ProbeTiming), liveness: Type.Optional(ProbeTiming) }),
    ),
    services: Type.Optional(
      Type.Object({
        s3: Type.Optional(Type.Object(ServiceExposure)),
        console: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()), ...ServiceExposure })),
      }),
    ),
    observability: Type.Optional(
      Type.Object({
        otlpEndpoint: Type.Optional(Type.String({ minLength: 1 })),
        serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        logLevel: Type.Optional(StringEnum(['trace', 'debug', 'info', 'warn', 'error'])),
      }),
    ),
    env: Type.Optional(
      Type.Array(EnvVar, {
        maxItems: 64,
        'x-kubernetes-validations': [
          { rule: `self.all(e, !(${celReserved}))`, message: `env must not set names the operator owns (${RESERVED_ENV_PREFIXES.join(', ')})` },
        ],
      }),
    ),
    storage: Type.Optional(Type.Object({ pvcRetention: Type.Optional(StringEnum(['Retain', 'Delete'])) })),
    iam: Type.Optional(IamSpec),
    tls: Type.Optional(TlsSpec),
    paused: Type.Optional(Type.Boolean({ description: 'stop acting on this cluster (status is still refreshed)' })),
    ...Scheduling,
    priorityClassName: Type.Optional(Type.String()),
  },
  withRules([
    {
      rule: 'self.pools.exists(p, !has(p.decommission) || !p.decommission)',
      message: 'at least one pool must stay active (decommission: false)',
    },
    {
      rule: celParityFits('standardParity'),
      message: 'standardParity exceeds half the erasure set width of the narrowest pool',
      fieldPath: '.erasure.standardParity',
    },
    {
      rule: celParityFits('reducedParity'),
      message: 'reducedParity exceeds half the erasure set width of the narrowest pool',
      fieldPath: '.erasure.reducedParity',
    },
    {
      rule: `!has(self.erasure) || !has(self.erasure.setDriveCount) || self.pools.all(p, ${celWidthOk('p', 'self.erasure.setDriveCount')})`,
      message: 'erasure.setDriveCount does not divide every pool\'s drives into symmetric sets (every node would refuse to start)',
      fieldPath: '.erasure.setDriveCount',
    },
    {
      rule: '(has(self.erasure) && has(self.erasure.setDriveCount) ? self.erasure.setDriveCount : 0) == (has(oldSelf.erasure) && has(oldSelf.erasure.setDriveCount) ? oldSelf.erasure.setDriveCount : 0)',
      message: 'erasure.setDriveCount is immutable: it is persisted in every drive format',
    },
    {
      rule: 'self.pools.filter(p, oldSelf.pools.exists(o, o.name == p.name)).map(p, p.name) == oldSelf.pools.filter(o, self.pools.exists(p, p.name == o.name)).map(o, o.name)',
      message: 'pools keep their order: append new pools at the end',
      fieldPath: '.pools',
    },
  ]),
);

const DecommissionStatus = Type.Object({
  phase: StringEnum(['Queued', 'Active', 'Completed', 'Failed', 'Canceled']),
  startTime: Type.Optional(Type.String()),
  objectsDecommissioned: Type.Optional(Type.Integer()),
  objectsDecommissionedFailed: Type.Optional(Type.Integer()),
  bytesDecommissioned: Type.Optional(Type.Integer()),
  bytesDecommissionedFailed: Type.Optional(Type.Integer()),
  totalSize: Type.Optional(Type.Integer()),
  currentSize: Type.Optional(Type.Integer()),
  attempts: Type.Optional(Type.Integer()),
  /** The svc.io/retry-decommission annotation value that started the current attempt. */
  retryToken: Type.Optional(Type.String()),
});

export const POOL_STATES = ['Pending', 'Provisioning', 'Joining', 'Active', 'Draining', 'Drained', 'Detaching', 'Removed', 'DrainFailed', 'DrainCanceled'] as const;
export type PoolState = (typeof POOL_STATES)[number];

const PoolStatusSchema = Type.Object({
  name: Type.String(),
  state: StringEnum(POOL_STATES),
  index: Type.Optional(Type.Integer({ description: 'server pool index seen in pools/list' })),
  expression: Type.Optional(Type.String()),
  expressionHash: Type.Optional(Type.String()),
  statefulSet: Type.Optional(Type.String()),
  replicas: Type.Optional(Type.Integer()),
  readyReplicas: Type.Optional(Type.Integer()),
  updatedReplicas: Type.Optional(Type.Integer()),
  decommission: Type.Optional(DecommissionStatus),
});

export const OPERATION_TYPES = ['AddPools', 'RemovePool', 'CancelDecommission', 'Rebalance', 'CoordinatedRestart', 'RollingRestart'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const OPERATION_PHASES = [
  'ProvisioningNewPools',
  'RestartingCluster',
  'VerifyingTopology',
  'StartingRebalance',
  'Rebalancing',
  'StoppingRebalance',
  'StartingDecommission',
  'Draining',
  'Canceling',
  'RestartingWithoutPool',
  'Clearing',
  'DeletingWorkload',
  'RollingPods',
  'RollingBack',
  'RolledBack',
] as const;
export type OperationPhase = (typeof OPERATION_PHASES)[number];

/** Settings identical on every node; a change restarts all pods together. */
export const LaunchConfigSchema = Type.Object({
  hash: Type.String(),
  volumes: Type.String({ description: 'SVC_VOLUMES: one expression per pool, in order' }),
  image: Type.String(),
  setDriveCount: Type.Optional(Type.Integer()),
  standardParity: Type.Optional(Type.Integer()),
  reducedParity: Type.Optional(Type.Integer()),
});

export const OperationSchema = Type.Object({
  id: Type.String(),
  type: StringEnum(OPERATION_TYPES),
  phase: StringEnum(OPERATION_PHASES),
  pools: Type.Optional(Type.Array(Type.String())),
  attempt: Type.Integer({ minimum: 1 }),
  startedAt: Type.String(),
  phaseStartedAt: Type.String(),
  message: Type.Optional(Type.String()),
  /** The launch configuration this operation restarts the cluster into. */
  target: Type.Optional(LaunchConfigSchema),
  /** The last failed step of this operation (admin call refused, API error). */
  lastError: Type.Optional(Type.Object({ action: Type.String(), code: Type.String(), message: Type.String(), at: Type.String() })),
  /** The last admin call of this operation that succeeded (steps that cannot be observed afterwards). */
  lastDone: Type.Optional(Type.Object({ action: Type.String(), at: Type.String() })),
  rebalanceId: Type.Optional(Type.String()),
  /** Rolling restart: the pod being replaced now. */
  pod: Type.Optional(Type.String()),
  observedGeneration: Type.Optional(Type.Integer()),
});

export const SvcClusterStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  phase: Type.Optional(StringEnum(['Pending', 'Provisioning', 'Ready', 'Expanding', 'Rebalancing', 'Decommissioning', 'Restarting', 'Degraded', 'Stalled'])),
  conditions: Type.Optional(
    Type.Array(Condition, { maxItems: 32, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  ),
  launchConfig: Type.Optional(
    Type.Object({
      applied: Type.Optional(LaunchConfigSchema),
      desiredHash: Type.Optional(Type.String()),
    }),
  ),
  operation: Type.Optional(OperationSchema),
  pools: Type.Optional(Type.Array(PoolStatusSchema, { maxItems: 64 })),
  poolsSummary: Type.Optional(Type.String({ description: 'ready/total pools, for kubectl get' })),
  rebalance: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String()),
      requestId: Type.Optional(Type.String()),
      startedAt: Type.Optional(Type.String()),
      finishedAt: Type.Optional(Type.String()),
      lastError: Type.Optional(Type.String()),
    }),
  ),
  health: Type.Optional(
    Type.Object({
      readyNodes: Type.Optional(Type.Integer()),
      totalNodes: Type.Optional(Type.Integer()),
      degradedReasons: Type.Optional(Type.Array(Type.String())),
      lastProbeTime: Type.Optional(Type.String()),
    }),
  ),
  endpoints: Type.Optional(Type.Object({ s3: Type.Optional(Type.String()), console: Type.Optional(Type.String()) })),
  identity: Type.Optional(
    Type.Object({
      /** Hash of the declared users and policies last applied. */
      appliedHash: Type.Optional(Type.String()),
      appliedAt: Type.Optional(Type.String()),
      /** What the operator created (removed when it leaves spec.iam). */
      users: Type.Optional(Type.Array(Type.String(), { maxItems: 1024 })),
      policies: Type.Optional(Type.Array(Type.String(), { maxItems: 256 })),
    }),
  ),
});

export type PoolSpec = Static<typeof PoolSpecSchema>;
export type TlsSpecT = Static<typeof TlsSpec>;
export type SvcClusterSpec = Static<typeof SvcClusterSpecSchema>;
export type SvcClusterStatus = Static<typeof SvcClusterStatusSchema>;
export type PoolStatus = Static<typeof PoolStatusSchema>;
export type Operation = Static<typeof OperationSchema>;
export type DecommissionStatusT = Static<typeof DecommissionStatus>;
export type ConditionT = Static<typeof Condition>;
export type LaunchConfigT = Static<typeof LaunchConfigSchema>;

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface SvcCluster {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: SvcClusterSpec;
  status?: SvcClusterStatus;
}

/** Root-level rules: they may read metadata.name (DNS lengths of derived names). */
export const ROOT_RULES = [
  {
    rule: `self.spec.pools.all(p, size(self.metadata.name) + 1 + size(p.name) <= ${MAX_STATEFULSET_NAME})`,
    message: `<cluster name>-<pool name> must be at most ${MAX_STATEFULSET_NAME} characters (StatefulSet and pod names)`,
  },
  { rule: 'size(self.metadata.name) <= 40', message: 'the cluster name must be at most 40 characters (Service names derive from it)' },
] as const;

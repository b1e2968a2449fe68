/** Names and labels of everything the operator creates for a SvcCluster. Pure. */
import type { SvcCluster } from '../crd/svccluster.ts';

export const S3_PORT = 9000;
export const CONSOLE_PORT = 9001;
/** Where drive PVC `data-<i>` is mounted in every pod; the volume expressions name these paths. */
export const DATA_ROOT = '/data';
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
export const FIELD_MANAGER = 'svc-operator';
/** Added by earlier releases, removed by this one (a finalizer wedges deletion once the operator is gone). */
export const LEGACY_FINALIZER = 'svc.io/finalizer';

export const LABEL_CLUSTER = 'svc.io/cluster';
export const LABEL_POOL = 'svc.io/pool';
export const ANNOTATION_LAUNCH_HASH = 'svc.io/launch-config-hash';
export const ANNOTATION_TEMPLATE_HASH = 'svc.io/template-hash';
export const ANNOTATION_RETRY_DECOMMISSION = 'svc.io/retry-decommission';

export const statefulSetName = (cluster: string, pool: string): string => `${cluster}-${pool}`;
export const headlessServiceName = (cluster: string): string => `${cluster}-hl`;
export const s3ServiceName = (cluster: string): string => cluster;
export const consoleServiceName = (cluster: string): string => `${cluster}-console`;
/** One PodDisruptionBudget per pool (earlier releases had one per cluster, named after it). */
export const pdbName = (cluster: string, pool: string): string => `${cluster}-${pool}`;
export const podName = (cluster: string, pool: string, ordinal: number): string => `${statefulSetName(cluster, pool)}-${ordinal}`;
export const drivePath = (drive: number | string): string => `${DATA_ROOT}/d${drive}`;
/** Where the TLS Secret is mounted in every pod (the image's SVC_CERTS_DIR). */
export const CERTS_DIR = '/etc/svc/certs';
/** The Secret holding the served certificate: the user's (spec.tls.secretName) or the one the operator or cert-manager writes. */
export const tlsSecretName = (c: SvcCluster): string => c.spec.tls?.secretName ?? `${c.metadata.name}-tls`;
/** The operator's CA of a `generated` cluster (ca.crt, ca.key). */
export const tlsCaSecretName = (cluster: string): string => `${cluster}-tls-ca`;
/** The cert-manager Certificate of a `certManager` cluster. */
export const certificateName = (cluster: string): string => `${cluster}-tls`;
export const driveClaimName = (drive: number): string => `data-${drive}`;

export function clusterDomain(c: SvcCluster, operatorDefault: string): string {
  return c.spec.clusterDomain ?? operatorDefault;
}

/** `<svc>.<ns>.svc.<domain>`: the DNS suffix of pods behind the headless Service. */
export function headlessDomain(c: SvcCluster, domain: string): string {
  return `${headlessServiceName(c.metadata.name)}.${c.metadata.namespace ?? 'default'}.svc.${domain}`;
}

export function podHost(c: SvcCluster, pool: string, ordinal: number, domain: string): string {
  return `${podName(c.metadata.name, pool, ordinal)}.${headlessDomain(c, domain)}`;
}

/** Labels on every child; never copied from the SvcCluster's own labels (GitOps tracking labels must not leak). */
export function clusterLabels(cluster: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'svc',
    'app.kubernetes.io/instance': cluster,
    'app.kubernetes.io/managed-by': 'svc-operator',
    'app.kubernetes.io/component': 'storage',
    [LABEL_CLUSTER]: cluster,
  };
}

export function poolLabels(cluster: string, pool: string): Record<string, string> {
  return { ...clusterLabels(cluster), [LABEL_POOL]: pool };
}

/** Selector labels: a stable subset (selectors of StatefulSets are immutable). */
export function poolSelector(cluster: string, pool: string): Record<string, string> {
  return { [LABEL_CLUSTER]: cluster, [LABEL_POOL]: pool };
}

export function clusterSelector(cluster: string): Record<string, string> {
  return { [LABEL_CLUSTER]: cluster };
}

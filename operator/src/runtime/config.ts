/** Operator settings from the environment (Helm values map onto these). Pure. */
import { DEFAULT_CLUSTER_DOMAIN } from '../topology/names.ts';

export interface OperatorConfig {
  /** Watched namespace; undefined watches every namespace. */
  readonly namespace: string | undefined;
  readonly clusterDomain: string;
  readonly leaderElection: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly pollMs: number;
  readonly idleMs: number;
  readonly stalledMs: number;
  readonly concurrency: number;
  readonly probeAddress: { host: string; port: number } | undefined;
  readonly logLevel: string;
  readonly otlpLogEndpoint: string | undefined;
  readonly serviceName: string;
  /** Refuse to start when the installed CRD's schema revision differs. */
  readonly checkCrd: boolean;
}

export const OPERATOR_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_OPERATOR_NAMESPACE', 'namespace to watch (default: every namespace)'],
  ['SVC_OPERATOR_CLUSTER_DOMAIN', `cluster DNS domain (default ${DEFAULT_CLUSTER_DOMAIN}); spec.clusterDomain overrides it per cluster`],
  ['SVC_OPERATOR_LEADER_ELECTION', 'true (default) elects one active replica through a Lease'],
  ['SVC_OPERATOR_LEASE_NAMESPACE', 'namespace of the Lease (default POD_NAMESPACE, else default)'],
  ['SVC_OPERATOR_LEASE_NAME', 'name of the Lease (default svc-operator)'],
  ['SVC_OPERATOR_POLL_SECONDS', 'look again this often while an operation runs (default 10)'],
  ['SVC_OPERATOR_RESYNC_SECONDS', 'look at every cluster at least this often (default 300)'],
  ['SVC_OPERATOR_CONCURRENCY', 'clusters reconciled in parallel (default 4)'],
  ['SVC_OPERATOR_PROBE_ADDRESS', 'health listener for /healthz and /readyz (default :8081, "off" disables)'],
  ['SVC_OPERATOR_CHECK_CRD', 'false skips the installed-CRD revision check at start'],
  ['SVC_OBS_LOGGER_LEVEL', 'log level (default info)'],
  ['SVC_OBS_ENDPOINT, SVC_OBS_LOG_ENDPOINT', 'OTLP/HTTP endpoint; logs are exported to <endpoint>/v1/logs (or the log endpoint as given)'],
  ['SVC_OBS_SERVICE_NAME', 'service.name of exported logs (default svc-operator)'],
];

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number): number {
  const v = env[name];
  if (v === undefined || v.trim() === '') return dflt;
  if (!/^[0-9]+$/.test(v.trim()) || Number(v) < min) throw new Error(`${name}: expected an integer >= ${min}, got "${v}"`);
  return Number(v);
}

function bool(env: NodeJS.ProcessEnv, name: string, dflt: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (v === undefined || v === '') return dflt;
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new Error(`${name}: expected true or false, got "${env[name]}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv, hostname: string): OperatorConfig {
  const probe = env['SVC_OPERATOR_PROBE_ADDRESS'] ?? ':8081';
  let probeAddress: OperatorConfig['probeAddress'];
  if (probe !== 'off') {
    const m = /^([^:]*):([0-9]{1,5})$/.exec(probe);
    if (!m) throw new Error(`SVC_OPERATOR_PROBE_ADDRESS: expected host:port or :port, got "${probe}"`);
    probeAddress = { host: m[1] || '0.0.0.0', port: Number(m[2]) };
  }
  const base = env['SVC_OBS_ENDPOINT']?.replace(/\/+$/, '');
  return {
    namespace: env['SVC_OPERATOR_NAMESPACE'] || undefined,
    clusterDomain: env['SVC_OPERATOR_CLUSTER_DOMAIN'] || 'cluster.local',
    leaderElection: bool(env, 'SVC_OPERATOR_LEADER_ELECTION', true),
    leaseNamespace: env['SVC_OPERATOR_LEASE_NAMESPACE'] || env['POD_NAMESPACE'] || 'default',
    leaseName: env['SVC_OPERATOR_LEASE_NAME'] || 'svc-operator',
    // The pod's name (downward API) names the lease holder; the host name where it is not set.
    identity: `${env['POD_NAME'] || hostname}_${process.pid}`,
    pollMs: int(env, 'SVC_OPERATOR_POLL_SECONDS', 10, 1) * 1000,
    idleMs: int(env, 'SVC_OPERATOR_RESYNC_SECONDS', 300, 5) * 1000,
    stalledMs: 60_000,
    concurrency: int(env, 'SVC_OPERATOR_CONCURRENCY', 4, 1),
    probeAddress,
    logLevel: env['SVC_OBS_LOGGER_LEVEL'] || 'info',
    otlpLogEndpoint: env['SVC_OBS_LOG_ENDPOINT'] || (base ? `${base}/v1/logs` : undefined),
    serviceName: env['SVC_OBS_SERVICE_NAME'] || 'svc-operator',
    checkCrd: bool(env, 'SVC_OPERATOR_CHECK_CRD', true),
  };
}

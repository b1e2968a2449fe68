/**
 * The admin API routes the console's cluster pages use (docs/admin-api.md),
 * as typed calls over the signed upstream. Answers pass through as the admin
 * API gives them; refusals become `UpstreamError` with its code and message.
 */
import type {
  BackgroundJobsReport,
  BucketGovernance,
  BucketGovernanceReport,
  ClusterSnapshot,
  MetricsHistoryReport,
  PoolStatus,
  RebalanceStatus,
  ReplacementRecoveryStatus,
  RuntimeCapabilities,
  ServerInfoMessage,
} from '../../object/admin/types.ts';
import { failure, send } from './call.ts';
import { UpstreamError } from './console-errors.ts';
import type { SessionCredentials } from './sessions.ts';
import { encodePath, type Upstream } from './upstream.ts';
import type { BucketQuotaReport, NotifyTargetReport } from '../../object/admin/services.ts';
import type { BackgroundHealView, BucketQuotaView, BucketReplicationView } from './wire.ts';
import type { TargetReport } from '../../replicator/replication-system.ts';
import type { ResyncRecord } from '../../replicator/resync.ts';

async function call(up: Upstream, cred: SessionCredentials, method: 'GET' | 'POST' | 'PUT', path: string, query: Record<string, string> = {}, body?: string): Promise<string> {
  const res = await send(up, cred, {
    method,
    path: `/svc/admin/${path}`,
    query,
    ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : method !== 'GET' ? { body: '' } : {}),
  });
  if (res.status >= 300) throw await failure(res);
  return res.body.text();
}

async function json<T>(up: Upstream, cred: SessionCredentials, method: 'GET' | 'POST', path: string, query: Record<string, string> = {}, body?: string): Promise<T> {
  const text = await call(up, cred, method, path, query, body);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError(502, 'InternalError', `the admin API answered ${path} with something that is not JSON`);
  }
}

const byId = (pool: number) => ({ pool: String(pool), 'by-id': 'true' });

export const adminCalls = {
  snapshot: (up: Upstream, c: SessionCredentials) => json<ClusterSnapshot>(up, c, 'GET', 'v4/cluster/snapshot'),
  capabilities: (up: Upstream, c: SessionCredentials) => json<RuntimeCapabilities>(up, c, 'GET', 'v4/runtime/capabilities'),
  info: (up: Upstream, c: SessionCredentials) => json<ServerInfoMessage>(up, c, 'GET', 'v3/info'),
  metricsHistory: (up: Upstream, c: SessionCredentials, minutes: number) => json<MetricsHistoryReport>(up, c, 'GET', 'v4/metrics/history', { minutes: String(minutes) }),
  notifyTargets: (up: Upstream, c: SessionCredentials) => json<NotifyTargetReport[]>(up, c, 'GET', 'v3/notify/targets'),
  poolsList: (up: Upstream, c: SessionCredentials) => json<PoolStatus[]>(up, c, 'GET', 'v3/pools/list'),
  rebalanceStatus: (up: Upstream, c: SessionCredentials) => json<RebalanceStatus>(up, c, 'GET', 'v3/rebalance/status'),
  backgroundHeal: (up: Upstream, c: SessionCredentials) => json<BackgroundHealView>(up, c, 'POST', 'v3/background-heal/status'),
  backgroundJobs: (up: Upstream, c: SessionCredentials) => json<BackgroundJobsReport>(up, c, 'GET', 'v4/background/jobs'),
  /** One bucket's object lock, default encryption and lifecycle rules. */
  governance: async (up: Upstream, c: SessionCredentials, bucket: string): Promise<BucketGovernance> => {
    const r = await json<BucketGovernanceReport>(up, c, 'GET', 'v3/bucket/governance', { bucket });
    const b = r.buckets.find((x) => x.name === bucket);
    if (b === undefined) throw new UpstreamError(502, 'InternalError', `the admin API's governance report does not name bucket ${bucket}`);
    return b;
  },
  replacement: (up: Upstream, c: SessionCredentials) => json<ReplacementRecoveryStatus>(up, c, 'GET', 'v4/heal/replacement-recovery'),
  /** A bucket's quota and what counts against it; `size` null when it has none. */
  quota: async (up: Upstream, c: SessionCredentials, bucket: string): Promise<BucketQuotaView> => {
    try {
      const q = await json<BucketQuotaReport>(up, c, 'GET', 'v3/get-bucket-quota', { bucket });
      return { bucket, size: q.size, usage: q.usage };
    } catch (err) {
      if (err instanceof UpstreamError && err.code === 'XSvcAdminNoSuchQuotaConfiguration') return { bucket, size: null, usage: null };
      throw err;
    }
  },
  /** A bucket's remote targets with their queues on this node, and its resyncs. */
  replication: async (up: Upstream, c: SessionCredentials, bucket: string): Promise<BucketReplicationView> => {
    const r = await json<{ bucket: string; targets: TargetReport[]; resync: ResyncRecord[] }[]>(up, c, 'GET', 'v3/replication/status', { bucket });
    const b = r.find((x) => x.bucket === bucket) ?? { bucket, targets: [], resync: [] };
    return {
      bucket,
      targets: b.targets.map((t) => ({
        arn: t.arn,
        endpoint: t.endpoint,
        secure: t.secure,
        targetBucket: t.targetBucket,
        online: t.online,
        queued: t.queued,
        failed: t.failed,
        completed: t.completed,
        lagMs: t.lagMs,
        ...(t.lastError !== undefined ? { lastError: t.lastError } : {}),
      })),
      resync: b.resync.map((x) => ({ arn: x.arn, state: x.state, scanned: x.scanned, queued: x.queued })),
    };
  },
  /** Sets (`size` > 0) or clears (null) a bucket's quota, with the body `mc quota` sends. */
  setQuota: (up: Upstream, c: SessionCredentials, bucket: string, size: number | null) =>
    call(up, c, 'PUT', 'v3/set-bucket-quota', { bucket }, JSON.stringify(size === null ? { size: 0 } : { size, quotatype: 'hard' })).then(() => undefined),
  decommission: (up: Upstream, c: SessionCredentials, pool: number) => call(up, c, 'POST', 'v3/pools/decommission', byId(pool)).then(() => undefined),
  cancel: (up: Upstream, c: SessionCredentials, pool: number) => call(up, c, 'POST', 'v3/pools/cancel', byId(pool)).then(() => undefined),
  clear: (up: Upstream, c: SessionCredentials, pool: number) => call(up, c, 'POST', 'v3/pools/clear', byId(pool)).then(() => undefined),
  rebalanceStart: (up: Upstream, c: SessionCredentials) => json<{ id: string }>(up, c, 'POST', 'v3/rebalance/start'),
  rebalanceStop: (up: Upstream, c: SessionCredentials) => call(up, c, 'POST', 'v3/rebalance/stop').then(() => undefined),
  /** Start (with `body`), status (`clientToken`) or stop (`clientToken`, `forceStop`) of a heal at bucket/prefix. */
  heal: (up: Upstream, c: SessionCredentials, bucket: string, prefix: string, query: Record<string, string>, body?: string) =>
    json<unknown>(up, c, 'POST', `v3/heal/${bucket === '' ? '' : encodePath(bucket, ...(prefix === '' ? [] : [prefix])).slice(1)}`, query, body),
};

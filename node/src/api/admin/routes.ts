/**
 * The admin API's routes: one table (method, versioned path, query rule,
 * permission), and the pure parse of a request into a typed endpoint. The
 * table is also what `docs/admin-api.md` is checked against.
 *
 * Prefixes: `/svc/admin/` and its alias `/compat/admin/` (SPEC Versioning 2).
 */
import { parseQuotaRequest } from '../../object/quota.ts';
import { SvcError } from '../../util/errors.ts';
import { safeDecode } from '../s3/headers.ts';
import { validateBucketName } from '../s3/validate.ts';
import type { AdminAction } from './authorize.ts';
import {
  HEAL_QUERY_KEYS,
  type HealLayout,
  type HealRequest,
  parseById,
  parseHealRequest,
  poolBatch,
  type QueryRule,
  requiredPool,
  resolvePool,
  validateQuery,
} from './params.ts';

/** `/minio/admin/` too: MinIO's own clients (`mc admin`, madmin-go) reach the routes they know there. */
export const ADMIN_PREFIXES = ['/svc/admin/', '/compat/admin/', '/minio/admin/'] as const;

export type AdminOp =
  | 'PoolsList'
  | 'PoolsStatus'
  | 'DecommissionStatus'
  | 'DecommissionStart'
  | 'DecommissionCancel'
  | 'DecommissionClear'
  | 'RebalanceStart'
  | 'RebalanceStatus'
  | 'RebalanceStop'
  | 'Heal'
  | 'BackgroundHealStatus'
  | 'ReplacementRecovery'
  | 'ClusterSnapshot'
  | 'RuntimeCapabilities'
  | 'ServerInfo'
  | 'BucketGovernance'
  | 'KmsStatus'
  | 'SetBucketQuota'
  | 'GetBucketQuota'
  | 'NotifyTargets'
  | 'NotifyTargetSet'
  | 'NotifyTargetRemove'
  | 'MetricsHistory'
  | 'RemoteTargetSet'
  | 'RemoteTargetList'
  | 'RemoteTargetRemove'
  | 'ReplicationStatus'
  | 'ReplicationResyncStart'
  | 'ReplicationResyncStatus'
  | 'ReplicationResyncCancel'
  | 'BackgroundJobs';

export interface AdminRoute {
  readonly op: AdminOp;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path after the prefix, e.g. `v3/pools/list`; the heal route matches `v3/heal/...`. */
  readonly path: string;
  readonly query: QueryRule;
  readonly action: AdminAction;
  /** Pool-scoped mutations run on the pool's leader (forwarded when it is another node). */
  readonly poolScoped: boolean;
  readonly summary: string;
}

const POOL_KEYS = ['pool', 'by-id'] as const;

export const ADMIN_ROUTES: readonly AdminRoute[] = [
  { op: 'PoolsList', method: 'GET', path: 'v3/pools/list', query: { kind: 'status', keys: [] }, action: 'admin:Decommission', poolScoped: false, summary: 'every pool and its status' },
  { op: 'PoolsStatus', method: 'GET', path: 'v3/pools/status', query: { kind: 'status', keys: POOL_KEYS }, action: 'admin:Decommission', poolScoped: false, summary: 'status of one pool' },
  { op: 'DecommissionStatus', method: 'GET', path: 'v3/decommission/status', query: { kind: 'status', keys: POOL_KEYS }, action: 'admin:Decommission', poolScoped: false, summary: 'decommission status of every pool, or of one' },
  { op: 'DecommissionStart', method: 'POST', path: 'v3/pools/decommission', query: { kind: 'mutation', keys: POOL_KEYS }, action: 'admin:Decommission', poolScoped: true, summary: 'queue the decommission of one or more pools' },
  { op: 'DecommissionCancel', method: 'POST', path: 'v3/pools/cancel', query: { kind: 'mutation', keys: POOL_KEYS }, action: 'admin:Decommission', poolScoped: true, summary: 'cancel a queued or active decommission' },
  { op: 'DecommissionClear', method: 'POST', path: 'v3/pools/clear', query: { kind: 'mutation', keys: POOL_KEYS }, action: 'admin:Decommission', poolScoped: true, summary: 'remove a failed or canceled decommission entry' },
  { op: 'RebalanceStart', method: 'POST', path: 'v3/rebalance/start', query: { kind: 'none' }, action: 'admin:Rebalance', poolScoped: false, summary: 'start a rebalance across the pools' },
  { op: 'RebalanceStatus', method: 'GET', path: 'v3/rebalance/status', query: { kind: 'status', keys: [] }, action: 'admin:Rebalance', poolScoped: false, summary: 'per-pool rebalance record' },
  { op: 'RebalanceStop', method: 'POST', path: 'v3/rebalance/stop', query: { kind: 'none' }, action: 'admin:Rebalance', poolScoped: false, summary: 'stop a running rebalance' },
  { op: 'Heal', method: 'POST', path: 'v3/heal/', query: { kind: 'mutation', keys: HEAL_QUERY_KEYS }, action: 'admin:Heal', poolScoped: false, summary: 'start, query or stop a heal of the cluster, a bucket or a prefix' },
  { op: 'BackgroundHealStatus', method: 'POST', path: 'v3/background-heal/status', query: { kind: 'status', keys: [] }, action: 'admin:Heal', poolScoped: false, summary: 'background heal state' },
  { op: 'ServerInfo', method: 'GET', path: 'v3/info', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'servers, drives and usage (MinIO admin/v3/info shape)' },
  { op: 'ReplacementRecovery', method: 'GET', path: 'v4/heal/replacement-recovery', query: { kind: 'status', keys: [] }, action: 'admin:Heal', poolScoped: false, summary: 'recovery state of replaced drives' },
  { op: 'ClusterSnapshot', method: 'GET', path: 'v4/cluster/snapshot', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'nodes, pools, sets and every drive' },
  { op: 'RuntimeCapabilities', method: 'GET', path: 'v4/runtime/capabilities', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'what this build and this layout can do' },
  { op: 'BucketGovernance', method: 'GET', path: 'v3/bucket/governance', query: { kind: 'status', keys: ['bucket'] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'per bucket: versioning, object lock, default encryption, lifecycle rules' },
  { op: 'KmsStatus', method: 'GET', path: 'v3/kms/status', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'the SSE key store: configured, ready, key ids' },
  { op: 'SetBucketQuota', method: 'PUT', path: 'v3/set-bucket-quota', query: { kind: 'mutation', keys: ['bucket'] }, action: 'admin:SetBucketQuota', poolScoped: false, summary: "set or clear a bucket's hard quota (body: madmin's BucketQuota JSON)" },
  { op: 'NotifyTargets', method: 'GET', path: 'v3/notify/targets', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: "this node's bucket notification targets: ARN, online, queued events, last error" },
  { op: 'NotifyTargetSet', method: 'PUT', path: 'v3/notify/target', query: { kind: 'mutation', keys: ['type', 'id'] }, action: 'admin:ConfigUpdate', poolScoped: false, summary: 'add or replace a notification target on every node, no restart (body: its settings as JSON)' },
  { op: 'NotifyTargetRemove', method: 'POST', path: 'v3/notify/target/remove', query: { kind: 'mutation', keys: ['type', 'id'] }, action: 'admin:ConfigUpdate', poolScoped: false, summary: 'remove a notification target set through the admin API' },
  { op: 'BackgroundJobs', method: 'GET', path: 'v4/background/jobs', query: { kind: 'status', keys: [] }, action: 'admin:ServerInfo', poolScoped: false, summary: "every node's background jobs from its supervisor: state, dependencies, workers" },
  { op: 'MetricsHistory', method: 'GET', path: 'v4/metrics/history', query: { kind: 'status', keys: ['minutes'] }, action: 'admin:ServerInfo', poolScoped: false, summary: 'the cluster\'s requests, errors, bytes, capacity, heal and scanner activity a minute at a time, for up to six hours' },
  { op: 'RemoteTargetSet', method: 'PUT', path: 'v3/set-remote-target', query: { kind: 'mutation', keys: ['bucket', 'update', 'creds', 'sync', 'proxy', 'healthcheck', 'bandwidth', 'path'] }, action: 'admin:SetBucketTarget', poolScoped: false, summary: "add or change a bucket's remote replication target (body: madmin's BucketTarget, encrypted with the caller's secret key); answers its ARN" },
  { op: 'RemoteTargetList', method: 'GET', path: 'v3/list-remote-targets', query: { kind: 'status', keys: ['bucket', 'type'] }, action: 'admin:GetBucketTarget', poolScoped: false, summary: "a bucket's remote targets (every bucket's without ?bucket), with health; no secrets" },
  { op: 'RemoteTargetRemove', method: 'DELETE', path: 'v3/remove-remote-target', query: { kind: 'mutation', keys: ['bucket', 'arn'] }, action: 'admin:SetBucketTarget', poolScoped: false, summary: 'remove a remote target no replication rule uses (204)' },
  { op: 'ReplicationStatus', method: 'GET', path: 'v3/replication/status', query: { kind: 'status', keys: ['bucket'] }, action: 'admin:GetBucketTarget', poolScoped: false, summary: "per bucket and target: queued and failed counts and bytes, lag, last error, health, resyncs (this node's queues)" },
  { op: 'ReplicationResyncStart', method: 'POST', path: 'v3/replication/resync/start', query: { kind: 'mutation', keys: ['bucket', 'arn'] }, action: 'admin:SetBucketTarget', poolScoped: false, summary: 'replicate the versions a bucket already holds to its targets (rules with ExistingObjectReplication)' },
  { op: 'ReplicationResyncStatus', method: 'GET', path: 'v3/replication/resync/status', query: { kind: 'status', keys: ['bucket'] }, action: 'admin:GetBucketTarget', poolScoped: false, summary: "a bucket's resyncs: state, versions scanned and queued" },
  { op: 'ReplicationResyncCancel', method: 'POST', path: 'v3/replication/resync/cancel', query: { kind: 'mutation', keys: ['bucket', 'arn'] }, action: 'admin:SetBucketTarget', poolScoped: false, summary: 'cancel a running resync (what it queued is still copied)' },
  { op: 'GetBucketQuota', method: 'GET', path: 'v3/get-bucket-quota', query: { kind: 'status', keys: ['bucket'] }, action: 'admin:GetBucketQuota', poolScoped: false, summary: "a bucket's quota and the bytes counted against it" },
];

/** A request parsed against the table with its parameters validated. */
export type AdminEndpoint =
  | { readonly op: 'PoolsList' | 'RebalanceStart' | 'RebalanceStatus' | 'RebalanceStop' | 'BackgroundHealStatus' | 'ReplacementRecovery' | 'ClusterSnapshot' | 'RuntimeCapabilities' | 'ServerInfo' | 'KmsStatus' | 'BackgroundJobs'; readonly route: AdminRoute }
  | { readonly op: 'BucketGovernance'; readonly route: AdminRoute; readonly bucket: string | undefined }
  | { readonly op: 'GetBucketQuota'; readonly route: AdminRoute; readonly bucket: string }
  | { readonly op: 'NotifyTargets'; readonly route: AdminRoute }
  | { readonly op: 'MetricsHistory'; readonly route: AdminRoute; readonly minutes: number }
  | { readonly op: 'NotifyTargetSet'; readonly route: AdminRoute; readonly type: string; readonly id: string; readonly settings: Record<string, string> }
  | { readonly op: 'NotifyTargetRemove'; readonly route: AdminRoute; readonly type: string; readonly id: string }
  | { readonly op: 'RemoteTargetSet'; readonly route: AdminRoute; readonly bucket: string; readonly update: boolean; readonly body: Buffer }
  | { readonly op: 'RemoteTargetList' | 'ReplicationStatus'; readonly route: AdminRoute; readonly bucket: string | undefined }
  | { readonly op: 'RemoteTargetRemove'; readonly route: AdminRoute; readonly bucket: string; readonly arn: string }
  | { readonly op: 'ReplicationResyncStatus'; readonly route: AdminRoute; readonly bucket: string }
  | { readonly op: 'ReplicationResyncStart' | 'ReplicationResyncCancel'; readonly route: AdminRoute; readonly bucket: string; readonly arn: string | undefined }
  | { readonly op: 'SetBucketQuota'; readonly route: AdminRoute; readonly bucket: string; readonly quota: { size: number } | undefined }
  | { readonly op: 'PoolsStatus' | 'DecommissionCancel' | 'DecommissionClear'; readonly route: AdminRoute; readonly pool: number }
  | { readonly op: 'DecommissionStatus'; readonly route: AdminRoute; readonly pool: number | undefined }
  | { readonly op: 'DecommissionStart'; readonly route: AdminRoute; readonly pools: readonly number[] }
  | { readonly op: 'Heal'; readonly route: AdminRoute; readonly heal: HealRequest };

/** Strips an admin prefix; undefined when `path` is not an admin path. */
export function adminSubpath(path: string): string | undefined {
  for (const p of ADMIN_PREFIXES) if (path.startsWith(p)) return path.slice(p.length);
  return undefined;
}

/** The API versions every route answers under: madmin-go asks for `/v4` today, older clients and SPEC's paths use `/v3`. */
export const ADMIN_API_VERSIONS = ['v3', 'v4'] as const;

/** A route's path without its version (`pools/list`). */
export function unversioned(path: string): string {
  return path.replace(/^v\d+\//, '');
}

/**
 * The route a method and sub-path address (no parameters looked at yet).
 * Every route answers under `/v3/` and `/v4/` alike. A fixed route wins over
 * the heal route's bucket/prefix path (`heal/replacement-recovery` is the
 * replacement route for GET, a heal of that bucket for POST).
 */
export function matchRoute(method: string, sub: string): { route: AdminRoute; rest: string } {
  const m = /^(v\d+)\/(.*)$/s.exec(sub);
  const version = m?.[1];
  const path = m?.[2] ?? '';
  const known = version !== undefined && (ADMIN_API_VERSIONS as readonly string[]).includes(version);
  const fixed = known ? ADMIN_ROUTES.filter((r) => r.op !== 'Heal' && unversioned(r.path) === path) : [];
  const isHeal = known && (path === 'heal' || path.startsWith('heal/'));
  const route = fixed.find((r) => r.method === method) ?? (isHeal && method === 'POST' ? ADMIN_ROUTES.find((r) => r.op === 'Heal') : undefined);
  if (route === undefined) {
    const methods = [...fixed.map((r) => r.method), ...(isHeal ? ['POST'] : [])];
    if (methods.length === 0) throw new SvcError('XSvcAdminNoSuchRoute', `no admin API route at "${sub}"; see docs/admin-api.md for the routes`);
    throw new SvcError('MethodNotAllowed', `${sub} takes ${[...new Set(methods)].join(' or ')}, not ${method}`);
  }
  return { route, rest: route.op === 'Heal' ? path.slice('heal'.length).replace(/^\//, '') : '' };
}

export interface EndpointLayout extends HealLayout {
  readonly cmdlines: readonly string[];
}

/**
 * Parses a routed request: applies the route's query rule and resolves pools.
 * `sub` is the raw (percent-encoded) path after the prefix; `pairs` the decoded query.
 */
export function parseAdminEndpoint(
  method: string,
  sub: string,
  pairs: readonly (readonly [string, string])[],
  body: Buffer,
  layout: EndpointLayout,
): AdminEndpoint {
  const { route, rest } = matchRoute(method, sub);
  const q = validateQuery(pairs, route.query);
  switch (route.op) {
    case 'PoolsStatus':
    case 'DecommissionCancel':
    case 'DecommissionClear':
      return { op: route.op, route, pool: requiredPool(q, layout.cmdlines) };
    case 'DecommissionStatus': {
      const expr = q.get('pool');
      const byId = parseById(q.get('by-id'));
      return { op: route.op, route, pool: expr === undefined ? undefined : resolvePool(expr, byId, layout.cmdlines) };
    }
    case 'DecommissionStart':
      return { op: route.op, route, pools: poolBatch(q, layout.cmdlines) };
    case 'Heal':
      return { op: route.op, route, heal: parseHealRequest(safeDecode(rest), q, body, layout) };
    case 'BucketGovernance': {
      const bucket = q.get('bucket');
      if (bucket !== undefined) validateBucketName(bucket);
      return { op: route.op, route, bucket };
    }
    case 'GetBucketQuota':
    case 'SetBucketQuota': {
      const bucket = q.get('bucket');
      if (bucket === undefined || bucket === '') throw new SvcError('XSvcAdminInvalidArgument', 'the bucket parameter is required: ?bucket=<name>');
      validateBucketName(bucket);
      return route.op === 'GetBucketQuota' ? { op: route.op, route, bucket } : { op: route.op, route, bucket, quota: parseQuotaRequest(body) };
    }
    case 'RemoteTargetSet':
    case 'RemoteTargetRemove':
    case 'ReplicationResyncStatus':
    case 'ReplicationResyncStart':
    case 'ReplicationResyncCancel': {
      const bucket = q.get('bucket');
      if (bucket === undefined || bucket === '') throw new SvcError('XSvcAdminInvalidArgument', 'the bucket parameter is required: ?bucket=<name>');
      validateBucketName(bucket);
      if (route.op === 'RemoteTargetSet') return { op: route.op, route, bucket, update: q.get('update') === 'true', body };
      if (route.op === 'ReplicationResyncStatus') return { op: route.op, route, bucket };
      const arn = q.get('arn');
      if (route.op === 'RemoteTargetRemove') {
        if (!arn) throw new SvcError('XSvcAdminInvalidArgument', 'the arn parameter is required: ?bucket=<name>&arn=<target ARN>');
        return { op: route.op, route, bucket, arn };
      }
      return { op: route.op, route, bucket, arn: arn === '' ? undefined : arn };
    }
    case 'RemoteTargetList':
    case 'ReplicationStatus': {
      const bucket = q.get('bucket');
      if (bucket !== undefined && bucket !== '') validateBucketName(bucket);
      return { op: route.op, route, bucket: bucket === '' ? undefined : bucket };
    }
    case 'NotifyTargetSet':
    case 'NotifyTargetRemove': {
      const type = q.get('type');
      const id = q.get('id');
      if (!type || !id) throw new SvcError('XSvcAdminInvalidArgument', 'the type and id parameters are required: ?type=webhook&id=<id>');
      if (route.op === 'NotifyTargetRemove') return { op: route.op, route, type, id };
      let settings: unknown;
      try {
        settings = JSON.parse(body.toString('utf8'));
      } catch {
        throw new SvcError('XSvcAdminInvalidArgument', 'the body must be the target settings as a JSON object of strings, e.g. {"endpoint":"https://..."}');
      }
      if (typeof settings !== 'object' || settings === null || Array.isArray(settings) || Object.values(settings).some((v) => typeof v !== 'string')) {
        throw new SvcError('XSvcAdminInvalidArgument', 'the body must be a JSON object whose values are strings');
      }
      return { op: route.op, route, type, id, settings: settings as Record<string, string> };
    }
    case 'MetricsHistory': {
      const raw = q.get('minutes') ?? '360';
      const minutes = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
      if (!(minutes >= 1 && minutes <= 360)) throw new SvcError('XSvcAdminInvalidArgument', `minutes must be a whole number from 1 to 360 (six hours), not ${JSON.stringify(raw)}`);
      return { op: route.op, route, minutes };
    }
    default:
      return { op: route.op, route };
  }
}

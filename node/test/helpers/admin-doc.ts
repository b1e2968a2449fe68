/**
 * `docs/admin-api.md`: one example request per route (`ROUTE_EXAMPLES`),
 * the renderer that writes the document from live answers
 * (`node/scripts/gen-admin-api-doc.ts`), and the parser the drift test
 * uses to compare each documented response with the live one.
 */
import { ADMIN_ROUTES, type AdminOp, type AdminRoute } from '../../src/api/admin/routes.ts';
import { rawRequest, signHeaders } from './sigv4-signer.ts';

export interface RouteExample {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  /** Query; `{pool0}` / `{pool1}` stand for the pools' command lines. */
  readonly query?: Record<string, string>;
  readonly body?: string;
  /** The status this build answers on an idle two-pool cluster. */
  readonly status: number;
  readonly note?: string;
}

/** The bucket the quota examples use (`prepareExamples` creates it). */
export const EXAMPLE_BUCKET = 'photos';

/** The scanner interval of the server the examples run on: its usage must have counted the example bucket. */
export const EXAMPLE_SERVER_ENV = { SVC_SCANNER_INTERVAL: '500ms' };

/**
 * What the examples need besides an idle two-pool cluster: the bucket the
 * quota routes name, counted by a scanner cycle (so server info shows it the
 * same way every time).
 */
export async function prepareExamples(url: string, creds: { accessKey: string; secretKey: string }): Promise<void> {
  const raw = { method: 'PUT', path: `/${EXAMPLE_BUCKET}`, query: {}, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: '' };
  const res = await rawRequest(url, raw, await signHeaders(url, creds, raw));
  if (res.status !== 200) throw new Error(`could not create the example bucket: ${res.status} ${res.body}`);
  const end = Date.now() + 30_000;
  for (;;) {
    const info = { method: 'GET', path: '/svc/admin/v3/info', query: {}, headers: { 'x-amz-content-sha256': EMPTY_SHA256 }, body: '' };
    const r = await rawRequest(url, info, await signHeaders(url, creds, info));
    const usage = (JSON.parse(r.body) as { dataUsage?: { buckets: { name: string }[] } }).dataUsage;
    if (usage?.buckets.some((b) => b.name === EXAMPLE_BUCKET)) return;
    if (Date.now() > end) throw new Error('the scanner did not count the example bucket within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export const ROUTE_EXAMPLES: Record<AdminOp, RouteExample> = {
  PoolsList: { method: 'GET', path: 'v3/pools/list', status: 200 },
  PoolsStatus: { method: 'GET', path: 'v3/pools/status', query: { pool: '{pool0}' }, status: 200 },
  DecommissionStatus: { method: 'GET', path: 'v3/decommission/status', status: 200 },
  DecommissionStart: {
    method: 'POST',
    path: 'v3/pools/decommission',
    query: { pool: '0,1', 'by-id': 'true' },
    status: 400,
    note: 'A valid batch answers an empty 200 at once: its entries are persisted `queued` in `pool.bin`, the pools close to new objects on every node, and the drain runs in the background on the leader of the pool at the head of the queue (follow it with `decommission/status`). The example shows one of the batch refusals: draining every pool. Every refusal (unknown, duplicate, queued, active or completed targets, failed or canceled targets not cleared, every pool, capacity, rebalance running) changes nothing.',
  },
  DecommissionCancel: { method: 'POST', path: 'v3/pools/cancel', query: { pool: '1', 'by-id': 'true' }, status: 400, note: 'Nothing to cancel on an idle pool.' },
  DecommissionClear: { method: 'POST', path: 'v3/pools/clear', query: { pool: '1', 'by-id': 'true' }, status: 200, note: 'Empty 200: a pool without an entry has nothing to clear; a failed or canceled entry is removed.' },
  RebalanceStart: {
    method: 'POST',
    path: 'v3/rebalance/start',
    status: 200,
    note: 'The rebalance is persisted in `rebalance.bin`, fenced and started on every node before the answer; a node that does not acknowledge rolls it back (`XSvcRebalanceStartFailed`, naming the nodes). Here the two pools are equally full, so it completes at once having moved nothing, and its status says why.',
  },
  RebalanceStatus: { method: 'GET', path: 'v3/rebalance/status', status: 200 },
  RebalanceStop: { method: 'POST', path: 'v3/rebalance/stop', status: 200, note: 'Empty 200; with no rebalance running nothing changes.' },
  Heal: {
    method: 'POST',
    path: 'v3/heal/',
    query: { forceStart: 'true' },
    body: '{"recursive":true,"dryRun":true,"scanMode":2}',
    status: 200,
    note: 'A start answers `HealStartSuccess`; follow it with `?clientToken=<token>` (status: `HealTaskStatus`, popping the results since the previous call) and stop it with `?clientToken=<token>&forceStop=true`. `forceStart` stops a heal of the same path first.',
  },
  BackgroundHealStatus: { method: 'POST', path: 'v3/background-heal/status', status: 200 },
  ServerInfo: { method: 'GET', path: 'v3/info', status: 200 },
  ReplacementRecovery: { method: 'GET', path: 'v4/heal/replacement-recovery', status: 200 },
  ClusterSnapshot: { method: 'GET', path: 'v4/cluster/snapshot', status: 200 },
  RuntimeCapabilities: { method: 'GET', path: 'v4/runtime/capabilities', status: 200 },
  BucketGovernance: {
    method: 'GET',
    path: 'v3/bucket/governance',
    status: 200,
    note: 'Every bucket, or `?bucket=<name>` for one (`NoSuchBucket` when absent). Per bucket: `versioning`, `objectLock` (`enabled`, `defaultRetention`), `encryption` (absent: none), `lifecycle.rules` (absent: none). `svc bucket info` shows it.',
  },
  KmsStatus: {
    method: 'GET',
    path: 'v3/kms/status',
    status: 200,
    note: 'Without SVC_KMS_SECRET_KEY / SVC_KMS_SECRET_KEY_FILE: `{"configured":false}`. Configured: `ready`, `source` (`env` or `file`), `file`, `defaultKeyId`, `keyIds`, `loadedAt`, `lastError` (never key material). `svc admin kms` shows it.',
  },
  SetBucketQuota: {
    method: 'PUT',
    path: 'v3/set-bucket-quota',
    query: { bucket: EXAMPLE_BUCKET },
    body: '{"size":1073741824,"quotatype":"hard"}',
    status: 200,
    note: 'The body is madmin\'s `BucketQuota` (what `mc quota set ALIAS/BUCKET --size 1GiB` sends; `quota` is read as `size` when `size` is 0). Size 0 clears the quota (`mc quota clear`). `rate` and `requests` other than 0 are `NotImplemented`; `quotatype` other than `hard` is `InvalidArgument`; a missing bucket is `NoSuchBucket`. Empty 200. Writes that would take the bucket over its quota are refused with `XSvcAdminBucketQuotaExceeded` (S3 XML, 400). `svc admin bucket quota set|clear` calls it.',
  },
  GetBucketQuota: {
    method: 'GET',
    path: 'v3/get-bucket-quota',
    query: { bucket: EXAMPLE_BUCKET },
    status: 200,
    note: 'madmin\'s `BucketQuota` plus `bucket` and `usage`: the bytes this node counts against the quota now (the scanner\'s usage of the bucket, writes in flight here, writes stored here that no scan has seen yet). No quota: `XSvcAdminNoSuchQuotaConfiguration` (404). `svc admin bucket quota info` shows it.',
  },
  MetricsHistory: {
    method: 'GET',
    path: 'v4/metrics/history',
    query: { minutes: '1' },
    status: 200,
    note: "Every node's own measurements, one point a minute (`stepSeconds`), oldest first from `start` (Unix ms of the first minute); the last point is the minute in progress. `counters` are sums over each minute: `s3Requests`, `s3ClientErrors` (4xx), `s3ServerErrors` (5xx), `s3BytesIn` and `s3BytesOut` (bodies as declared by Content-Length, the decoded length of aws-chunked uploads), `healTasks` and `healFailures` (heal tasks finished), `scannerObjects` (objects the scanner visited); `gauges` are the minute's last sample, summed over the nodes that sampled it (`null`: none did): `capacityUsedBytes` and `capacityTotalBytes` (raw, each node's local drives, each file system once). `nodes` names every node and whether it answered (a node that did not adds nothing). `minutes`: 1 to 360 (default 360, six hours). Points live in each node's memory: a restarted node starts again. The console's Metrics page draws them.",
  },
  BackgroundJobs: {
    method: 'GET',
    path: 'v4/background/jobs',
    status: 200,
    note: "Every node's long-running jobs as its supervisor (`docs/architecture.md`, \"Background supervisor\") lists them, in registration order: `name`, `description`, `after` (the jobs it starts after and stops before), `state` (`not started`; else its workers' busiest state: `running`, `stopping`, `paused`, `failed`, `idle`, `completed`, `stopped`; a job with no worker running now is `idle`), `workers` (each worker's `name`, `state`, `steps`, `throttledMs`, `tranquility`, `persistErrors`, `startedAt`/`endedAt` (Unix ms), `lastError`, and its own `progress`) and `lastError` (why it could not start or stop). `nodes` names every node and whether it answered (a node that did not is listed with no jobs). The console's Cluster page shows this node's list.",
  },
  NotifyTargets: {
    method: 'GET',
    path: 'v3/notify/targets',
    status: 200,
    note: "This node's bucket notification targets (`docs/notifications.md`), reachability checked now: `arn`, `id`, `type`, `source` (`env`: SVC_NOTIFY_* variables, `admin`: set through this API), `online`, `queued` (events waiting in this node's queue), `queueDir`, `queueLimit`, `delivered`, `failedAttempts`, `lastError`, `lastErrorAt`, `lastDeliveredAt` (Unix ms). An array; empty without targets. `svc admin notify list` and `svc admin info` show it.",
  },
  NotifyTargetSet: {
    method: 'PUT',
    path: 'v3/notify/target',
    query: { type: 'webhook', id: 'docs' },
    body: '{"endpoint":"ftp://not-http.example"}',
    status: 400,
    note: 'The body holds the settings by their lower-case names (those of `SVC_NOTIFY_<TYPE>_<KEY>`: `{"endpoint":"https://...","auth_token":"..."}`; `enable` defaults to on). A valid target answers an empty 200 once it is stored (`config/notify/targets.json` in `.svc.sys`), running on this node and its peers told (every node re-reads it within 30 s in any case); a target of the same type and id is replaced. The example shows a refusal: `XSvcNotifyTargetInvalid` (400) for an endpoint that is not http(s); unknown settings, missing required ones and targets configured by SVC_NOTIFY_* variables are refused the same way, and nothing changes. `svc admin notify set` calls it.',
  },
  NotifyTargetRemove: {
    method: 'POST',
    path: 'v3/notify/target/remove',
    query: { type: 'webhook', id: 'docs' },
    status: 404,
    note: "Removes a target set through this API on every node (its queue directory stays with what it held); empty 200. A target that was not set here is `XSvcNotifyNoSuchTarget` (404, the example); one configured by SVC_NOTIFY_* variables is `XSvcNotifyTargetInvalid`. `svc admin notify remove` calls it.",
  },
  RemoteTargetSet: {
    method: 'PUT',
    path: 'v3/set-remote-target',
    query: { bucket: EXAMPLE_BUCKET },
    body: '{"endpoint":"127.0.0.1:1","targetbucket":"photos-dr","credentials":{"accessKey":"drkey","secretKey":"drsecret"},"secure":false,"type":"replication"}',
    status: 400,
    note: "The body is madmin's `BucketTarget` encrypted with the caller's secret key (madmin `EncryptData`, what `mc admin bucket remote add` and `mc replicate add` send); plain JSON is accepted too (the example). The answer is the target's ARN as a JSON string (`\"arn:svc:replication::<id>:<remote bucket>\"`). Before anything is stored the source bucket must have versioning on (the example's bucket has not: `InvalidRequest`), the remote must answer a HEAD of its bucket with the credential (`XSvcReplicationTargetUnreachable`, 503) and have versioning on (`XSvcReplicationTargetNotVersioned`). `update=true` changes the target named by the body's `arn` (or the one with the same endpoint and bucket). Synchronous replication is refused. `svc replicate add` calls it.",
  },
  RemoteTargetList: {
    method: 'GET',
    path: 'v3/list-remote-targets',
    query: { bucket: EXAMPLE_BUCKET, type: 'replication' },
    status: 200,
    note: "An array of madmin `BucketTarget`s (without the secret key), with this node's view of their health: `isOnline`, `lastOnline`, `totalDowntime` and `latency` (nanoseconds). Without `bucket`, every bucket's. `svc replicate ls` shows it.",
  },
  RemoteTargetRemove: {
    method: 'DELETE',
    path: 'v3/remove-remote-target',
    query: { bucket: EXAMPLE_BUCKET, arn: 'arn:svc:replication::0123456789abcdef:photos-dr' },
    status: 404,
    note: 'Empty 204 (what madmin expects). A target a replication rule still names is `XSvcReplicationTargetInUse` (409: remove the rule first); an unknown one `XSvcReplicationNoSuchTarget` (404, the example). `svc replicate rm` calls it after removing the rule.',
  },
  ReplicationStatus: {
    method: 'GET',
    path: 'v3/replication/status',
    status: 200,
    note: "Per bucket with targets (`?bucket=` for one): `targets[]` with `arn`, `endpoint`, `targetBucket`, `online`, `lagMs` (since the oldest change still queued), `queued` and `failed` (`count`, `bytes`; failed copies are retried), `completed` since the node started, `failedAttempts`, `lastError`, `lastErrorAt`, `latencyMs`, `downtimeMs`, `bandwidthLimit`, `svcTarget`; and `resync[]` (state, `scanned`, `queued`). The queues are per node: each node reports the copies of the writes it took. `svc replicate status` shows it.",
  },
  ReplicationResyncStart: {
    method: 'POST',
    path: 'v3/replication/resync/start',
    query: { bucket: EXAMPLE_BUCKET },
    status: 400,
    note: 'Starts a resync worker per target (or `arn=` one): it walks the bucket and queues every version and delete marker a rule with ExistingObjectReplication sends there that is not COMPLETED. Answers the resync records. A bucket without replication (the example), a target no rule names, no rule with ExistingObjectReplication, or one already running is `XSvcReplicationResyncInvalid`. `svc replicate resync start` calls it.',
  },
  ReplicationResyncStatus: {
    method: 'GET',
    path: 'v3/replication/resync/status',
    query: { bucket: EXAMPLE_BUCKET },
    status: 200,
    note: 'The resync record of each target: `state` (`running`, `completed`, `canceled`, `failed`), `node`, `startedAt`, `endedAt`, `scanned`, `queued`, `queuedBytes`, `lastError`. An empty array when none ran.',
  },
  ReplicationResyncCancel: {
    method: 'POST',
    path: 'v3/replication/resync/cancel',
    query: { bucket: EXAMPLE_BUCKET },
    status: 400,
    note: 'Stops a running resync (what it already queued is still copied); answers the records. Nothing running is `XSvcReplicationResyncInvalid` (the example).',
  },

};

export function exampleQuery(e: RouteExample, pools: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(e.query ?? {}).map(([k, v]) => [k, v.replace(/\{pool(\d)\}/g, (_, i: string) => pools[Number(i)]!)]));
}

/** Replaces what differs between machines and runs (temp paths, ports) with stable stand-ins. */
export function sanitize(text: string, base: string, port: number): string {
  return text.replaceAll(base, '/mnt').replaceAll(`:${port}`, ':9000');
}

/** Keeps the first two elements of every array (a documented example, not a dump). */
export function trimArrays(v: unknown): unknown {
  if (Array.isArray(v)) return v.slice(0, 2).map(trimArrays);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, trimArrays(x)]));
  return v;
}

function heading(r: AdminRoute): string {
  return `### ${r.method} /svc/admin/${r.path}`;
}

function queryText(r: AdminRoute): string {
  switch (r.query.kind) {
    case 'none':
      return 'no query string at all (any parameter is refused)';
    case 'status':
      return r.query.keys.length === 0 ? 'none (unknown parameters are ignored)' : `${r.query.keys.map((k) => `\`${k}\``).join(', ')} (unknown parameters are ignored)`;
    case 'mutation':
      return `${r.query.keys.map((k) => `\`${k}\``).join(', ')}; unknown or repeated parameters are refused`;
  }
}

export interface LiveAnswer {
  readonly op: AdminOp;
  readonly target: string;
  readonly status: number;
  readonly body: string;
}

export function renderDoc(intro: string, answers: readonly LiveAnswer[]): string {
  const parts = [intro.trimEnd(), ''];
  for (const r of ADMIN_ROUTES) {
    const a = answers.find((x) => x.op === r.op)!;
    const e = ROUTE_EXAMPLES[r.op];
    parts.push(heading(r), '');
    parts.push(`${r.summary[0]!.toUpperCase()}${r.summary.slice(1)}. Permission \`${r.action}\`. Query: ${queryText(r)}.${r.poolScoped ? ' Runs on the pool leader (forwarded).' : ''}`, '');
    if (e.note) parts.push(e.note, '');
    parts.push('```http', `${e.method} ${a.target}${e.body ? `\n\n${e.body}` : ''}`, '```', '');
    parts.push(`Response \`${a.status}\`${a.body === '' ? ' (empty body)' : ''}:`, '');
    if (a.body !== '') parts.push('```json', JSON.stringify(trimArrays(JSON.parse(a.body)), null, 2), '```', '');
  }
  return `${parts.join('\n').trimEnd()}\n`;
}

/** The documented response of each route: status and parsed JSON body (undefined when empty). */
export function parseDoc(doc: string): Map<string, { status: number; body: unknown }> {
  const out = new Map<string, { status: number; body: unknown }>();
  const sections = doc.split(/^### /m).slice(1);
  for (const s of sections) {
    const head = s.slice(0, s.indexOf('\n')).trim();
    const m = /Response `(\d{3})`/.exec(s);
    if (!m) continue;
    const after = s.slice(m.index);
    const block = /```json\n([\s\S]*?)\n```/.exec(after);
    out.set(head, { status: Number(m[1]), body: block ? (JSON.parse(block[1]!) as unknown) : undefined });
  }
  return out;
}

export function docHeading(r: AdminRoute): string {
  return heading(r).slice(4);
}

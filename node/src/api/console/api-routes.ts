/**
 * The console API (`/svc/console/api/...`): one table of routes, each a
 * method, a path pattern and a handler that calls the node's S3 or admin API
 * with the session's keys (`s3-calls.ts`, `admin-calls.ts`) and answers JSON
 * in the shapes of `wire.ts` (downloads stream the object).
 *
 * Every route but signing in needs a session; every route that changes
 * something (POST, PUT, DELETE) also needs the session's CSRF token and a
 * same-origin request. Those checks happen in `console-handler.ts` before a
 * handler runs; the table says which routes are open (`auth: 'none'`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ClusterSnapshot, PoolStatus, RebalanceStatus, RuntimeCapabilities, ServerInfoMessage } from '../../object/admin/types.ts';
import type { Clock } from '../../util/clock.ts';
import type { ConsoleConfig } from '../../util/console-config.ts';
import { parseByteSize } from '../../util/bytes.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { HealthSource } from '../health/health-handler.ts';
import { validateBucketName } from '../s3/validate.ts';
import { adminCalls } from './admin-calls.ts';
import { attachmentDisposition, DOWNLOAD_HEADERS } from './assets.ts';
import { BUCKET_SETTINGS, type BucketSettingKind, deleteSetting, getSetting, putSetting } from './bucket-settings.ts';
import { iamCalls } from './iam-calls.ts';
import { type AlertInputs, evaluateAlerts, type Observations } from './alerts.ts';
import { capacityView, nodeHealth, nodeViews, poolViews, readinessView, rebalanceActions } from './cluster-views.ts';
import { toConsoleError, UpstreamError } from './console-errors.ts';
import * as s3 from './s3-calls.ts';
import { folderSelection, MAX_ZIP_KEYS, streamZip, type ZipTickets } from './zip.ts';
import type { Session, SessionCredentials } from './sessions.ts';
import { encodePath, type Upstream, upstreamHeader } from './upstream.ts';
import type {
  BucketDetails,
  BucketUsageView,
  BulkDeleteResult,
  ObjectTag,
  BucketQuotaView,
  HealCallResult,
  HealingResponse,
  HealStartRequest,
  OverviewResponse,
  PoolsResponse,
  ShareLink,
  ShareRequest,
  UploadResult,
  ZipTicket,
} from './wire.ts';

export interface ConsoleApiDeps {
  readonly upstream: Upstream;
  readonly health: HealthSource;
  readonly observations: Observations;
  readonly config: ConsoleConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly version: string;
  /** Port of the S3 listener (for share links when SVC_SERVER_URL is unset). */
  readonly s3Port: () => number | undefined;
  /** The S3 listener serves TLS (share links then use https). */
  readonly s3Tls: boolean;
  /** One-time tickets of ZIP downloads (a selection posted, then downloaded as a link). */
  readonly zipTickets: ZipTickets;
  /** This node's certificates and the expiry warning window, when it serves TLS (the certificate alert). */
  readonly certificates: () => { readonly list: readonly { readonly file: string; readonly kind: 'server' | 'ca'; readonly notAfter: number }[]; readonly warnBeforeMs: number } | undefined;
}

export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The signed-in session (routes with `auth: 'none'` get none). */
  readonly session: Session | undefined;
  readonly deps: ConsoleApiDeps;
  /** The browser used HTTPS; the host it used. */
  readonly secure: boolean;
  readonly host: string;
}

/** A handler's answer: a JSON body (200), `undefined` (204), or `STREAMED` (it wrote the response itself). */
export const STREAMED = Symbol('streamed');
export type RouteResult = unknown;

export interface ApiRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Segments after `/svc/console/api/`; `:name` captures one. */
  readonly pattern: string;
  readonly auth: 'session' | 'none';
  readonly handler: (ctx: RouteContext) => Promise<RouteResult>;
}

const MAX_JSON_BODY = 64 * 1024;

/** Reads a small JSON request body. */
export async function readJson<T>(req: IncomingMessage): Promise<T> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new SvcError('InvalidRequest', 'send the request as application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_JSON_BODY) throw new SvcError('InvalidRequest', 'the request body is too large');
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
  } catch {
    throw new SvcError('InvalidRequest', 'the request body is not valid JSON');
  }
}

const cred = (ctx: RouteContext): SessionCredentials => ctx.session!.credentials;

function bucketParam(ctx: RouteContext): string {
  const b = ctx.params.bucket!;
  validateBucketName(b);
  return b;
}

function keyParam(ctx: RouteContext, name = 'key'): string {
  const k = ctx.query.get(name) ?? '';
  if (k === '') throw new SvcError('InvalidArgument', 'no object key given');
  if (Buffer.byteLength(k) > 1024) throw new SvcError('KeyTooLongError', 'object keys are at most 1024 bytes');
  return k;
}

function optional(ctx: RouteContext, name: string): string | undefined {
  const v = ctx.query.get(name);
  return v === null || v === '' ? undefined : v;
}

/** The object a route is about: the bucket, `key` and an optional `versionId`. */
function objectParams(ctx: RouteContext): { bucket: string; key: string; versionId: string | undefined } {
  return { bucket: bucketParam(ctx), key: keyParam(ctx), versionId: optional(ctx, 'versionId') };
}

function intParam(v: string | undefined, name: string, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^[0-9]{1,6}$/.test(v) || Number(v) < min || Number(v) > max) throw new SvcError('InvalidArgument', `${name} must be a whole number from ${min} to ${max}`);
  return Number(v);
}

/** `limit` of a listing page: 1 to 1000, 100 when not given. */
const limitParam = (ctx: RouteContext): number => intParam(optional(ctx, 'limit'), 'limit', 1, 1000, 100);

/** A body's `{"<name>": true|false}`. */
function boolField(body: Readonly<Record<string, unknown>>, name: string): boolean {
  const v = body[name];
  if (typeof v !== 'boolean') throw new SvcError('InvalidArgument', `say {"${name}": true} or {"${name}": false}`);
  return v;
}

/** Settles every promise; a failure is kept as its message. */
async function settle<T>(p: Promise<T>): Promise<{ value: T; error: null } | { value: undefined; error: string }> {
  try {
    return { value: await p, error: null };
  } catch (err) {
    return { value: undefined, error: toConsoleError(err).body.message };
  }
}

// ---- cluster

async function overview(ctx: RouteContext): Promise<OverviewResponse> {
  const { upstream: up, observations: obs, clock } = ctx.deps;
  const c = cred(ctx);
  const [snap, caps, info, bg, targets] = await Promise.all([
    adminCalls.snapshot(up, c),
    adminCalls.capabilities(up, c),
    settle(adminCalls.info(up, c)),
    settle(adminCalls.backgroundHeal(up, c)),
    settle(adminCalls.notifyTargets(up, c)),
  ]);
  const now = clock.now();
  const readiness = readinessView(ctx.deps.health.report('ready'));
  obs.readiness(readiness.ready, now);
  const nodes = nodeViews(snap, info.value as ServerInfoMessage | undefined);
  for (const n of nodes) if (n.uptimeSeconds !== null) obs.uptime(n.id, n.uptimeSeconds, now);
  if (bg.value !== undefined) obs.heal({ at: now, active: bg.value.healActiveTasks, queued: bg.value.healQueueLength });
  const scanner = bg.value?.scanner;
  // the scanner could run as long as the longest-running node has been up
  const upFor = Math.max(0, ...nodes.map((n) => (n.uptimeSeconds ?? 0) * 1000));
  const capacity = capacityView(snap, ctx.deps.config.capacityAlert);
  return {
    generatedAt: new Date(now).toISOString(),
    ...(targets.value !== undefined
      ? { notifications: targets.value.map((t) => ({ arn: t.arn, online: t.online, queued: t.queued, queueLimit: t.queueLimit, delivered: t.delivered, ...(t.lastError !== undefined ? { lastError: t.lastError } : {}) })) }
      : {}),
    node: snap.node,
    deploymentId: snap.deploymentId,
    version: ctx.deps.version,
    health: nodeHealth(readiness, snap),
    readiness,
    nodes,
    drives: { total: snap.summary.drives, online: snap.summary.drivesOnline, offline: snap.summary.drivesOffline, healing: snap.summary.drivesHealing },
    capacity,
    alerts: evaluateAlerts({
      now,
      ready: readiness.ready,
      notReadySince: obs.notReadySince,
      restarts: obs.restarts,
      uptimes: nodes.map((n) => ({ node: n.id, seconds: n.uptimeSeconds })),
      healAvailable: caps.heal.backgroundHeal,
      healSamples: obs.healSamples,
      scanner:
        caps.heal.scanner && scanner !== undefined
          ? { available: true, lastCycleAt: /^0001/.test(scanner.lastCycleAt) ? undefined : Date.parse(scanner.lastCycleAt), runningSinceMs: upFor }
          : { available: false },
      rawUsed: capacity.rawUsed,
      rawTotal: capacity.rawTotal,
      capacityFraction: capacity.alertFraction,
      certificates: certificatesOf(ctx.deps),
      ...(snap.nodes.length > 1
        ? { clockSkews: snap.nodes.flatMap((n) => (n.self || n.clockSkewMs === undefined || n.clockSkewMs === null ? [] : [{ node: n.id, skewMs: n.clockSkewMs }])) }
        : {}),
    }),
    capabilities: caps,
  };
}

function certificatesOf(deps: ConsoleApiDeps): AlertInputs['certificates'] {
  const c = deps.certificates();
  return c === undefined ? { available: false } : { available: true, ...c };
}

async function pools(ctx: RouteContext): Promise<PoolsResponse> {
  const { upstream: up, clock } = ctx.deps;
  const c = cred(ctx);
  const [snap, caps, list, rebalance, info] = await Promise.all([
    adminCalls.snapshot(up, c),
    adminCalls.capabilities(up, c),
    settle(adminCalls.poolsList(up, c)),
    settle(adminCalls.rebalanceStatus(up, c)),
    settle(adminCalls.info(up, c)),
  ]);
  const statuses = list.value as PoolStatus[] | undefined;
  const reb = (rebalance.value as RebalanceStatus | undefined) ?? null;
  return {
    generatedAt: new Date(clock.now()).toISOString(),
    pools: poolViews(snap as ClusterSnapshot, statuses, caps as RuntimeCapabilities, reb, info.value as ServerInfoMessage | undefined),
    recordsError: list.error,
    rebalance: reb,
    rebalanceActions: rebalanceActions(caps, reb, statuses),
    capabilities: caps,
  };
}

function poolParam(ctx: RouteContext): number {
  return intParam(ctx.params.pool, 'pool', 0, 9999, 0);
}

async function healing(ctx: RouteContext): Promise<HealingResponse> {
  const { upstream: up, clock } = ctx.deps;
  const c = cred(ctx);
  const [caps, snap, bg, repl, jobs] = await Promise.all([
    adminCalls.capabilities(up, c),
    adminCalls.snapshot(up, c),
    settle(adminCalls.backgroundHeal(up, c)),
    settle(adminCalls.replacement(up, c)),
    settle(adminCalls.backgroundJobs(up, c)),
  ]);
  return {
    generatedAt: new Date(clock.now()).toISOString(),
    background: bg.value ?? null,
    backgroundError: bg.error,
    replacement: repl.value ?? null,
    replacementError: repl.error,
    capabilities: caps,
    layout: snap.pools.map((p) => ({ pool: p.id, sets: p.setCount })),
    jobs: jobs.value ?? null,
    jobsError: jobs.error,
  };
}

function healTarget(body: { bucket?: unknown; prefix?: unknown }): { bucket: string; prefix: string } {
  const bucket = typeof body.bucket === 'string' ? body.bucket.trim() : '';
  const prefix = typeof body.prefix === 'string' ? body.prefix : '';
  if (bucket !== '') validateBucketName(bucket);
  if (bucket === '' && prefix !== '') throw new SvcError('InvalidArgument', 'a prefix needs a bucket');
  return { bucket, prefix };
}

async function healStart(ctx: RouteContext): Promise<HealCallResult> {
  const body = await readJson<Partial<HealStartRequest>>(ctx.req);
  const { bucket, prefix } = healTarget(body);
  // a misspelled bucket would heal nothing and report "finished": refuse it
  if (bucket !== '' && (await s3.bucketState(up(ctx), cred(ctx), bucket)) === 'missing') throw new UpstreamError(404, 'NoSuchBucket', `there is no bucket named ${bucket}; nothing was healed`);
  const opts: Record<string, unknown> = {
    recursive: body.recursive === true || bucket !== '',
    dryRun: body.dryRun === true,
    remove: body.remove === true,
    recreate: body.recreate === true,
    scanMode: body.deep === true ? 2 : 1,
  };
  if (typeof body.pool === 'number' || typeof body.set === 'number') {
    opts.pool = body.pool;
    opts.set = body.set;
  }
  const result = (await adminCalls.heal(ctx.deps.upstream, cred(ctx), bucket, prefix, {}, JSON.stringify(opts))) as { clientToken?: unknown };
  ctx.deps.logger.info({ event: 'console_heal_start', accessKey: cred(ctx).accessKey, bucket, prefix, opts }, 'heal started from the console');
  return { clientToken: typeof result.clientToken === 'string' ? result.clientToken : '', bucket, prefix, result };
}

async function healFollow(ctx: RouteContext, stop: boolean): Promise<HealCallResult> {
  const body = stop ? await readJson<{ clientToken?: unknown; bucket?: unknown; prefix?: unknown }>(ctx.req) : { clientToken: ctx.query.get('clientToken'), bucket: ctx.query.get('bucket'), prefix: ctx.query.get('prefix') };
  const token = typeof body.clientToken === 'string' ? body.clientToken : '';
  if (token === '') throw new SvcError('InvalidArgument', 'no heal client token given');
  const { bucket, prefix } = healTarget(body);
  const result = await adminCalls.heal(ctx.deps.upstream, cred(ctx), bucket, prefix, { clientToken: token, ...(stop ? { forceStop: 'true' } : {}) });
  return { clientToken: token, bucket, prefix, result };
}

// ---- buckets and objects

async function bucketDetails(ctx: RouteContext): Promise<BucketDetails> {
  const bucket = bucketParam(ctx);
  return { name: bucket, versioning: await s3.getVersioning(ctx.deps.upstream, cred(ctx), bucket) };
}

/** Sets (`{"size": "10GiB"}` or a number of bytes) or clears (`{"size": null}`) a bucket's quota. */
async function setQuota(ctx: RouteContext): Promise<BucketQuotaView> {
  const bucket = bucketParam(ctx);
  const body = await readJson<{ size?: unknown }>(ctx.req);
  const size = body.size === null ? null : quotaSize(body.size);
  await adminCalls.setQuota(up(ctx), cred(ctx), bucket, size);
  return adminCalls.quota(up(ctx), cred(ctx), bucket);
}

/**
 * Creates a bucket (versioning, object lock and a quota as asked). A bucket
 * that exists already is refused and left exactly as it is: S3 answers 200
 * to re-creating one's own bucket in us-east-1, so the console asks first
 * and never applies settings to a bucket it did not create.
 */
async function createBucket(ctx: RouteContext): Promise<BucketDetails> {
  const body = await readJson<{ name?: unknown; versioning?: unknown; objectLock?: unknown; quota?: unknown }>(ctx.req);
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  validateBucketName(name);
  const quota = body.quota === undefined || body.quota === null || body.quota === '' ? null : quotaSize(body.quota);
  const objectLock = body.objectLock === true;
  const state = await s3.bucketState(up(ctx), cred(ctx), name);
  if (state === 'exists') throw new UpstreamError(409, 'BucketAlreadyOwnedByYou', `a bucket named ${name} exists already; nothing was changed`);
  if (state === 'forbidden') throw new UpstreamError(409, 'BucketAlreadyExists', `a bucket named ${name} exists already and is not yours`);
  await s3.createBucket(up(ctx), cred(ctx), name, { objectLock });
  // object lock turns versioning on for good
  if (body.versioning === true && !objectLock) await s3.putVersioning(up(ctx), cred(ctx), name, true);
  if (quota !== null) await adminCalls.setQuota(up(ctx), cred(ctx), name, quota);
  ctx.deps.logger.info({ event: 'console_bucket_created', accessKey: cred(ctx).accessKey, bucket: name, versioning: body.versioning === true || objectLock, objectLock, quota }, 'bucket created from the console');
  return { name, versioning: body.versioning === true || objectLock ? 'Enabled' : 'Unversioned' };
}

/** A quota from `"10GiB"`, `"500MB"` or a number of bytes (more than 0). */
function quotaSize(v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  if (typeof v === 'string' && v.trim() !== '') {
    let size: number;
    try {
      size = parseByteSize(v, 'quota');
    } catch {
      throw new SvcError('InvalidArgument', `"${v}" is not a size; write it as 10GiB, 500MB or a number of bytes`);
    }
    if (size <= 0) throw new SvcError('InvalidArgument', 'a quota must be more than 0 bytes; clear it to remove it');
    return size;
  }
  throw new SvcError('InvalidArgument', 'give the quota as a size such as 10GiB, or null to clear it');
}

/**
 * Deletes an object (a delete marker on a versioned bucket) or one version
 * (`versionId`, `null` included), bypassing a GOVERNANCE retention when
 * asked. A version delete refused by object lock says so, with the lock that
 * holds it: S3 answers both a missing permission and a lock with
 * AccessDenied, and the two need different actions.
 */
async function deleteObject(ctx: RouteContext): Promise<{ deleteMarker: boolean; versionId: string }> {
  const bucket = bucketParam(ctx);
  const key = keyParam(ctx);
  const versionId = optional(ctx, 'versionId');
  const bypassGovernance = optional(ctx, 'bypassGovernance') === 'true';
  try {
    return await s3.deleteObject(up(ctx), cred(ctx), bucket, key, versionId, { bypassGovernance });
  } catch (err) {
    if (!(err instanceof UpstreamError && err.code === 'AccessDenied' && versionId !== undefined)) throw err;
    const lock = await s3.objectLockState(up(ctx), cred(ctx), bucket, key, versionId).catch(() => undefined);
    const held = lock?.legalHold === true;
    const retained = lock?.retention !== null && lock?.retention !== undefined && Date.parse(lock.retention.until) > ctx.deps.clock.now() ? lock.retention : null;
    if (!held && retained === null) throw err;
    const why = [
      ...(held ? ['a legal hold (remove the legal hold first)'] : []),
      ...(retained !== null
        ? [
            retained.mode === 'COMPLIANCE'
              ? `COMPLIANCE retention until ${retained.until} (no one can delete it before then)`
              : `GOVERNANCE retention until ${retained.until}${bypassGovernance ? ' (the bypass was refused: it needs the s3:BypassGovernanceRetention permission)' : ' (tick "Bypass governance retention" to delete it, with the s3:BypassGovernanceRetention permission)'}`,
          ]
        : []),
    ];
    throw new SvcError('XSvcConsoleObjectLocked', `Version ${versionId} of ${key} is protected by object lock: ${why.join(' and ')}. Nothing was deleted.`);
  }
}

function settingParam(ctx: RouteContext): BucketSettingKind {
  const k = ctx.params.kind!;
  if (!(BUCKET_SETTINGS as readonly string[]).includes(k)) throw new SvcError('XSvcConsoleNoSuchRoute', `no bucket setting "${k}"; settings: ${BUCKET_SETTINGS.join(', ')}`);
  return k as BucketSettingKind;
}

/** Changes one setting of a bucket, logs who did, and answers the setting as it is now. */
async function changeSetting(ctx: RouteContext, change: (bucket: string, kind: BucketSettingKind) => Promise<unknown>, event: string, message: string): ReturnType<typeof getSetting> {
  const bucket = bucketParam(ctx);
  const kind = settingParam(ctx);
  await change(bucket, kind);
  ctx.deps.logger.info({ event, accessKey: cred(ctx).accessKey, bucket, setting: kind }, message);
  return getSetting(up(ctx), cred(ctx), bucket, kind);
}

/** Deletes up to 1000 keys or versions in one DeleteObjects call; each refusal comes back with its code. */
async function deleteObjects(ctx: RouteContext): Promise<BulkDeleteResult> {
  const bucket = bucketParam(ctx);
  const b = await readJson<{ objects?: unknown; bypassGovernance?: unknown }>(ctx.req);
  const list = Array.isArray(b.objects) ? b.objects : [];
  if (list.length === 0 || list.length > 1000) throw new SvcError('InvalidArgument', 'give 1 to 1000 objects to delete');
  const objects = list.map((o: { key?: unknown; versionId?: unknown }) => {
    if (typeof o?.key !== 'string' || o.key === '' || (o.versionId !== undefined && typeof o.versionId !== 'string')) throw new SvcError('InvalidArgument', 'objects are {key, versionId?}');
    return { key: o.key, ...(typeof o.versionId === 'string' && o.versionId !== '' ? { versionId: o.versionId } : {}) };
  });
  const r = await s3.deleteObjects(up(ctx), cred(ctx), bucket, objects, { bypassGovernance: b.bypassGovernance === true });
  ctx.deps.logger.info({ event: 'console_bulk_delete', accessKey: cred(ctx).accessKey, bucket, asked: objects.length, deleted: r.deleted.length, refused: r.errors.length }, 'objects deleted from the console');
  return r;
}

/**
 * Upload bodies: the browser's request stream with its declared length,
 * through a pipe of its own: when the node refuses the upload before reading
 * it all, the HTTP client ends that pipe, and the browser's request stays
 * whole for the lingering close that lets it read the refusal (ending the
 * request itself would cut the browser's connection with a reset).
 */
function uploadBody(ctx: RouteContext, signal: AbortSignal) {
  const raw = ctx.req.headers['content-length'];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) throw new SvcError('MissingContentLength', 'the upload must declare its size (Content-Length)');
  const stream = ctx.req.pipe(new PassThrough());
  // `pipe` passes data and the end on, not a failure: a browser that goes away fails the upload.
  ctx.req.once('error', (err) => stream.destroy(err));
  return { stream, length: Number(raw), contentType: (ctx.req.headers['content-type'] as string | undefined) || 'application/octet-stream', signal };
}

/** Aborts the upstream call when the browser goes away. */
function clientSignal(ctx: RouteContext): AbortSignal {
  const ac = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) ac.abort();
  };
  ctx.res.once('close', onClose);
  return ac.signal;
}

async function upload(ctx: RouteContext): Promise<UploadResult> {
  const bucket = bucketParam(ctx);
  return s3.putObject(ctx.deps.upstream, cred(ctx), bucket, keyParam(ctx), uploadBody(ctx, clientSignal(ctx)));
}

async function uploadPart(ctx: RouteContext): Promise<{ etag: string }> {
  const bucket = bucketParam(ctx);
  const part = intParam(ctx.params.part, 'part', 1, 10_000, 1);
  const etag = await s3.uploadPart(ctx.deps.upstream, cred(ctx), bucket, keyParam(ctx), ctx.params.uploadId!, part, uploadBody(ctx, clientSignal(ctx)));
  return { etag };
}

async function completeUpload(ctx: RouteContext): Promise<UploadResult> {
  const bucket = bucketParam(ctx);
  const key = keyParam(ctx);
  const body = await readJson<{ parts?: unknown }>(ctx.req);
  const parts = Array.isArray(body.parts) ? body.parts : [];
  const list = parts.map((p: { part?: unknown; etag?: unknown }) => {
    if (typeof p.part !== 'number' || typeof p.etag !== 'string') throw new SvcError('InvalidArgument', 'parts must be {part, etag} pairs');
    return { part: p.part, etag: p.etag };
  });
  if (list.length === 0) throw new SvcError('InvalidArgument', 'no parts to complete the upload with');
  return s3.completeMultipart(ctx.deps.upstream, cred(ctx), bucket, key, ctx.params.uploadId!, list);
}

const PASS_HEADERS = ['content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified', 'x-amz-version-id'];

async function download(ctx: RouteContext): Promise<typeof STREAMED> {
  const { key, signal, res } = await getForBrowser(ctx);
  const headers: Record<string, string> = {
    // An object's bytes never run as a page of the console: always a download.
    'content-type': upstreamHeader(res.headers, 'content-type') ?? 'application/octet-stream',
    'content-disposition': attachmentDisposition(key),
    ...DOWNLOAD_HEADERS,
  };
  return relay(ctx, res, headers, signal, 'console_download_interrupted');
}

/** GETs the object (its `Range` passed on), aborted when the browser goes away. */
async function getForBrowser(ctx: RouteContext): Promise<{ key: string; signal: AbortSignal; res: s3.ObjectResponse }> {
  const bucket = bucketParam(ctx);
  const key = keyParam(ctx);
  const signal = clientSignal(ctx);
  const range = typeof ctx.req.headers.range === 'string' ? ctx.req.headers.range : undefined;
  const res = await s3.getObject(ctx.deps.upstream, cred(ctx), bucket, key, { versionId: optional(ctx, 'versionId'), range, signal });
  return { key, signal, res };
}

/** Types the console previews inline (images, PDF, and text shown as plain text). */
const PREVIEW_IMAGE = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml)$/;
const PREVIEW_TEXT = /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-ndjson)$)/;

/**
 * An object shown in the page: images for `<img>`, PDF for a sandboxed
 * frame, text as `text/plain`. Inline, but sandboxed by its own CSP (no
 * script, no plugin-less navigation, no other origin), framable only by the
 * console itself, never sniffed; any other type is refused.
 */
async function previewObject(ctx: RouteContext): Promise<typeof STREAMED> {
  const { key, signal, res } = await getForBrowser(ctx);
  const type = (upstreamHeader(res.headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const shown = PREVIEW_IMAGE.test(type) || type === 'application/pdf' ? type : PREVIEW_TEXT.test(type) ? 'text/plain; charset=utf-8' : undefined;
  if (shown === undefined) {
    res.body.destroy();
    throw new SvcError('InvalidArgument', `no preview for objects of type ${type || 'unknown'}; download it instead`);
  }
  const headers: Record<string, string> = {
    'content-type': shown,
    'content-disposition': attachmentDisposition(key).replace(/^attachment/, 'inline'),
    'content-security-policy': "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'self'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'SAMEORIGIN',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
  return relay(ctx, res, headers, signal, 'console_preview_interrupted');
}

/** Streams an object's answer to the browser with `headers` (plus its length, range, ETag and version). */
async function relay(ctx: RouteContext, res: s3.ObjectResponse, headers: Record<string, string>, signal: AbortSignal, event: string): Promise<typeof STREAMED> {
  for (const h of PASS_HEADERS) {
    const v = upstreamHeader(res.headers, h);
    if (v !== undefined) headers[h] = v;
  }
  ctx.res.writeHead(res.status, headers);
  try {
    await pipeline(res.body, ctx.res);
  } catch (err) {
    if (!signal.aborted) ctx.deps.logger.warn({ event, bucket: ctx.params.bucket, err: String(err) }, 'console download interrupted');
  }
  return STREAMED;
}

const MAX_SHARE_SECONDS = 7 * 24 * 3600;

async function share(ctx: RouteContext): Promise<ShareLink> {
  const bucket = bucketParam(ctx);
  const body = await readJson<Partial<ShareRequest>>(ctx.req);
  const key = typeof body.key === 'string' ? body.key : '';
  if (key === '') throw new SvcError('InvalidArgument', 'no object key given');
  const expires = typeof body.expiresSeconds === 'number' ? Math.floor(body.expiresSeconds) : 0;
  if (expires < 1 || expires > MAX_SHARE_SECONDS) throw new SvcError('InvalidArgument', 'a link can be valid from 1 second to 7 days');
  const endpoint = shareOrigin(ctx);
  const url = await ctx.deps.upstream.presign(cred(ctx), endpoint, encodePath(bucket, key), typeof body.versionId === 'string' && body.versionId !== '' ? { versionId: body.versionId } : {}, expires);
  // which credential signs the link (revoking that key revokes the link)
  const root = await iamCalls.whoami(up(ctx), cred(ctx)).then((w) => w.root, () => false);
  return { url, endpoint, expiresAt: new Date(ctx.deps.clock.now() + expires * 1000).toISOString(), accessKey: cred(ctx).accessKey, root };
}

/**
 * SVC_SERVER_URL, else the browser's host name with the S3 listener's port:
 * https when that listener serves TLS (or, on a plain one, when the browser
 * reached the console over https).
 */
function shareOrigin(ctx: RouteContext): string {
  if (ctx.deps.config.serverUrl !== undefined) return ctx.deps.config.serverUrl;
  const port = ctx.deps.s3Port();
  let hostname = 'localhost';
  try {
    hostname = new URL(`http://${ctx.host || 'localhost'}`).hostname;
  } catch {
    // a malformed Host header: fall back to localhost
  }
  return `${ctx.deps.s3Tls || ctx.secure ? 'https' : 'http'}://${hostname}${port !== undefined ? `:${port}` : ''}`;
}

// ---- the table

const up = (ctx: RouteContext) => ctx.deps.upstream;

export const API_ROUTES: readonly ApiRoute[] = [
  // session: sign-in/out are handled by the console handler itself (cookies); listed here for the table of routes
  { method: 'GET', pattern: 'overview', auth: 'session', handler: overview },
  { method: 'GET', pattern: 'pools', auth: 'session', handler: pools },
  { method: 'POST', pattern: 'pools/:pool/decommission', auth: 'session', handler: async (ctx) => adminCalls.decommission(up(ctx), cred(ctx), poolParam(ctx)) },
  { method: 'POST', pattern: 'pools/:pool/cancel', auth: 'session', handler: async (ctx) => adminCalls.cancel(up(ctx), cred(ctx), poolParam(ctx)) },
  { method: 'POST', pattern: 'pools/:pool/clear', auth: 'session', handler: async (ctx) => adminCalls.clear(up(ctx), cred(ctx), poolParam(ctx)) },
  { method: 'POST', pattern: 'rebalance/start', auth: 'session', handler: async (ctx) => adminCalls.rebalanceStart(up(ctx), cred(ctx)) },
  { method: 'POST', pattern: 'rebalance/stop', auth: 'session', handler: async (ctx) => adminCalls.rebalanceStop(up(ctx), cred(ctx)) },
  { method: 'GET', pattern: 'healing', auth: 'session', handler: healing },
  // the cluster's measurements over time (every node's, added together by the admin API)
  { method: 'GET', pattern: 'metrics', auth: 'session', handler: async (ctx) => adminCalls.metricsHistory(up(ctx), cred(ctx), intParam(optional(ctx, 'minutes'), 'minutes', 1, 360, 60)) },
  { method: 'POST', pattern: 'heal', auth: 'session', handler: healStart },
  { method: 'GET', pattern: 'heal/status', auth: 'session', handler: (ctx) => healFollow(ctx, false) },
  { method: 'POST', pattern: 'heal/stop', auth: 'session', handler: (ctx) => healFollow(ctx, true) },
  { method: 'GET', pattern: 'buckets', auth: 'session', handler: async (ctx) => s3.listBuckets(up(ctx), cred(ctx)) },
  {
    method: 'GET',
    pattern: 'bucket-usage',
    auth: 'session',
    handler: async (ctx): Promise<BucketUsageView> => {
      const u = (await adminCalls.info(up(ctx), cred(ctx))).dataUsage;
      return { lastUpdate: u?.lastUpdate ?? '', buckets: Object.fromEntries((u?.buckets ?? []).map((b) => [b.name, { objects: b.objects, versions: b.versions, deleteMarkers: b.deleteMarkers, size: b.size }])) };
    },
  },
  { method: 'POST', pattern: 'buckets', auth: 'session', handler: createBucket },
  { method: 'GET', pattern: 'buckets/:bucket', auth: 'session', handler: bucketDetails },
  { method: 'GET', pattern: 'buckets/:bucket/governance', auth: 'session', handler: async (ctx) => adminCalls.governance(up(ctx), cred(ctx), bucketParam(ctx)) },
  { method: 'GET', pattern: 'buckets/:bucket/quota', auth: 'session', handler: async (ctx) => adminCalls.quota(up(ctx), cred(ctx), bucketParam(ctx)) },
  { method: 'PUT', pattern: 'buckets/:bucket/quota', auth: 'session', handler: setQuota },
  { method: 'GET', pattern: 'buckets/:bucket/replication', auth: 'session', handler: async (ctx) => adminCalls.replication(up(ctx), cred(ctx), bucketParam(ctx)) },
  { method: 'DELETE', pattern: 'buckets/:bucket', auth: 'session', handler: async (ctx) => s3.deleteBucket(up(ctx), cred(ctx), bucketParam(ctx)) },
  {
    method: 'PUT',
    pattern: 'buckets/:bucket/versioning',
    auth: 'session',
    handler: async (ctx) => {
      const bucket = bucketParam(ctx);
      const enabled = boolField(await readJson<{ enabled?: unknown }>(ctx.req), 'enabled');
      await s3.putVersioning(up(ctx), cred(ctx), bucket, enabled);
      return { name: bucket, versioning: enabled ? 'Enabled' : 'Suspended' } satisfies BucketDetails;
    },
  },
  {
    method: 'GET',
    pattern: 'buckets/:bucket/objects',
    auth: 'session',
    handler: async (ctx) =>
      s3.listObjects(up(ctx), cred(ctx), bucketParam(ctx), {
        prefix: ctx.query.get('prefix') ?? '',
        token: ctx.query.get('token') ?? '',
        maxKeys: limitParam(ctx),
        recursive: ctx.query.get('recursive') === 'true',
      }),
  },
  { method: 'GET', pattern: 'buckets/:bucket/object', auth: 'session', handler: async (ctx) => s3.headObject(up(ctx), cred(ctx), bucketParam(ctx), keyParam(ctx), optional(ctx, 'versionId')) },
  { method: 'DELETE', pattern: 'buckets/:bucket/object', auth: 'session', handler: deleteObject },
  { method: 'GET', pattern: 'buckets/:bucket/object-lock', auth: 'session', handler: async (ctx) => s3.getObjectLock(up(ctx), cred(ctx), bucketParam(ctx)) },
  { method: 'POST', pattern: 'buckets/:bucket/delete-objects', auth: 'session', handler: deleteObjects },
  {
    method: 'POST',
    pattern: 'buckets/:bucket/restore',
    auth: 'session',
    handler: async (ctx) => {
      const bucket = bucketParam(ctx);
      const b = await readJson<{ key?: unknown; versionId?: unknown }>(ctx.req);
      if (typeof b.key !== 'string' || b.key === '' || typeof b.versionId !== 'string' || b.versionId === '') throw new SvcError('InvalidArgument', 'give the key and the version to restore');
      const r = await s3.restoreVersion(up(ctx), cred(ctx), bucket, b.key, b.versionId);
      ctx.deps.logger.info({ event: 'console_version_restored', accessKey: cred(ctx).accessKey, bucket, key: b.key, from: b.versionId, versionId: r.versionId }, 'version restored from the console');
      return r;
    },
  },
  { method: 'GET', pattern: 'buckets/:bucket/object/tags', auth: 'session', handler: async (ctx) => s3.getObjectTags(up(ctx), cred(ctx), bucketParam(ctx), keyParam(ctx), optional(ctx, 'versionId')) },
  {
    method: 'PUT',
    pattern: 'buckets/:bucket/object/tags',
    auth: 'session',
    handler: async (ctx) => {
      const bucket = bucketParam(ctx);
      const key = keyParam(ctx);
      const b = await readJson<{ tags?: unknown }>(ctx.req);
      if (!Array.isArray(b.tags) || !b.tags.every((t: { key?: unknown; value?: unknown }) => typeof t?.key === 'string' && typeof t?.value === 'string')) throw new SvcError('InvalidArgument', 'tags are a list of {key, value}');
      await s3.putObjectTags(up(ctx), cred(ctx), bucket, key, optional(ctx, 'versionId'), b.tags as ObjectTag[]);
      return s3.getObjectTags(up(ctx), cred(ctx), bucket, key, optional(ctx, 'versionId'));
    },
  },
  {
    method: 'PUT',
    pattern: 'buckets/:bucket/object/legal-hold',
    auth: 'session',
    handler: async (ctx) => {
      const on = boolField(await readJson<{ on?: unknown }>(ctx.req), 'on');
      const o = objectParams(ctx);
      await s3.putLegalHold(up(ctx), cred(ctx), o.bucket, o.key, o.versionId, on);
      return s3.objectLockState(up(ctx), cred(ctx), o.bucket, o.key, o.versionId);
    },
  },
  {
    method: 'PUT',
    pattern: 'buckets/:bucket/object/retention',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ mode?: unknown; until?: unknown; bypassGovernance?: unknown }>(ctx.req);
      let retention: { mode: 'GOVERNANCE' | 'COMPLIANCE'; until: string } | null = null;
      if (b.mode !== null && b.mode !== undefined) {
        if ((b.mode !== 'GOVERNANCE' && b.mode !== 'COMPLIANCE') || typeof b.until !== 'string' || !Number.isFinite(Date.parse(b.until))) throw new SvcError('InvalidArgument', 'give a mode (GOVERNANCE or COMPLIANCE) and a date, or mode null to remove the retention');
        retention = { mode: b.mode, until: new Date(b.until).toISOString() };
      }
      const o = objectParams(ctx);
      await s3.putRetention(up(ctx), cred(ctx), o.bucket, o.key, o.versionId, retention, b.bypassGovernance === true);
      return s3.objectLockState(up(ctx), cred(ctx), o.bucket, o.key, o.versionId);
    },
  },
  { method: 'GET', pattern: 'buckets/:bucket/settings/:kind', auth: 'session', handler: async (ctx) => getSetting(up(ctx), cred(ctx), bucketParam(ctx), settingParam(ctx)) },
  {
    method: 'PUT',
    pattern: 'buckets/:bucket/settings/:kind',
    auth: 'session',
    handler: async (ctx) => changeSetting(ctx, async (bucket, kind) => putSetting(up(ctx), cred(ctx), bucket, kind, (await readJson<{ value?: unknown }>(ctx.req)).value), 'console_bucket_setting', 'bucket setting changed from the console'),
  },
  {
    method: 'DELETE',
    pattern: 'buckets/:bucket/settings/:kind',
    auth: 'session',
    handler: async (ctx) => changeSetting(ctx, async (bucket, kind) => deleteSetting(up(ctx), cred(ctx), bucket, kind), 'console_bucket_setting_removed', 'bucket setting removed from the console'),
  },
  {
    method: 'GET',
    pattern: 'buckets/:bucket/all-versions',
    auth: 'session',
    handler: async (ctx) =>
      s3.listVersionsPage(up(ctx), cred(ctx), bucketParam(ctx), {
        prefix: ctx.query.get('prefix') ?? '',
        keyMarker: ctx.query.get('keyMarker') ?? '',
        versionIdMarker: ctx.query.get('versionIdMarker') ?? '',
        maxKeys: limitParam(ctx),
        recursive: ctx.query.get('recursive') === 'true',
      }),
  },
  {
    method: 'GET',
    pattern: 'buckets/:bucket/versions',
    auth: 'session',
    handler: async (ctx) =>
      s3.listVersions(up(ctx), cred(ctx), bucketParam(ctx), keyParam(ctx), {
        keyMarker: ctx.query.get('keyMarker') ?? '',
        versionIdMarker: ctx.query.get('versionIdMarker') ?? '',
        maxKeys: limitParam(ctx),
      }),
  },
  { method: 'GET', pattern: 'buckets/:bucket/download', auth: 'session', handler: download },
  { method: 'GET', pattern: 'buckets/:bucket/preview', auth: 'session', handler: previewObject },
  {
    method: 'POST',
    pattern: 'buckets/:bucket/zip',
    auth: 'session',
    handler: async (ctx): Promise<ZipTicket> => {
      const bucket = bucketParam(ctx);
      const b = await readJson<{ keys?: unknown; base?: unknown; prefix?: unknown }>(ctx.req);
      if (b.prefix !== undefined) {
        // a folder: every key under it, listed now (over the limit is refused before anything downloads)
        if (typeof b.prefix !== 'string' || b.keys !== undefined) throw new SvcError('InvalidArgument', 'give either the keys of a selection or the prefix of one folder');
        const folder = await folderSelection(up(ctx), cred(ctx), bucket, b.prefix);
        return { ticket: ctx.deps.zipTickets.issue(ctx.session!, bucket, folder), name: folder.name, objects: folder.keys.length, bytes: folder.bytes };
      }
      const keys = Array.isArray(b.keys) ? b.keys.filter((k): k is string => typeof k === 'string' && k !== '') : [];
      if (keys.length === 0 || keys.length > MAX_ZIP_KEYS) throw new SvcError('InvalidArgument', `select 1 to ${MAX_ZIP_KEYS} objects to download as a ZIP`);
      const name = `${bucket}.zip`;
      return { ticket: ctx.deps.zipTickets.issue(ctx.session!, bucket, { keys, base: typeof b.base === 'string' ? b.base : '', name }), name, objects: keys.length };
    },
  },
  {
    method: 'GET',
    pattern: 'buckets/:bucket/zip/:ticket',
    auth: 'session',
    handler: async (ctx) => {
      const bucket = bucketParam(ctx);
      const ticket = ctx.deps.zipTickets.take(ctx.params.ticket!, ctx.session!, bucket);
      await streamZip({ up: up(ctx), session: ctx.session!, ticket, res: ctx.res, signal: clientSignal(ctx), logger: ctx.deps.logger });
      return STREAMED;
    },
  },
  { method: 'PUT', pattern: 'buckets/:bucket/upload', auth: 'session', handler: upload },
  {
    method: 'POST',
    pattern: 'buckets/:bucket/multipart',
    auth: 'session',
    handler: async (ctx) => ({ uploadId: await s3.createMultipart(up(ctx), cred(ctx), bucketParam(ctx), keyParam(ctx), optional(ctx, 'contentType') ?? 'application/octet-stream') }),
  },
  { method: 'PUT', pattern: 'buckets/:bucket/multipart/:uploadId/:part', auth: 'session', handler: uploadPart },
  { method: 'POST', pattern: 'buckets/:bucket/multipart/:uploadId/complete', auth: 'session', handler: completeUpload },
  { method: 'DELETE', pattern: 'buckets/:bucket/multipart/:uploadId', auth: 'session', handler: async (ctx) => s3.abortMultipart(up(ctx), cred(ctx), bucketParam(ctx), keyParam(ctx), ctx.params.uploadId!) },
  { method: 'POST', pattern: 'buckets/:bucket/share', auth: 'session', handler: share },
  // identity: what the signed-in identity may do, and the Identity pages
  { method: 'GET', pattern: 'permissions', auth: 'session', handler: async (ctx) => iamCalls.whoami(up(ctx), cred(ctx), optional(ctx, 'bucket')) },
  { method: 'GET', pattern: 'iam/users', auth: 'session', handler: async (ctx) => iamCalls.users(up(ctx), cred(ctx)) },
  {
    method: 'POST',
    pattern: 'iam/users',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ accessKey?: unknown; secretKey?: unknown }>(ctx.req);
      if (typeof b.accessKey !== 'string' || typeof b.secretKey !== 'string') throw new SvcError('InvalidArgument', 'give the access key and the secret key');
      await iamCalls.addUser(up(ctx), cred(ctx), b.accessKey, b.secretKey);
      return { accessKey: b.accessKey };
    },
  },
  { method: 'DELETE', pattern: 'iam/users/:user', auth: 'session', handler: async (ctx) => iamCalls.removeUser(up(ctx), cred(ctx), ctx.params.user!) },
  {
    method: 'PUT',
    pattern: 'iam/users/:user/status',
    auth: 'session',
    handler: async (ctx) => {
      const enabled = boolField(await readJson<{ enabled?: unknown }>(ctx.req), 'enabled');
      await iamCalls.setUserStatus(up(ctx), cred(ctx), ctx.params.user!, enabled);
    },
  },
  {
    method: 'GET',
    pattern: 'iam/groups',
    auth: 'session',
    handler: async (ctx) => Promise.all((await iamCalls.groups(up(ctx), cred(ctx))).map((g) => iamCalls.group(up(ctx), cred(ctx), g))),
  },
  {
    method: 'POST',
    pattern: 'iam/groups',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ group?: unknown; members?: unknown; remove?: unknown }>(ctx.req);
      if (typeof b.group !== 'string' || !Array.isArray(b.members)) throw new SvcError('InvalidArgument', 'give the group and its members');
      await iamCalls.updateGroup(up(ctx), cred(ctx), b.group, b.members.filter((m): m is string => typeof m === 'string'), b.remove === true);
    },
  },
  { method: 'GET', pattern: 'iam/policies', auth: 'session', handler: async (ctx) => iamCalls.policies(up(ctx), cred(ctx)) },
  {
    method: 'PUT',
    pattern: 'iam/policies/:name',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ document?: unknown }>(ctx.req);
      if (typeof b.document !== 'string') throw new SvcError('InvalidArgument', 'give the policy document as text');
      // the server validates it: a malformed policy comes back as MalformedPolicy with what is wrong
      await iamCalls.putPolicy(up(ctx), cred(ctx), ctx.params.name!, b.document);
      return { name: ctx.params.name };
    },
  },
  { method: 'DELETE', pattern: 'iam/policies/:name', auth: 'session', handler: async (ctx) => iamCalls.removePolicy(up(ctx), cred(ctx), ctx.params.name!) },
  {
    method: 'POST',
    pattern: 'iam/policies/attach',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ policies?: unknown; user?: unknown; group?: unknown; detach?: unknown }>(ctx.req);
      const policies = Array.isArray(b.policies) ? b.policies.filter((p): p is string => typeof p === 'string') : [];
      const target = typeof b.user === 'string' ? { user: b.user } : typeof b.group === 'string' ? { group: b.group } : undefined;
      if (target === undefined || policies.length === 0) throw new SvcError('InvalidArgument', 'give policies and a user or a group');
      return iamCalls.attach(up(ctx), cred(ctx), b.detach === true, policies, target);
    },
  },
  { method: 'GET', pattern: 'iam/accesskeys', auth: 'session', handler: async (ctx) => iamCalls.accessKeys(up(ctx), cred(ctx), optional(ctx, 'user')) },
  {
    method: 'POST',
    pattern: 'iam/accesskeys',
    auth: 'session',
    handler: async (ctx) => {
      const b = await readJson<{ user?: unknown; policy?: unknown; expiresAt?: unknown; name?: unknown; description?: unknown }>(ctx.req);
      const body: Record<string, unknown> = {};
      if (typeof b.user === 'string' && b.user !== '') body.targetUser = b.user;
      if (typeof b.policy === 'string' && b.policy.trim() !== '') body.policy = b.policy;
      if (typeof b.expiresAt === 'string' && b.expiresAt !== '') body.expiration = b.expiresAt;
      if (typeof b.name === 'string' && b.name !== '') body.name = b.name;
      if (typeof b.description === 'string' && b.description !== '') body.description = b.description;
      // the secret key is in this answer only: it is never shown again
      return (await iamCalls.createAccessKey(up(ctx), cred(ctx), body)).credentials;
    },
  },
  { method: 'DELETE', pattern: 'iam/accesskeys/:key', auth: 'session', handler: async (ctx) => iamCalls.removeAccessKey(up(ctx), cred(ctx), ctx.params.key!) },
];

/** The route and captured parameters for a method and the segments after `api/`. */
export function matchApiRoute(method: string, segments: readonly string[]): { route: ApiRoute; params: Record<string, string> } | { allowed: string[] } | undefined {
  const allowed: string[] = [];
  for (const r of API_ROUTES) {
    const pat = r.pattern.split('/');
    if (pat.length !== segments.length) continue;
    const params: Record<string, string> = {};
    if (!pat.every((p, i) => (p.startsWith(':') ? ((params[p.slice(1)] = segments[i]!), segments[i] !== '') : p === segments[i]))) continue;
    if (r.method === method) return { route: r, params };
    allowed.push(r.method);
  }
  return allowed.length > 0 ? { allowed } : undefined;
}


/**
 * A fake of the storage node's admin API (`/svc/admin/v3`) and health probes,
 * with SPEC.md's state tables: decommission queued → active → completed |
 * failed | canceled, one pool moving data at a time, the +30 % capacity
 * check, rebalance/decommission exclusion, unknown and duplicate query keys
 * rejected on mutations, and SigV4 verification. Time is injected, so an
 * hour-long drain passes in milliseconds.
 *
 * Kept honest by `admin-contract.ts`, which runs the same cases against a real
 * `svc server` for every route the server has.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Credentials, signAdminRequest } from '../../src/admin/client.ts';
import type { AdminPoolStatus, DecommissionInfo } from '../../src/admin/types.ts';
import { ZERO_TIME } from '../../src/admin/types.ts';
// The real server's wire shape of GET rebalance/status (SPEC's status words): the fake answers
// with exactly this type, so a change of the server's words or fields breaks the fake's build, and
// `admin-contract.ts` checks the words on both targets.
import type { RebalanceStatus, RebalanceWireStatus } from '../../../node/src/object/admin/types.ts';

interface PoolState {
  cmdline: string;
  totalSize: number;
  usedSize: number;
  lastUpdate: string;
}

interface DecomEntry {
  state: 'queued' | 'active' | 'completed' | 'failed' | 'canceled';
  startTime: string;
  startSize: number;
  objects: number;
  bytes: number;
  bytesFailed: number;
  objectsFailed: number;
  /** clock ms when the entry became active */
  activeAt?: number;
}

export interface FakeAdminOptions {
  pools: string[];
  credentials: Credentials;
  now?: () => Date;
  /** Bytes a drain or rebalance moves per second of (injected) time. */
  bytesPerSecond?: number;
  /** Used bytes per pool (default 1000) and capacity (default 10000). */
  used?: number[];
  total?: number[];
  host?: string;
  port?: number;
}

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class FakeAdminApi {
  readonly #o: Required<Omit<FakeAdminOptions, 'used' | 'total' | 'host' | 'port'>>;
  #pools: PoolState[];
  /** pool.bin: decommission entries by cmdline (they outlive a pool's removal until cleared). */
  readonly #decom = new Map<string, DecomEntry>();
  #rebalance: { id: string; startedAt: number; stoppedAt?: string; target: number; moved: number; failed?: string; status: Map<number, RebalanceWireStatus> } | undefined;
  #failNextDrain = false;
  ready = true;
  /** Used bytes a pool that joins through setPools starts with (data written to it since). */
  newPoolUsed = 1_000;
  #server: Server;
  url = '';
  /** Every admin request as `METHOD path?query`. */
  readonly requests: string[] = [];

  private constructor(o: FakeAdminOptions) {
    this.#o = { now: () => new Date(), bytesPerSecond: 100, ...o };
    this.#pools = o.pools.map((cmdline, i) => ({ cmdline, totalSize: o.total?.[i] ?? 10_000, usedSize: o.used?.[i] ?? 1_000, lastUpdate: this.#now().toISOString() }));
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  static async start(o: FakeAdminOptions): Promise<FakeAdminApi> {
    const f = new FakeAdminApi(o);
    f.#server.listen(o.port ?? 0, o.host ?? '127.0.0.1');
    await once(f.#server, 'listening');
    const a = f.#server.address() as AddressInfo;
    f.url = `http://${a.address}:${a.port}`;
    return f;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  #now(): Date {
    return this.#o.now();
  }

  /** A restart with new volume arguments: pools keep their data by cmdline. */
  setPools(cmdlines: string[]): void {
    const old = new Map(this.#pools.map((p) => [p.cmdline, p]));
    this.#pools = cmdlines.map((c) => old.get(c) ?? { cmdline: c, totalSize: 10_000, usedSize: this.newPoolUsed, lastUpdate: this.#now().toISOString() });
    // A restart never starts a rebalance and stops a running one.
    // (the server records the pools it was moving as stopped: SPEC "a restart never starts a rebalance")
    if (this.#rebalanceRunning()) {
      this.#rebalance!.stoppedAt = this.#now().toISOString();
      for (const [k, v] of this.#rebalance!.status) if (v === 'active') this.#rebalance!.status.set(k, 'stopped');
    }
  }

  get pools(): readonly string[] {
    return this.#pools.map((p) => p.cmdline);
  }

  /** The next drain that becomes active fails. */
  failNextDrain(): void {
    this.#failNextDrain = true;
  }

  /** Advances drains and the rebalance to the current (injected) time. */
  #advance(): void {
    const now = this.#now().getTime();
    let active = [...this.#decom].find(([, e]) => e.state === 'active');
    if (!active) {
      const next = [...this.#decom].find(([, e]) => e.state === 'queued');
      if (next) {
        next[1].state = 'active';
        next[1].activeAt = now;
        next[1].startTime = new Date(now).toISOString();
        active = next;
      }
    }
    if (active) {
      const [cmd, e] = active;
      const pool = this.#pools.find((p) => p.cmdline === cmd);
      if (this.#failNextDrain) {
        this.#failNextDrain = false;
        e.state = 'failed';
        e.objectsFailed = 1;
        e.startTime = ZERO_TIME;
        return this.#advance();
      }
      const moved = Math.floor(((now - (e.activeAt ?? now)) / 1000) * this.#o.bytesPerSecond);
      e.bytes = Math.min(e.startSize, moved);
      e.objects = Math.floor(e.bytes / 100);
      if (e.bytes >= e.startSize) {
        e.state = 'completed';
        if (pool) {
          const targets = this.#pools.filter((p) => p !== pool && !this.#decom.has(p.cmdline));
          if (targets[0]) targets[0].usedSize += pool.usedSize;
          pool.usedSize = 0;
        }
        return this.#advance();
      }
    }
    const rb = this.#rebalance;
    if (rb && !rb.stoppedAt && !rb.failed) {
      rb.moved = Math.min(rb.target, Math.floor(((now - rb.startedAt) / 1000) * this.#o.bytesPerSecond));
      if (rb.moved >= rb.target) for (const k of rb.status.keys()) rb.status.set(k, 'completed');
    }
  }

  #decomRunning(): boolean {
    return [...this.#decom.values()].some((e) => e.state === 'queued' || e.state === 'active');
  }

  #rebalanceRunning(): boolean {
    return this.#rebalance !== undefined && !this.#rebalance.stoppedAt && !this.#rebalance.failed && [...this.#rebalance.status.values()].includes('active');
  }

  /** GET rebalance/status in the server's shape (`rebalanceStatusOf`): SPEC's words per pool, a summary status. */
  #rebalanceStatus(): RebalanceStatus {
    const rb = this.#rebalance;
    const words = rb ? [...rb.status.values()] : [];
    const status: RebalanceStatus['status'] = !rb
      ? 'idle'
      : words.includes('active')
        ? 'running'
        : rb.stoppedAt
          ? 'stopped'
          : rb.failed
            ? 'failed'
            : 'completed';
    const now = this.#now().getTime();
    return {
      id: rb?.id ?? '',
      status,
      pools: this.#pools.map((p, i) => {
        const moved = rb?.status.has(i) ? rb.moved : 0;
        return {
          id: i,
          cmdline: p.cmdline,
          status: rb?.status.get(i) ?? 'none',
          stopping: false,
          participating: rb?.status.has(i) ?? false,
          used: p.usedSize / p.totalSize,
          lastError: rb?.failed ?? null,
          cleanupWarnings: { count: 0, lastMsg: null, lastBucket: null, lastObject: null, lastAt: ZERO_TIME, entries: [] },
          progress: {
            objects: Math.floor(moved / 100),
            versions: Math.floor(moved / 100),
            bytes: Math.floor(moved / this.#pools.length),
            remainingBuckets: 0,
            bucket: '',
            object: '',
            elapsed: rb ? (now - rb.startedAt) * 1e6 : 0,
            eta: 0,
          },
        };
      }),
      stoppedAt: rb?.stoppedAt ?? ZERO_TIME,
      stopPropagation: { lastAttemptAt: ZERO_TIME, failedPeers: [], terminalReloadAttemptAt: ZERO_TIME, terminalReloadFailedPeers: [], pendingTerminalReload: false },
    };
  }

  #poolStatus(i: number): AdminPoolStatus {
    const p = this.#pools[i]!;
    const e = this.#decom.get(p.cmdline);
    const info: DecommissionInfo = {
      startTime: e?.startTime ?? ZERO_TIME,
      startSize: e?.startSize ?? 0,
      totalSize: p.totalSize,
      currentSize: p.totalSize - p.usedSize,
      complete: e?.state === 'completed',
      failed: e?.state === 'failed',
      canceled: e?.state === 'canceled',
      queued: e?.state === 'queued',
      objectsDecommissioned: e?.objects ?? 0,
      objectsDecommissionedFailed: e?.objectsFailed ?? 0,
      bytesDecommissioned: e?.bytes ?? 0,
      bytesDecommissionedFailed: e?.bytesFailed ?? 0,
    };
    const status: AdminPoolStatus = { id: i, cmdline: p.cmdline, lastUpdate: p.lastUpdate, decommissionInfo: info };
    const words: Record<string, string> = { queued: 'queued', active: 'running', completed: 'complete', failed: 'failed', canceled: 'canceled' };
    status.decommissionStatus = e ? words[e.state]! : 'none';
    return status;
  }

  #findPool(q: URLSearchParams): number {
    const pool = q.get('pool') ?? '';
    const byId = q.get('by-id');
    if (byId !== null && byId !== 'true' && byId !== 'false') throw new HttpError(400, 'InvalidArgument', `invalid by-id value "${byId}"`);
    const i = byId === 'true' ? Number(pool) : this.#pools.findIndex((p) => p.cmdline === pool);
    if (!Number.isInteger(i) || i < 0 || i >= this.#pools.length) throw new HttpError(400, 'InvalidArgument', `specified pool "${pool}" not found`);
    return i;
  }

  #checkMutationQuery(q: URLSearchParams, allowed: string[]): void {
    const seen = new Set<string>();
    for (const k of q.keys()) {
      if (!allowed.includes(k)) throw new HttpError(400, 'InvalidArgument', `unknown query parameter "${k}"`);
      if (seen.has(k)) throw new HttpError(400, 'InvalidArgument', `duplicate query parameter "${k}"`);
      seen.add(k);
    }
    const byId = q.get('by-id');
    if (byId !== null && byId !== 'true' && byId !== 'false') throw new HttpError(400, 'InvalidArgument', `invalid by-id value "${byId}"`);
  }

  async #verify(req: IncomingMessage, url: URL): Promise<void> {
    const auth = String(req.headers.authorization ?? '');
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
    if (!m) throw new HttpError(403, 'AccessDenied', 'Access Denied.');
    if (m[1] !== this.#o.credentials.accessKey) throw new HttpError(403, 'InvalidAccessKeyId', 'The Access Key Id you provided does not exist in our records.');
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const date = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (Number.isNaN(date.getTime()) || Math.abs(date.getTime() - this.#now().getTime()) > 15 * 60_000) throw new HttpError(403, 'RequestTimeTooSkewed', 'The difference between the request time and the server\'s time is too large.');
    const target = new URL(`http://${req.headers.host}${url.pathname}${url.search}`);
    const expected = await signAdminRequest(target, req.method ?? 'GET', this.#o.credentials, m[3]!, date);
    const sig = /Signature=([0-9a-f]{64})/.exec(expected['authorization'] ?? '')?.[1];
    if (sig !== m[5]) throw new HttpError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    try {
      for await (const _ of req) {
        // drain the body
      }
      if (path === '/health' || path === '/health/live') return json(res, 200, { status: 'ok', ready: true });
      if (path === '/health/ready') {
        return json(res, this.ready ? 200 : 503, {
          status: this.ready ? 'ok' : 'degraded',
          ready: this.ready,
          details: {},
          degradedReasons: this.ready ? [] : ['storage_quorum_unavailable'],
        });
      }
      if (!path.startsWith('/svc/admin/v3/')) throw new HttpError(404, 'NotFound', 'no such route');
      this.requests.push(`${req.method} ${path}${url.search}`);
      await this.#verify(req, url);
      this.#advance();
      const route = `${req.method} ${path.slice('/svc/admin/v3'.length)}`;
      const q = url.searchParams;
      switch (route) {
        case 'GET /pools/list':
          return json(res, 200, this.#pools.map((_, i) => this.#poolStatus(i)));
        case 'GET /pools/status':
          return json(res, 200, this.#poolStatus(this.#findPool(q)));
        case 'GET /decommission/status':
          return json(res, 200, { pools: q.get('pool') ? [this.#poolStatus(this.#findPool(q))] : this.#pools.map((_, i) => this.#poolStatus(i)) });
        case 'POST /pools/decommission':
          return this.#decommission(res, q);
        case 'POST /pools/cancel': {
          this.#checkMutationQuery(q, ['pool', 'by-id']);
          const e = this.#decom.get(this.#pools[this.#findPool(q)]!.cmdline);
          if (!e || (e.state !== 'active' && e.state !== 'queued')) throw new HttpError(400, 'XSvcDecommissionNotAllowed', 'no decommission is running on this pool');
          e.state = 'canceled';
          e.startTime = ZERO_TIME;
          return json(res, 200, undefined);
        }
        case 'POST /pools/clear': {
          this.#checkMutationQuery(q, ['pool', 'by-id']);
          const pool = q.get('pool') ?? '';
          const inConfig = this.#pools.some((p) => p.cmdline === pool);
          const e = this.#decom.get(pool);
          if (!e) {
            if (inConfig) return json(res, 200, undefined);
            throw new HttpError(400, 'InvalidArgument', `specified pool "${pool}" not found`);
          }
          // A completed entry can be cleared once its pool left the launch configuration (design open question 1).
          if (!(e.state === 'failed' || e.state === 'canceled' || (e.state === 'completed' && !inConfig))) {
            throw new HttpError(400, 'XSvcDecommissionNotAllowed', `decommission of '${pool}' is ${e.state}; only failed or canceled entries (or completed ones of removed pools) can be cleared`);
          }
          this.#decom.delete(pool);
          return json(res, 200, undefined);
        }
        case 'POST /rebalance/start': {
          if ([...q.keys()].length > 0) throw new HttpError(400, 'InvalidArgument', 'rebalance start takes no query parameters');
          if (this.#pools.length < 2) throw new HttpError(501, 'NotImplemented', 'rebalance needs more than one pool');
          if (this.#decomRunning()) throw new HttpError(400, 'XSvcRebalanceNotAllowed', 'cannot start rebalance while decommission is in progress');
          if (this.#rebalanceRunning()) throw new HttpError(409, 'XSvcAdminRebalanceAlreadyStarted', 'rebalance is already in progress');
          const id = randomUUID();
          const total = this.#pools.reduce((n, p) => n + p.usedSize, 0);
          this.#rebalance = { id, startedAt: this.#now().getTime(), target: Math.floor(total / 4), moved: 0, status: new Map(this.#pools.map((_, i) => [i, 'active' as const])) };
          return json(res, 200, { id });
        }
        case 'POST /rebalance/stop': {
          if ([...q.keys()].length > 0) throw new HttpError(400, 'InvalidArgument', 'rebalance stop takes no query parameters');
          if (this.#rebalance) {
            this.#rebalance.stoppedAt = this.#now().toISOString();
            for (const [k, v] of this.#rebalance.status) if (v === 'active') this.#rebalance.status.set(k, 'stopped');
          }
          return json(res, 200, undefined);
        }
        case 'GET /rebalance/status':
          return json(res, 200, this.#rebalanceStatus());
        default:
          throw new HttpError(404, 'NotFound', `no admin route ${route}`);
      }
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', (err as Error).message);
      json(res, e.status, { Code: e.code, Message: e.message, Resource: path, RequestId: randomUUID(), HostId: 'fake-admin' });
    }
  }

  #decommission(res: ServerResponse, q: URLSearchParams): void {
    this.#checkMutationQuery(q, ['pool', 'by-id']);
    const raw = q.get('pool');
    if (!raw) throw new HttpError(400, 'InvalidArgument', 'pool is required');
    if (this.#pools.length < 2) throw new HttpError(501, 'NotImplemented', 'decommission needs a multi-pool deployment');
    if (this.#rebalanceRunning()) throw new HttpError(409, 'XSvcAdminRebalanceAlreadyStarted', 'cannot start decommission while a rebalance is running');
    const targets = raw.split(',');
    if (new Set(targets).size !== targets.length) throw new HttpError(400, 'InvalidArgument', 'duplicate decommission targets');
    const byId = q.get('by-id') === 'true';
    const idx = targets.map((t) => this.#findPool(new URLSearchParams({ pool: t, ...(byId ? { 'by-id': 'true' } : {}) })));
    for (const i of idx) {
      const e = this.#decom.get(this.#pools[i]!.cmdline);
      if (e && (e.state === 'queued' || e.state === 'active' || e.state === 'completed')) {
        throw new HttpError(400, 'XSvcDecommissionNotAllowed', `pool '${this.#pools[i]!.cmdline}' is already ${e.state}`);
      }
    }
    const draining = new Set([...idx, ...this.#pools.map((p, i) => (this.#decom.has(p.cmdline) && this.#decom.get(p.cmdline)!.state !== 'failed' && this.#decom.get(p.cmdline)!.state !== 'canceled' ? i : -1))]);
    const remaining = this.#pools.filter((_, i) => !draining.has(i));
    if (remaining.length === 0) throw new HttpError(400, 'XSvcDecommissionNotAllowed', 'at least one pool must stay active');
    const free = remaining.reduce((n, p) => n + (p.totalSize - p.usedSize), 0);
    const used = idx.reduce((n, i) => n + this.#pools[i]!.usedSize, 0);
    if (free < used * 1.3) throw new HttpError(400, 'XSvcDecommissionNotAllowed', 'insufficient target pool capacity');
    for (const i of idx) {
      const p = this.#pools[i]!;
      this.#decom.set(p.cmdline, { state: 'queued', startTime: this.#now().toISOString(), startSize: p.usedSize, objects: 0, bytes: 0, bytesFailed: 0, objectsFailed: 0 });
    }
    this.#advance();
    json(res, 200, undefined);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (body === undefined) {
    res.writeHead(status, { 'content-length': 0 }).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

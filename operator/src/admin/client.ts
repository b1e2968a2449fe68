/**
 * Admin API client: SigV4-signed (service `s3`) JSON calls to
 * `/svc/admin/v3/...`, sent to per-pod headless addresses with fail-over (the
 * S3 Service may have no endpoints while the cluster is degraded; any node
 * forwards pool operations to the pool leader). Bounded: 10 s per request.
 *
 * During a root-credential rotation (the credentials Secret edited) nodes
 * switch as their kubelets refresh the Secret volume, each at its own
 * moment: a node that refuses the signature (InvalidAccessKeyId,
 * SignatureDoesNotMatch) is asked again with `fallbackCredentials` (the
 * previous pair), then the next node is tried, so the operator always speaks
 * with a key the node it reaches holds.
 */
import { getCACertificates } from 'node:tls';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { Agent, fetch, type Response } from 'undici';
import { AdminError, type AdminPoolStatus, type RebalanceStatus } from './types.ts';

export const ADMIN_PREFIX = '/svc/admin/v3';

export interface Credentials {
  readonly accessKey: string;
  readonly secretKey: string;
}

export interface AdminClientOptions {
  /** Base URLs (`http://host:9000`), tried in order; the first that answers wins. */
  readonly endpoints: readonly string[];
  readonly credentials: Credentials;
  /** The previous root credential while nodes may still hold it (rotation). */
  readonly fallbackCredentials?: Credentials | undefined;
  readonly region?: string;
  readonly timeoutMs?: number;
  readonly now?: () => Date;
  /**
   * PEM the pods' certificates chain to (https endpoints: `spec.tls`), trusted
   * besides Node's default roots; host names are verified.
   */
  readonly ca?: string | undefined;
}

/** One connection pool per CA (the controller builds a client per reconcile). */
const agents = new Map<string, Agent>();

export function agentFor(ca: string): Agent {
  let a = agents.get(ca);
  if (a === undefined) {
    if (agents.size >= 32) {
      const [oldest, old] = agents.entries().next().value!;
      agents.delete(oldest);
      void old.close();
    }
    // allowPartialTrustChain: a leaf given as its own anchor (a Secret without ca.crt) verifies too
    a = new Agent({ connect: { ca: [...getCACertificates('default'), ca], allowPartialTrustChain: true }, keepAliveTimeout: 10_000 });
    agents.set(ca, a);
  }
  return a;
}

export interface AdminApi {
  poolsList(): Promise<AdminPoolStatus[]>;
  poolStatus(pool: string): Promise<AdminPoolStatus>;
  decommissionStatus(pool?: string): Promise<AdminPoolStatus[]>;
  rebalanceStatus(): Promise<RebalanceStatus | undefined>;
  decommissionStart(pools: readonly string[]): Promise<void>;
  decommissionCancel(pool: string): Promise<void>;
  decommissionClear(pool: string): Promise<void>;
  rebalanceStart(): Promise<{ id: string }>;
  rebalanceStop(): Promise<void>;
}

/** Signs one request; exported for the fake admin API's verifier tests. */
export async function signAdminRequest(
  url: URL,
  method: string,
  creds: Credentials,
  region: string,
  date: Date,
  body: Buffer | string = '',
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
    region,
    service: 's3',
    sha256: Hash.bind(null, 'sha256'),
    uriEscapePath: false,
  });
  // Repeated keys stay repeated: the signature must cover the query as sent.
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signed = await signer.sign(
    {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { host: url.host, 'x-amz-content-sha256': await sha256Hex(body) },
      body,
    },
    { signingDate: date },
  );
  return signed.headers as Record<string, string>;
}

async function sha256Hex(body: Buffer | string): Promise<string> {
  const h = new Hash('sha256');
  h.update(body);
  return Buffer.from(await h.digest()).toString('hex');
}

/** A failure the next endpoint may not have: the node was unreachable or unavailable. */
export function isTransportError(err: unknown): boolean {
  return !(err instanceof AdminError) || err.code === 'Unreachable' || err.status >= 502;
}

/** The node does not know the key or the signature does not match its secret (e.g. it has not switched yet). */
export function isCredentialError(err: unknown): boolean {
  return err instanceof AdminError && err.status === 403 && ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(err.code);
}

/** The error an admin API answer of `status` (not 2xx) with body `text` stands for: its JSON Code and Message, else the status and the raw text. */
export function adminErrorOf(status: number, text: string): AdminError {
  let code = `HTTP${status}`;
  let message = text.slice(0, 500);
  try {
    const j = JSON.parse(text) as { Code?: string; Message?: string; code?: string; message?: string };
    code = j.Code ?? j.code ?? code;
    message = j.Message ?? j.message ?? message;
  } catch {
    // not JSON: keep the raw text
  }
  return new AdminError(status, code, message);
}

export class AdminClient implements AdminApi {
  readonly #opts: AdminClientOptions;

  constructor(opts: AdminClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('admin client needs at least one endpoint');
    this.#opts = opts;
  }

  async #call(method: 'GET' | 'POST', path: string, query: Record<string, string> = {}): Promise<unknown> {
    let last: unknown;
    for (const base of this.#opts.endpoints) {
      try {
        try {
          return await this.#callOne(base, method, path, query, this.#opts.credentials);
        } catch (err) {
          if (!isCredentialError(err) || !this.#opts.fallbackCredentials) throw err;
          return await this.#callOne(base, method, path, query, this.#opts.fallbackCredentials);
        }
      } catch (err) {
        last = err;
        // A node that answers with an admin error has spoken for the cluster;
        // only transport failures, unavailable nodes and (mid-rotation) a key
        // the node does not hold move on to the next pod.
        if (!isTransportError(err) && !isCredentialError(err)) throw err;
      }
    }
    throw last;
  }

  async #callOne(base: string, method: 'GET' | 'POST', path: string, query: Record<string, string>, creds: Credentials): Promise<unknown> {
    const url = new URL(`${ADMIN_PREFIX}${path}`, base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const headers = await signAdminRequest(url, method, creds, this.#opts.region ?? 'us-east-1', this.#opts.now?.() ?? new Date());
    let res: Response;
    try {
      const dispatcher = url.protocol === 'https:' && this.#opts.ca !== undefined ? agentFor(this.#opts.ca) : undefined;
      res = await fetch(url, { method, headers, signal: AbortSignal.timeout(this.#opts.timeoutMs ?? 10_000), ...(dispatcher ? { dispatcher } : {}) });
    } catch (err) {
      throw new AdminError(0, 'Unreachable', `${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return text.trim() === '' ? undefined : (JSON.parse(text) as unknown);
    throw adminErrorOf(res.status, text);
  }

  async poolsList(): Promise<AdminPoolStatus[]> {
    return (await this.#call('GET', '/pools/list')) as AdminPoolStatus[];
  }

  async poolStatus(pool: string): Promise<AdminPoolStatus> {
    return (await this.#call('GET', '/pools/status', { pool })) as AdminPoolStatus;
  }

  async decommissionStatus(pool?: string): Promise<AdminPoolStatus[]> {
    const r = (await this.#call('GET', '/decommission/status', pool ? { pool } : {})) as AdminPoolStatus[] | AdminPoolStatus | { pools: AdminPoolStatus[] };
    if (Array.isArray(r)) return r;
    if ('pools' in r) return r.pools;
    return [r];
  }

  async rebalanceStatus(): Promise<RebalanceStatus | undefined> {
    try {
      return (await this.#call('GET', '/rebalance/status')) as RebalanceStatus;
    } catch (err) {
      // No rebalance ever started (MinIO: 404 XMinioAdminRebalanceNotStarted).
      if (err instanceof AdminError && err.status === 404) return undefined;
      throw err;
    }
  }

  async decommissionStart(pools: readonly string[]): Promise<void> {
    await this.#call('POST', '/pools/decommission', { pool: pools.join(',') });
  }

  async decommissionCancel(pool: string): Promise<void> {
    await this.#call('POST', '/pools/cancel', { pool });
  }

  async decommissionClear(pool: string): Promise<void> {
    await this.#call('POST', '/pools/clear', { pool });
  }

  async rebalanceStart(): Promise<{ id: string }> {
    return (await this.#call('POST', '/rebalance/start')) as { id: string };
  }

  async rebalanceStop(): Promise<void> {
    await this.#call('POST', '/rebalance/stop');
  }
}

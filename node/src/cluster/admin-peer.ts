/**
 * The admin API's internode calls, over the authenticated peer RPC
 * (`/svc/peer/v1/<method>`, the same tokens as every internode call):
 *
 * - `adminForward`: a pool-scoped admin mutation received by a node that
 *   does not lead the pool is executed by the leader (the node of the pool's
 *   first endpoint). The caller already verified the client's SigV4
 *   signature; it sends the request (method, target, body, the verified
 *   access key, request id) and relays the leader's answer unchanged. The
 *   RPC token binds these arguments, so nothing in between can alter them.
 *   The leader authorizes the access key again and runs the same pipeline.
 * - `adminNodeInfo`: one node's own view (uptime, version, memory, its
 *   drives) for the server info route.
 * - `adminMetricsHistory`: one node's measurements of the last hours, for
 *   the cluster-wide `metrics/history` route.
 * - `adminBackgroundJobs`: one node's background jobs from its supervisor,
 *   for the cluster-wide `background/jobs` route.
 *
 * A call to an unreachable leader fails at once when its client already
 * knows it is offline, and within the connect timeout otherwise (refused:
 * immediately); a leader that accepted the connection but hangs is given up
 * after `ADMIN_FORWARD_TIMEOUT_MS`. Either way the answer is
 * `XSvcAdminLeaderUnreachable`, never a hang.
 */
import { SvcError } from '../util/errors.ts';
import type { ClusterPeers } from './peers.ts';
import type { RpcService } from './rpc-server.ts';
import { peerPath } from './rpc-wire.ts';

export const ADMIN_FORWARD_METHOD = 'adminForward';
export const ADMIN_NODE_INFO_METHOD = 'adminNodeInfo';
export const ADMIN_HEAL_INFO_METHOD = 'adminHealInfo';
export const ADMIN_METRICS_HISTORY_METHOD = 'adminMetricsHistory';
export const ADMIN_BACKGROUND_JOBS_METHOD = 'adminBackgroundJobs';
/** Longest wait for a leader's answer to a forwarded admin call. */
export const ADMIN_FORWARD_TIMEOUT_MS = 15_000;
/** Longest wait for a node's info. */
export const ADMIN_NODE_INFO_TIMEOUT_MS = 5_000;

/** An admin request as the receiving node verified it. */
export interface AdminCall {
  readonly method: string;
  /** Raw request target (path and query) as the client sent it. */
  readonly url: string;
  readonly body: Buffer;
  /** The access key whose signature was verified. */
  readonly principal: string;
  /** The session token the request carried (temporary credentials). */
  readonly sessionToken?: string;
  readonly requestId: string;
  readonly clientAddress: string;
}

export interface AdminReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Absent for an empty body. */
  readonly contentType?: string;
  readonly body: Buffer;
}

export interface AdminPeerHandlers {
  /** Executes a forwarded call on this node (`caller` is the forwarding node). */
  execute(call: AdminCall, caller: string): Promise<AdminReply>;
  /** This node's own server properties. */
  nodeInfo(): Promise<unknown>;
  /** This node's background heal, scanner and rebuild state (null while they do not run). */
  healInfo(): unknown;
  /** This node's recent measurements (null when it keeps none). */
  metricsHistory(): unknown;
  /** This node's background jobs with their state. */
  backgroundJobs(): unknown;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new SvcError('InvalidRequest', `forwarded admin call: ${what} must be a string`);
  return v;
}

function toBuffer(v: unknown): Buffer {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (v === undefined || v === null) return Buffer.alloc(0);
  throw new SvcError('InvalidRequest', 'forwarded admin call: body must be bytes');
}

export function decodeAdminCall(args: unknown): AdminCall {
  if (typeof args !== 'object' || args === null) throw new SvcError('InvalidRequest', 'forwarded admin call: arguments missing');
  const a = args as Record<string, unknown>;
  return {
    method: str(a['method'], 'method'),
    url: str(a['url'], 'url'),
    body: toBuffer(a['body']),
    principal: str(a['principal'], 'principal'),
    ...(typeof a['sessionToken'] === 'string' ? { sessionToken: a['sessionToken'] } : {}),
    requestId: str(a['requestId'], 'requestId'),
    clientAddress: str(a['clientAddress'], 'clientAddress'),
  };
}

export function decodeAdminReply(v: unknown): AdminReply {
  if (typeof v !== 'object' || v === null) throw new SvcError('InternalError', 'forwarded admin call: malformed reply');
  const r = v as Record<string, unknown>;
  const status = r['status'];
  if (typeof status !== 'number' || !Number.isInteger(status)) throw new SvcError('InternalError', 'forwarded admin call: reply without status');
  const headers: Record<string, string> = {};
  for (const [k, h] of Object.entries((r['headers'] as Record<string, unknown> | undefined) ?? {})) if (typeof h === 'string') headers[k] = h;
  const ct = r['contentType'];
  return { status, headers, ...(typeof ct === 'string' ? { contentType: ct } : {}), body: toBuffer(r['body']) };
}

/** The peer RPC methods this node serves for the admin API. */
export function adminPeerService(h: AdminPeerHandlers): RpcService {
  return {
    [ADMIN_FORWARD_METHOD]: {
      kind: 'unary',
      handle: async (args, ctx) => {
        const reply = await h.execute(decodeAdminCall(args), ctx.caller);
        return { status: reply.status, headers: { ...reply.headers }, contentType: reply.contentType, body: reply.body };
      },
    },
    [ADMIN_NODE_INFO_METHOD]: { kind: 'unary', handle: () => h.nodeInfo() },
    [ADMIN_HEAL_INFO_METHOD]: { kind: 'unary', handle: async () => h.healInfo() },
    [ADMIN_METRICS_HISTORY_METHOD]: { kind: 'unary', handle: async () => h.metricsHistory() },
    [ADMIN_BACKGROUND_JOBS_METHOD]: { kind: 'unary', handle: async () => h.backgroundJobs() },
  };
}

/** The calling side: forwards to a pool leader, asks a node for its info. */
export class AdminPeers {
  readonly #peers: ClusterPeers;

  constructor(peers: ClusterPeers) {
    this.#peers = peers;
  }

  /** `host:port` of every node, this one included. */
  get nodes(): readonly string[] {
    return this.#peers.nodes;
  }

  get selfId(): string {
    return this.#peers.selfId;
  }

  isOnline(node: string): boolean {
    if (node === this.#peers.selfId) return true;
    return this.#peers.peers.get(node)?.isOnline() ?? false;
  }

  /**
   * Executes `call` on `node`. `why` explains in the unreachable error why
   * the call must run there (default: pool mutations run on the pool's leader).
   */
  async forward(node: string, call: AdminCall, describe: string, why?: string): Promise<AdminReply> {
    const client = this.#peers.peers.get(node);
    if (client === undefined) throw new SvcError('InternalError', `${node} is not a peer of this node`);
    let reply: unknown;
    try {
      reply = await client.rpcCall(
        peerPath(ADMIN_FORWARD_METHOD),
        {
          method: call.method,
          url: call.url,
          body: call.body,
          principal: call.principal,
          ...(call.sessionToken !== undefined ? { sessionToken: call.sessionToken } : {}),
          requestId: call.requestId,
          clientAddress: call.clientAddress,
        },
        { control: true, timeoutMs: ADMIN_FORWARD_TIMEOUT_MS },
      );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      // Network failures and timeouts surface as DiskNotFound from the peer client.
      if (!(err instanceof SvcError) || err.code !== 'DiskNotFound') {
        throw new SvcError('InternalError', `forwarding ${describe}'s request to its leader ${node} failed: ${reason}`, { node }, { cause: err });
      }
      throw new SvcError(
        'XSvcAdminLeaderUnreachable',
        why !== undefined
          ? `${describe} runs on node ${node}, which is unreachable: ${reason}. ${why}`
          : `${describe} is led by node ${node} (the node of the pool's first endpoint), which is unreachable: ${reason}. Pool mutations run on the pool's leader: bring ${node} back online and retry; nothing was changed`,
        { node },
        { cause: err },
      );
    }
    return decodeAdminReply(reply);
  }

  /** A peer's own info; undefined when it is unreachable. */
  nodeInfo(node: string): Promise<unknown> {
    return this.#ask(node, ADMIN_NODE_INFO_METHOD);
  }

  /** A peer's heal state; undefined when it is unreachable or its healing does not run. */
  healInfo(node: string): Promise<unknown> {
    return this.#ask(node, ADMIN_HEAL_INFO_METHOD);
  }

  /** A peer's recent measurements; undefined when it is unreachable or keeps none. */
  metricsHistory(node: string): Promise<unknown> {
    return this.#ask(node, ADMIN_METRICS_HISTORY_METHOD);
  }

  /** A peer's background jobs; undefined when it is unreachable. */
  backgroundJobs(node: string): Promise<unknown> {
    return this.#ask(node, ADMIN_BACKGROUND_JOBS_METHOD);
  }

  async #ask(node: string, method: string): Promise<unknown> {
    const client = this.#peers.peers.get(node);
    if (client === undefined || !client.isOnline()) return undefined;
    try {
      return (await client.rpcCall(peerPath(method), undefined, { control: true, timeoutMs: ADMIN_NODE_INFO_TIMEOUT_MS })) ?? undefined;
    } catch {
      return undefined;
    }
  }
}

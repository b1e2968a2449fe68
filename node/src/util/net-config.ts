/**
 * Limits of the HTTP listeners (S3/admin/RPC and console): how long a
 * client may take to send its headers and its body, how long a connection
 * may sit with nothing moving while the server waits on the client, and how
 * many connections one address and all addresses together may hold
 * (`server/http-guard.ts` applies them; `docs/architecture.md` "HTTP
 * limits" explains each). Pure: environment in, frozen values out.
 */
import { parseByteSize } from './bytes.ts';
import { SvcError } from './errors.ts';

export interface HttpLimits {
  /** From connection (or the end of the previous request) to complete request headers. */
  readonly headerTimeoutMs: number;
  /**
   * Nothing moves on a connection in either direction while the server
   * waits on the client (a stalled body, a client that stopped reading the
   * response): the connection is closed, a stalled body answered
   * `RequestTimeout` first.
   */
  readonly idleTimeoutMs: number;
  /** A request body must deliver `bodyMinBytes` (or its rest) within each window this long. */
  readonly bodyTimeoutMs: number;
  readonly bodyMinBytes: number;
  /** Inbound connections of all addresses together; undefined: derived from the descriptor limit. */
  readonly maxConnections: number | undefined;
  /** Inbound connections of one client address (cluster peers exempt); undefined: a quarter of the global cap. */
  readonly maxConnectionsPerAddress: number | undefined;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = Object.freeze({
  headerTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  bodyMinBytes: 16 * 1024,
  maxConnections: undefined,
  maxConnectionsPerAddress: undefined,
});

export const NET_CONFIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_HTTP_HEADER_TIMEOUT', 'time a client has to send complete request headers, from connecting or from its previous request: 500ms/30s/1m (default 30s)'],
  ['SVC_HTTP_IDLE_TIMEOUT', 'a connection on which nothing moves while the server waits on the client (stalled body, client not reading) is closed after this (default 30s)'],
  ['SVC_HTTP_BODY_TIMEOUT', 'a request body must deliver SVC_HTTP_BODY_MIN_BYTES (or its rest) within each period this long, else 400 RequestTimeout (default 30s)'],
  ['SVC_HTTP_BODY_MIN_BYTES', 'bytes a request body must deliver per SVC_HTTP_BODY_TIMEOUT (default 16KiB; 0: only a body that stops completely times out)'],
  ['SVC_HTTP_MAX_CONNECTIONS', 'inbound connections of all clients together (default: half the raised descriptor limit, at most 32768); more are answered 503 and closed'],
  ['SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 'inbound connections of one client address, cluster peers exempt (default: a quarter of SVC_HTTP_MAX_CONNECTIONS)'],
];

/**
 * Internode call deadlines and how fast an unresponsive peer is taken out
 * of service (`cluster/rpc-client.ts`; `docs/cluster.md` "Deadlines and
 * slow peers").
 */
export interface RpcLimits {
  /** Deadline to the answer of a metadata call (journal reads, commits, deletes, locks take less). */
  readonly callTimeoutMs: number;
  /** Longest silence inside a shard stream, and longest an upload may sit unaccepted. */
  readonly streamTimeoutMs: number;
  /** A call waiting this long without a byte from the peer makes the client ping it. */
  readonly stallCheckMs: number;
  /** A peer that does not answer that ping within this long is unresponsive: offline, its calls failed at once. */
  readonly pingTimeoutMs: number;
}

export const DEFAULT_RPC_LIMITS: RpcLimits = Object.freeze({
  callTimeoutMs: 10_000,
  streamTimeoutMs: 30_000,
  stallCheckMs: 250,
  pingTimeoutMs: 500,
});

export const RPC_CONFIG_VARIABLES: readonly (readonly [string, string])[] = [
  ['SVC_RPC_TIMEOUT', 'deadline of an internode metadata call (default 10s)'],
  ['SVC_RPC_STREAM_TIMEOUT', 'longest silence inside an internode shard stream (default 30s)'],
  ['SVC_RPC_STALL_CHECK', 'an internode call waiting this long without a byte back makes the node ping its peer (default 250ms)'],
  ['SVC_RPC_PING_TIMEOUT', 'a peer that does not answer that ping within this long is taken offline and its calls fail at once (default 500ms)'],
];

type Env = Readonly<Record<string, string | undefined>>;

function invalid(variable: string, message: string): SvcError {
  return new SvcError('InvalidConfig', `${variable}: ${message}`, { variable });
}

/** A duration: seconds, or `<n>ms|s|m`; at least `minMs`, at most one hour. */
export function parseTimeout(variable: string, raw: string | undefined, dflt: number, minMs = 100): number {
  if (raw === undefined || raw.trim() === '') return dflt;
  const m = /^([0-9]+)(ms|s|m)?$/.exec(raw.trim());
  if (!m) throw invalid(variable, `invalid duration "${raw}"; expected seconds or a value like 500ms, 30s, 1m`);
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  if (ms < minMs) throw invalid(variable, `at least ${minMs}ms`);
  if (ms > 3_600_000) throw invalid(variable, 'at most 1h');
  return ms;
}

function count(variable: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^[0-9]+$/.test(raw.trim())) throw invalid(variable, `invalid integer "${raw}"`);
  const n = Number(raw.trim());
  if (n < min) throw invalid(variable, `at least ${min}`);
  return n;
}

export function parseHttpLimits(env: Env): HttpLimits {
  const minBytes = (env.SVC_HTTP_BODY_MIN_BYTES ?? '').trim();
  return Object.freeze({
    headerTimeoutMs: parseTimeout('SVC_HTTP_HEADER_TIMEOUT', env.SVC_HTTP_HEADER_TIMEOUT, DEFAULT_HTTP_LIMITS.headerTimeoutMs),
    idleTimeoutMs: parseTimeout('SVC_HTTP_IDLE_TIMEOUT', env.SVC_HTTP_IDLE_TIMEOUT, DEFAULT_HTTP_LIMITS.idleTimeoutMs),
    bodyTimeoutMs: parseTimeout('SVC_HTTP_BODY_TIMEOUT', env.SVC_HTTP_BODY_TIMEOUT, DEFAULT_HTTP_LIMITS.bodyTimeoutMs),
    bodyMinBytes: minBytes === '' ? DEFAULT_HTTP_LIMITS.bodyMinBytes : parseByteSize(minBytes, 'SVC_HTTP_BODY_MIN_BYTES'),
    maxConnections: count('SVC_HTTP_MAX_CONNECTIONS', env.SVC_HTTP_MAX_CONNECTIONS, 1),
    maxConnectionsPerAddress: count('SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS', env.SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS, 1),
  });
}

/**
 * The connection caps in force for a descriptor limit: the global cap leaves
 * half the descriptors to drives, internode connections and the runtime;
 * one address gets a quarter of it.
 */
export function connectionCaps(limits: HttpLimits, descriptorLimit: number): { global: number; perAddress: number } {
  const global = limits.maxConnections ?? Math.max(64, Math.min(32_768, Math.floor(descriptorLimit / 2)));
  const perAddress = limits.maxConnectionsPerAddress ?? Math.max(16, Math.floor(global / 4));
  return { global, perAddress };
}

export function parseRpcLimits(env: Env): RpcLimits {
  return Object.freeze({
    callTimeoutMs: parseTimeout('SVC_RPC_TIMEOUT', env.SVC_RPC_TIMEOUT, DEFAULT_RPC_LIMITS.callTimeoutMs, 500),
    streamTimeoutMs: parseTimeout('SVC_RPC_STREAM_TIMEOUT', env.SVC_RPC_STREAM_TIMEOUT, DEFAULT_RPC_LIMITS.streamTimeoutMs, 500),
    stallCheckMs: parseTimeout('SVC_RPC_STALL_CHECK', env.SVC_RPC_STALL_CHECK, DEFAULT_RPC_LIMITS.stallCheckMs, 10),
    pingTimeoutMs: parseTimeout('SVC_RPC_PING_TIMEOUT', env.SVC_RPC_PING_TIMEOUT, DEFAULT_RPC_LIMITS.pingTimeoutMs, 50),
  });
}

/** A socket's remote address without the IPv4-mapped prefix (`::ffff:10.0.0.1` → `10.0.0.1`); '' when unknown. */
export function normaliseAddress(a: string | undefined): string {
  if (a === undefined) return '';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

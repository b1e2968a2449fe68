/**
 * Internode RPC client for one peer node.
 *
 * Two keep-alive undici pools per peer: one for storage traffic (long
 * streamed shard uploads and downloads) and a small one for peer calls
 * (health, locks), so a lock refresh never queues behind shard data.
 *
 * Health: a connection-level failure (refused, reset, unresolvable host,
 * timeout) marks the peer offline at once. While offline every call fails
 * fast with `DiskNotFound` and a background probe (`/svc/peer/v1/health`)
 * retries with exponential backoff on the injected clock; the first success
 * brings the peer back online. Requests never wait for the probe.
 *
 * TLS: an https:// origin is verified against the node's CA set
 * (`tls/trust.ts`), host name included. A peer whose certificate is refused
 * (or whose handshake fails) counts as offline like an unreachable one, is
 * named in the log once per reason (`peer_tls_refused`), and its refusal is
 * kept for the readiness detail until a call succeeds.
 */
import { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { type ClientTrust, staticTrust, tlsConnector, tlsFailureReason } from '../tls/trust.ts';
import type { Clock } from '../util/clock.ts';
import { type RpcClientMessage, rpcClient } from '../util/diagnostics.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { RPC_TOKEN_HEADER, type RpcAuth } from './rpc-auth.ts';
import {
  decodeMsg,
  encodeMsg,
  errorFromWire,
  FRAME_END,
  FRAME_ERROR,
  FRAME_RECORD,
  FrameParser,
  peerPath,
  RPC_ARGS_HEADER,
  RPC_MAX_UNARY_BYTES,
} from './rpc-wire.ts';

export interface PeerClientOptions {
  /** The peer's origin, e.g. `http://127.0.0.2:9000`. */
  origin: string;
  /** This node's id, carried in every token. */
  nodeId: string;
  auth: RpcAuth;
  clock: Clock;
  logger: Logger;
  connectTimeoutMs?: number;
  /** Time to the response headers for unary calls and downloads. */
  headersTimeoutMs?: number;
  /** Longest silence inside a response body. */
  bodyTimeoutMs?: number;
  /** Longest time an upload may sit blocked on the peer not accepting data (default 30 s). */
  uploadStallMs?: number;
  /** First and largest delay of the background reconnect probe. */
  probeBaseMs?: number;
  probeMaxMs?: number;
  /**
   * Connection cap of the storage pool (default: none). A shard stream holds
   * its connection for the whole upload and a writer needs one per drive of
   * the peer at once, so a small cap could leave writers each holding some
   * connections and waiting for the rest; the server side bounds the load.
   */
  connections?: number;
  /** Trust for an https origin (default: Node's default roots). */
  tls?: ClientTrust;
  /**
   * Responsiveness watch: a call waiting this long without a byte from the
   * peer (default 250 ms) makes the client ping it on a connection of its
   * own; no answer within `pingTimeoutMs` (default 500 ms) takes the peer
   * offline and fails every call waiting on it at once.
   */
  stallCheckMs?: number;
  pingTimeoutMs?: number;
}

/** One call in flight: when the peer last sent something for it, and how to fail it. */
interface Inflight {
  progressAt: number;
  readonly abort: AbortController;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the headers timeout for this call. */
  timeoutMs?: number;
}

type StateListener = (online: boolean) => void;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EPIPE',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export class PeerClient {
  readonly origin: string;
  readonly #nodeId: string;
  readonly #auth: RpcAuth;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #data: Pool;
  readonly #control: Pool;
  readonly #headersTimeoutMs: number;
  readonly #uploadStallMs: number;
  readonly #probeBaseMs: number;
  readonly #probeMaxMs: number;
  #online = true;
  #offlineReason: 'unreachable' | 'unresponsive' = 'unreachable';
  #probing = false;
  /** Why the peer's TLS was refused, until a call succeeds. */
  #tlsRefusal: string | undefined;
  /** Cuts the probe loop's current backoff sleep short (probeNow). */
  #wakeProbe: AbortController | undefined;
  #closed = false;
  readonly #closeController = new AbortController();
  readonly #listeners = new Set<StateListener>();
  /** Calls waiting on the peer (responsiveness watch). */
  readonly #inflight = new Set<Inflight>();
  readonly #ping: Pool;
  readonly #stallCheckMs: number;
  readonly #pingTimeoutMs: number;
  #pinging = false;
  #lastPingAt = Number.NEGATIVE_INFINITY;
  /** Last time any byte came back from the peer (answers, stream chunks, an upload it read on). */
  #lastHeardAt = Number.NEGATIVE_INFINITY;
  /** Records that the peer just sent something; returns the time. */
  readonly #heard = (): number => {
    this.#lastHeardAt = this.#clock.now();
    return this.#lastHeardAt;
  };
  #stopWatch: (() => void) | undefined;

  constructor(opts: PeerClientOptions) {
    this.origin = opts.origin;
    this.#nodeId = opts.nodeId;
    this.#auth = opts.auth;
    this.#clock = opts.clock;
    this.#logger = opts.logger;
    this.#headersTimeoutMs = opts.headersTimeoutMs ?? 30_000;
    this.#uploadStallMs = opts.uploadStallMs ?? 30_000;
    this.#probeBaseMs = opts.probeBaseMs ?? 250;
    this.#probeMaxMs = opts.probeMaxMs ?? 2_000;
    const connectTimeout = opts.connectTimeoutMs ?? 5_000;
    const common = {
      connectTimeout,
      headersTimeout: this.#headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs ?? 30_000,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      // https peers: a connector that follows the CA set as certificates rotate (it carries the connect timeout itself)
      ...(opts.origin.startsWith('https:') ? { connect: tlsConnector(opts.tls ?? staticTrust([]), { timeout: connectTimeout }) } : {}),
    };
    this.#data = new Pool(opts.origin, { ...common, connections: opts.connections ?? null });
    this.#control = new Pool(opts.origin, { ...common, connections: 8 });
    this.#stallCheckMs = opts.stallCheckMs ?? 250;
    this.#pingTimeoutMs = opts.pingTimeoutMs ?? 500;
    // Its own connection: a ping never queues behind calls the peer leaves waiting.
    this.#ping = new Pool(opts.origin, { ...common, connections: 1 });
  }

  /** Starts tracking a call; `signal` fails it when the peer is found unresponsive. */
  #track(): Inflight {
    const call: Inflight = { progressAt: this.#clock.now(), abort: new AbortController() };
    this.#inflight.add(call);
    this.#stopWatch ??= this.#clock.every(Math.max(5, Math.floor(this.#stallCheckMs / 2)), () => this.#watch());
    return call;
  }

  #untrack(call: Inflight): void {
    this.#inflight.delete(call);
    if (this.#inflight.size === 0 && this.#stopWatch !== undefined) {
      this.#stopWatch();
      this.#stopWatch = undefined;
    }
  }

  /** A call waits without a byte back for `stallCheckMs`: ask the peer whether it is there at all. */
  #watch(): void {
    if (!this.#online || this.#closed || this.#pinging) return;
    const now = this.#clock.now();
    if (now - this.#lastPingAt < this.#stallCheckMs) return;
    let stalled = false;
    for (const c of this.#inflight) if (now - c.progressAt >= this.#stallCheckMs) stalled = true;
    if (!stalled) return;
    this.#pinging = true;
    this.#lastPingAt = now;
    void this.#pingOnce()
      .then((ok) => {
        // A peer that sent anything while the ping waited is alive (busy, not frozen).
        if (ok || this.#lastHeardAt >= now) return;
        this.#markOffline(new SvcError('DiskNotFound', `peer ${this.origin} is unresponsive: calls waited ${this.#stallCheckMs} ms without an answer and a health ping got none within ${this.#pingTimeoutMs} ms`, { remote: this.origin }), 'unresponsive');
      })
      .finally(() => {
        this.#pinging = false;
      });
  }

  async #pingOnce(): Promise<boolean> {
    const path = peerPath('health');
    const body = encodeMsg(undefined);
    // Our own timer: undici's request timeouts tick at about one second.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.#pingTimeoutMs);
    try {
      const res = await this.#ping.request({
        method: 'POST',
        path,
        body,
        headers: { [RPC_TOKEN_HEADER]: this.#auth.sign('POST', path, this.#nodeId, body) },
        signal: AbortSignal.any([deadline.signal, this.#closeController.signal]),
      });
      await readAll(res.body, this.origin);
      return true;
    } catch (err) {
      // Only silence counts: an error answer (a refused token, a restarting peer) is an answer.
      return !(deadline.signal.aborted || isNetworkError(err) || tlsFailureReason(err) !== undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  /** False while the peer is considered offline (calls fail fast). */
  isOnline(): boolean {
    return this.#online && !this.#closed;
  }

  /** Why this peer's TLS certificate or handshake was refused (until a call succeeds). */
  tlsRefusal(): string | undefined {
    return this.#tlsRefusal;
  }

  /** Called with the new state whenever the peer goes offline or comes back. */
  onStateChange(listener: StateListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Unary call: msgpack args → msgpack result. `control` calls use the small pool. */
  async rpcCall(path: string, args: unknown, opts: CallOptions & { control?: boolean } = {}): Promise<unknown> {
    const call = this.#track();
    try {
      const res = await this.#request(opts.control === true ? this.#control : this.#data, path, encodeMsg(args), {}, opts, call);
      return decodeMsg(await readAll(res.body, this.origin, call, this.#heard));
    } finally {
      this.#untrack(call);
    }
  }

  /**
   * Streams `body` to the peer; args travel in a header. A slow source is
   * fine; a peer that stops accepting data for `uploadStallMs` is treated as
   * unreachable (the upload is aborted, the peer marked offline).
   */
  async rpcUpload(path: string, args: unknown, body: AsyncIterable<Uint8Array>, opts: CallOptions = {}): Promise<unknown> {
    const clock = this.#clock;
    let sourceError: unknown;
    let sourceFailed = false;
    // Set while a chunk was handed over and the transport has not asked for the next.
    let blockedSince: number | undefined;
    const call = this.#track();
    const heard = this.#heard;
    async function* guarded(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) {
          // The transport took the previous chunk: the peer is reading.
          blockedSince = heard();
          call.progressAt = blockedSince;
          // A copy: the stream reads ahead and the socket queues what it cannot send yet,
          // while the source (Drive.createFile's contract) recycles a chunk as soon as the
          // next is pulled: a recycled frame went out overwritten and the peer refused it
          // ("bitrot check while written") whenever the link was slow or the node loaded.
          yield Buffer.copyBytesFrom(chunk);
          blockedSince = undefined;
          // Waiting on our own source is no silence of the peer's.
          call.progressAt = Number.POSITIVE_INFINITY;
        }
        call.progressAt = clock.now();
      } catch (err) {
        sourceFailed = true;
        sourceError = err;
        throw err;
      }
    }
    const stall = new AbortController();
    const signal = opts.signal === undefined ? stall.signal : AbortSignal.any([opts.signal, stall.signal]);
    const stopWatch = clock.every(Math.max(10, Math.floor(this.#uploadStallMs / 4)), () => {
      if (blockedSince !== undefined && clock.now() - blockedSince >= this.#uploadStallMs) {
        stall.abort(new SvcError('DiskNotFound', `peer ${this.origin} stopped accepting upload data`, { remote: this.origin }));
      }
    });
    const headers = { [RPC_ARGS_HEADER]: encodeMsg(args).toString('base64url') };
    try {
      // The headers timer would run while a slow source trickles the body in;
      // the stall watch and socket errors bound an upload instead.
      const res = await this.#request(
        this.#data,
        path,
        Readable.from(guarded(), { objectMode: false }),
        headers,
        { ...opts, signal, timeoutMs: opts.timeoutMs ?? 0 },
        call,
        () => sourceFailed || stall.signal.aborted,
      );
      return decodeMsg(await readAll(res.body, this.origin, call, this.#heard));
    } catch (err) {
      // The stall check comes first: aborting also throws into the source.
      if (stall.signal.aborted) {
        this.#markOffline(stall.signal.reason);
        throw stall.signal.reason;
      }
      if (call.abort.signal.aborted) throw call.abort.signal.reason;
      if (sourceFailed) throw sourceError;
      throw err;
    } finally {
      stopWatch();
      this.#untrack(call);
    }
  }

  /** Returns the peer's raw byte stream; errors before the body are re-thrown as SvcError. */
  async rpcDownload(path: string, args: unknown, opts: CallOptions = {}): Promise<Readable> {
    const call = this.#track();
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#request(this.#data, path, encodeMsg(args), {}, opts, call);
    } catch (err) {
      this.#untrack(call);
      throw err;
    }
    const origin = this.origin;
    const body = res.body;
    const clock = this.#clock;
    const heard = this.#heard;
    async function* guarded(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of body) {
          heard();
          // While the consumer works on a chunk the peer is not silent: only the wait for the next counts.
          call.progressAt = Number.POSITIVE_INFINITY;
          yield chunk as Buffer;
          call.progressAt = clock.now();
        }
      } catch (err) {
        if (call.abort.signal.aborted) throw call.abort.signal.reason;
        throw new SvcError('DiskNotFound', 'remote stream interrupted', { remote: origin }, { cause: err });
      }
    }
    const out = Readable.from(guarded(), { objectMode: false });
    out.once('close', () => {
      this.#untrack(call);
      if (!body.destroyed) body.destroy();
    });
    return out;
  }

  /** A stream of msgpack records; a truncated stream or a remote error frame throws. */
  async *rpcRecords(path: string, args: unknown, opts: CallOptions = {}): AsyncGenerator<unknown> {
    const call = this.#track();
    try {
      const res = await this.#request(this.#data, path, encodeMsg(args), {}, opts, call);
      const parser = new FrameParser();
      try {
        for await (const chunk of res.body) {
          this.#heard();
          call.progressAt = Number.POSITIVE_INFINITY;
          for (const frame of parser.push(chunk as Buffer)) {
            if (frame.type === FRAME_RECORD) yield decodeMsg(frame.payload);
            else if (frame.type === FRAME_END) return;
            else if (frame.type === FRAME_ERROR) throw errorFromWire(decodeMsg(frame.payload), this.origin);
            else throw new SvcError('InternalError', `unknown RPC frame type ${frame.type}`);
          }
          call.progressAt = this.#clock.now();
        }
      } catch (err) {
        if (err instanceof SvcError) throw err;
        if (call.abort.signal.aborted) throw call.abort.signal.reason;
        throw new SvcError('DiskNotFound', 'remote record stream interrupted', { remote: this.origin }, { cause: err });
      } finally {
        if (!res.body.destroyed) res.body.destroy();
      }
      throw new SvcError('DiskNotFound', 'remote record stream truncated', { remote: this.origin });
    } finally {
      this.#untrack(call);
    }
  }

  /** Stops the probe and closes the pools. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeController.abort();
    this.#stopWatch?.();
    await Promise.allSettled([this.#data.destroy(), this.#control.destroy(), this.#ping.destroy()]);
  }

  async #request(
    pool: Pool,
    path: string,
    body: Buffer | Readable,
    headers: Record<string, string>,
    opts: CallOptions,
    call: Inflight,
    isLocalFailure: () => boolean = () => false,
  ): Promise<Dispatcher.ResponseData> {
    // The token covers the arguments: the body of a unary call, the args header of an upload.
    const sent: Record<string, string> = {
      ...headers,
      [RPC_TOKEN_HEADER]: this.#auth.sign('POST', path, this.#nodeId, body instanceof Uint8Array ? body : Buffer.from(headers[RPC_ARGS_HEADER] ?? '', 'utf8')),
    };
    if (!rpcClient.hasSubscribers) return this.#send(pool, path, body, sent, opts, call, isLocalFailure);
    // Observed: subscribers may add trace context to `sent` before it leaves.
    const msg: RpcClientMessage = { origin: this.origin, path, method: path.slice(path.lastIndexOf('/') + 1), headers: sent };
    return rpcClient.tracePromise(() => this.#send(pool, path, body, sent, opts, call, isLocalFailure), msg);
  }

  async #send(
    pool: Pool,
    path: string,
    body: Buffer | Readable,
    headers: Record<string, string>,
    opts: CallOptions,
    call: Inflight,
    isLocalFailure: () => boolean,
  ): Promise<Dispatcher.ResponseData> {
    if (this.#closed) throw new SvcError('DiskNotFound', 'peer client closed', { remote: this.origin });
    if (!this.#online) throw new SvcError('DiskNotFound', `peer ${this.origin} is offline`, { remote: this.origin });
    let res: Dispatcher.ResponseData;
    try {
      res = await pool.request({
        method: 'POST',
        path,
        body,
        headers,
        signal: opts.signal === undefined ? call.abort.signal : AbortSignal.any([opts.signal, call.abort.signal]),
        ...(opts.timeoutMs !== undefined ? { headersTimeout: opts.timeoutMs } : {}),
      });
      call.progressAt = this.#clock.now();
      this.#lastHeardAt = call.progressAt;
    } catch (err) {
      // Failed by the responsiveness watch: the peer was found unresponsive.
      if (call.abort.signal.aborted) throw call.abort.signal.reason;
      if (isLocalFailure() || opts.signal?.aborted === true) throw err;
      const tls = tlsFailureReason(err);
      if (tls !== undefined) {
        this.#refuseTls(tls);
        this.#markOffline(err);
        throw new SvcError('DiskNotFound', `peer ${this.origin} refused: ${tls}`, { remote: this.origin }, { cause: err });
      }
      if (isNetworkError(err)) {
        this.#markOffline(err);
        throw new SvcError('DiskNotFound', `peer ${this.origin} unreachable`, { remote: this.origin }, { cause: err });
      }
      throw new SvcError('InternalError', `internode RPC to ${this.origin} failed`, { remote: this.origin }, { cause: err });
    }
    this.#tlsRefusal = undefined;
    if (res.statusCode !== 200) {
      let wire: unknown;
      try {
        wire = decodeMsg(await readAll(res.body, this.origin));
      } catch {
        wire = { code: 'InternalError', message: `internode RPC answered HTTP ${res.statusCode}` };
      }
      throw errorFromWire(wire, this.origin);
    }
    return res;
  }

  /**
   * Evidence that the peer is up (it just called us): an offline client
   * probes now instead of waiting out its backoff, so a restarted node is
   * used again within a round trip rather than up to `probeMaxMs` later.
   */
  probeNow(): void {
    if (this.#online || this.#closed) return;
    this.#wakeProbe?.abort();
  }

  #refuseTls(reason: string): void {
    if (reason === this.#tlsRefusal) return;
    this.#tlsRefusal = reason;
    this.#logger.error(
      { event: 'peer_tls_refused', peer: this.origin, reason },
      `peer ${this.origin} refused: its TLS certificate is not trusted or the handshake failed (${reason}); check that every node's certificate comes from a CA in CAs/ and names the host in the volume arguments`,
    );
  }

  /** Why the peer is offline: it refused or dropped connections, or it stopped answering (undefined while online). */
  offlineReason(): 'unreachable' | 'unresponsive' | undefined {
    return this.#online ? undefined : this.#offlineReason;
  }

  #markOffline(err: unknown, why: 'unreachable' | 'unresponsive' = 'unreachable'): void {
    if (!this.#online || this.#closed) return;
    this.#online = false;
    this.#offlineReason = why;
    const waiting = this.#inflight.size;
    this.#logger.warn({ event: 'peer_offline', peer: this.origin, reason: why, callsFailed: waiting, err: String(err) }, `peer went offline (${why}); probing in the background`);
    // Every call still waiting on it fails now: the callers go on with the other drives.
    const fail = err instanceof SvcError ? err : new SvcError('DiskNotFound', `peer ${this.origin} went offline`, { remote: this.origin }, { cause: err });
    for (const c of this.#inflight) c.abort.abort(fail);
    this.#emit(false);
    void this.#probe();
  }

  async #probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    let delay = this.#probeBaseMs;
    try {
      while (!this.#closed && !this.#online) {
        const wake = new AbortController();
        this.#wakeProbe = wake;
        try {
          await this.#clock.sleep(delay, AbortSignal.any([this.#closeController.signal, wake.signal]));
        } catch {
          // Closed, or woken by probeNow(): probe at once.
        } finally {
          this.#wakeProbe = undefined;
        }
        if (this.#closed) return;
        try {
          const path = peerPath('health');
          const body = encodeMsg(undefined);
          const res = await this.#control.request({
            method: 'POST',
            path,
            body,
            headers: { [RPC_TOKEN_HEADER]: this.#auth.sign('POST', path, this.#nodeId, body) },
            headersTimeout: Math.max(1_000, this.#probeMaxMs),
          });
          await readAll(res.body, this.origin);
          this.#tlsRefusal = undefined;
          if (res.statusCode === 200) {
            this.#online = true;
            this.#logger.info({ event: 'peer_online', peer: this.origin }, 'peer is back online');
            this.#emit(true);
            return;
          }
        } catch (err) {
          // Still unreachable: keep probing with a longer delay.
          const tls = tlsFailureReason(err);
          if (tls !== undefined) this.#refuseTls(tls);
        }
        delay = Math.min(delay * 2, this.#probeMaxMs);
      }
    } finally {
      this.#probing = false;
    }
  }

  #emit(online: boolean): void {
    for (const l of this.#listeners) {
      try {
        l(online);
      } catch (err) {
        this.#logger.error({ event: 'peer_listener_failed', err }, 'peer state listener threw');
      }
    }
  }
}

function isNetworkError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

async function readAll(body: AsyncIterable<unknown>, origin: string, call?: Inflight, heard?: () => number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      if (call !== undefined && heard !== undefined) call.progressAt = heard();
      total += (chunk as Buffer).length;
      if (total > RPC_MAX_UNARY_BYTES) throw new SvcError('InternalError', 'internode RPC response too large', { remote: origin });
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof SvcError) throw err;
    if (call?.abort.signal.aborted === true) throw call.abort.signal.reason;
    throw new SvcError('DiskNotFound', 'internode RPC response interrupted', { remote: origin }, { cause: err });
  }
  return Buffer.concat(chunks, total);
}

/**
 * What keeps a hostile or broken client from taking a listener down
 * (`docs/architecture.md` "HTTP limits"):
 *
 * - headers: Node's `headersTimeout` (the listener's options,
 *   `httpServerOptions`): a connection that has not sent complete headers
 *   within `headerTimeoutMs` of connecting (or of its previous request) is
 *   answered 408 and closed — an idle TCP connection included;
 * - body progress: a request body must bring `bodyMinBytes` within every
 *   `bodyTimeoutMs` while the server is waiting for it (a byte every few
 *   seconds is a stall), else 400 `RequestTimeout` and the connection is
 *   closed; time the server itself is not reading (backpressure, a lock
 *   wait, `Expect: 100-continue` before the 100) never counts;
 * - idle: nothing moving in either direction for `idleTimeoutMs` while the
 *   server waits on the client — a stalled body (400 `RequestTimeout`), a
 *   client that stopped reading its response (closed: the GET's read lock
 *   is released) — ends the connection; a server busy on a request (a long
 *   copy, a heal) is not the client's fault and re-arms the timer;
 * - connection caps: at most `perAddress` connections from one address and
 *   `global` from all together; more are answered 503 and closed. Cluster
 *   peers (addresses that made an authenticated internode call) are exempt,
 *   so a flood of clients never cuts the cluster apart;
 * - descriptors: near the process's limit new client requests get 503
 *   `SlowDown` instead of failing deep inside with EMFILE; an EMFILE on
 *   accept is logged, never fatal (the server's `error` event).
 *
 * Internode calls are watched for idleness only: a peer's shard upload
 * moves at the pace of the client behind it.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Server as TlsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Clock } from '../util/clock.ts';
import { ERRORS } from '../util/errors.ts';
import { LogLimiter } from '../util/log-limiter.ts';
import type { Logger } from '../util/logger.ts';
import { type HttpLimits, normaliseAddress } from '../util/net-config.ts';

/** What a request is, for the limits: a client's (all limits, may be shed), a peer's (idle only), a probe (never shed). */
export type WatchKind = 'client' | 'peer' | 'probe';

export interface GuardOptions {
  readonly limits: HttpLimits;
  readonly caps: { readonly global: number; readonly perAddress: number };
  readonly logger: Logger;
  readonly clock: Clock;
  /** Listener name in logs (`s3`, `console`). */
  readonly listener: string;
  /** Open descriptors now and the soft limit (-1 unlimited); sampled once a second for shedding. */
  readonly descriptors?: () => { open: number | undefined; limit: number };
  /** Sweep period of the body-progress check (default 1 s). */
  readonly sweepMs?: number;
  /** Addresses exempt from the connection caps (peers that made an authenticated internode call); normalised (no `::ffff:`). */
  readonly exempt?: (address: string) => boolean;
}

export interface GuardStats {
  readonly connections: number;
  readonly refused: { readonly address: number; readonly global: number };
  readonly timedOut: { readonly body: number; readonly idle: number; readonly reader: number };
  readonly shed: number;
  readonly acceptErrors: number;
}

/** Options for `createServer` that go with the guard. */
export function httpServerOptions(limits: HttpLimits): ServerOptions {
  return {
    // No bound on a whole request (uploads of any size); the guard bounds its progress.
    requestTimeout: 0,
    headersTimeout: limits.headerTimeoutMs,
    keepAliveTimeout: Math.min(5_000, limits.idleTimeoutMs),
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headerTimeoutMs / 4))),
  };
}

interface Watched {
  readonly req: IncomingMessage;
  /** The request's connection, kept here: `req.socket` may be null by the time a sweep looks (seen after a SIGSTOP/SIGCONT). */
  readonly socket: Socket;
  readonly res: ServerResponse;
  readonly kind: WatchKind;
  windowAt: number;
  windowBytes: number;
  fired: boolean;
}

const RAW_503 = 'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n';

function xml(code: 'RequestTimeout' | 'SlowDown', message: string, resource: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${esc(message)}</Message><Resource>${esc(resource)}</Resource></Error>`;
}

export class HttpGuard {
  readonly #o: GuardOptions;
  readonly #log: LogLimiter;
  readonly #perAddress = new Map<string, number>();
  readonly #refusedSockets = new WeakSet<Socket>();
  /** Connections that carried a request (an idle timeout then means keep-alive expiry). */
  readonly #served = new WeakSet<Socket>();
  readonly #active = new Map<Socket, Watched>();
  #connections = 0;
  #stats = { refusedAddress: 0, refusedGlobal: 0, body: 0, idle: 0, reader: 0, shed: 0, acceptErrors: 0 };
  #descriptorsHigh = false;
  /** The listener speaks TLS: a refused connection is closed without a plain-text answer. */
  #tls = false;
  readonly #stopSweep: () => void;

  constructor(opts: GuardOptions) {
    this.#o = opts;
    this.#log = new LogLimiter(opts.logger, opts.clock);
    this.#stopSweep = opts.clock.every(opts.sweepMs ?? 1_000, () => this.#sweep());
  }

  /** One warning per event (and reason) every ten seconds. */
  #warn(event: string, fields: Record<string, unknown>, message: string): void {
    this.#log.warn(`${event}:${String(fields['reason'] ?? '')}`, { event, ...fields }, message);
  }

  get limits(): HttpLimits {
    return this.#o.limits;
  }

  /** Applies the limits to a listener (created with `httpServerOptions`); TLS listeners too. */
  attach(server: Server | TlsServer): void {
    const opts = this.#o;
    this.#tls = 'setSecureContext' in server;
    server.timeout = opts.limits.idleTimeoutMs;
    server.prependListener('connection', (socket: Socket) => this.#onConnection(socket));
    server.on('timeout', (socket: Socket) => this.#onTimeout(socket));
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (err.syscall === 'listen' || err.syscall === 'bind') return; // the listener reports bind failures
      this.#stats.acceptErrors++;
      this.#warn(
        'http_accept_failed',
        { listener: opts.listener, code: err.code, err: err.message },
        err.code === 'EMFILE' || err.code === 'ENFILE' ? 'out of file descriptors accepting a connection; it was dropped' : 'accepting a connection failed',
      );
    });
  }

  get caps(): { global: number; perAddress: number } {
    return { ...this.#o.caps };
  }

  stats(): GuardStats {
    const s = this.#stats;
    return {
      connections: this.#connections,
      refused: { address: s.refusedAddress, global: s.refusedGlobal },
      timedOut: { body: s.body, idle: s.idle, reader: s.reader },
      shed: s.shed,
      acceptErrors: s.acceptErrors,
    };
  }

  /**
   * Starts watching a request (call first thing in the request handler).
   * Returns false when the request must not be served: its connection was
   * refused by a cap, or it was shed (already answered 503).
   */
  watch(req: IncomingMessage, res: ServerResponse, kind: WatchKind): boolean {
    const socket = req.socket;
    if (this.#refusedSockets.has(socket)) {
      res.destroy();
      return false;
    }
    if (kind === 'client' && this.#descriptorsHigh) {
      this.#stats.shed++;
      this.#warn('http_request_shed', { listener: this.#o.listener, remote: normaliseAddress(socket.remoteAddress) }, 'near the file descriptor limit: new requests get 503 SlowDown');
      const body = xml('SlowDown', 'The server is short of file descriptors; retry later.', (req.url ?? '/').split('?')[0]!);
      res.writeHead(ERRORS.SlowDown.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), 'retry-after': '5', connection: 'close' });
      res.end(req.method === 'HEAD' ? undefined : body);
      req.resume();
      return false;
    }
    // Node arms `server.timeout` once per connection; a keep-alive connection's later requests need it again.
    socket.setTimeout(this.#o.limits.idleTimeoutMs);
    const w: Watched = { req, res, socket, kind, windowAt: this.#o.clock.now(), windowBytes: socket.bytesRead, fired: false };
    this.#active.set(socket, w);
    this.#served.add(socket);
    res.once('close', () => {
      if (this.#active.get(socket) === w) this.#active.delete(socket);
    });
    return true;
  }

  close(): void {
    this.#stopSweep();
    this.#active.clear();
  }

  #onConnection(socket: Socket): void {
    const addr = normaliseAddress(socket.remoteAddress);
    const trusted = addr !== '' && this.#o.exempt?.(addr) === true;
    const perAddr = this.#perAddress.get(addr) ?? 0;
    let refused: 'global' | 'address' | undefined;
    if (!trusted && this.#connections >= this.#o.caps.global) refused = 'global';
    else if (!trusted && perAddr >= this.#o.caps.perAddress) refused = 'address';
    if (refused !== undefined) {
      if (refused === 'global') this.#stats.refusedGlobal++;
      else this.#stats.refusedAddress++;
      this.#refusedSockets.add(socket);
      this.#warn(
        'http_connection_refused',
        { listener: this.#o.listener, reason: refused, remote: addr, cap: refused === 'global' ? this.#o.caps.global : this.#o.caps.perAddress },
        refused === 'global' ? 'connection cap reached: connection answered 503 and closed' : 'per-address connection cap reached: connection answered 503 and closed',
      );
      socket.on('error', () => undefined);
      if (this.#tls) {
        socket.destroy();
        return;
      }
      socket.end(RAW_503);
      const t = setTimeout(() => socket.destroy(), 2_000);
      t.unref();
      return;
    }
    this.#connections++;
    this.#perAddress.set(addr, perAddr + 1);
    socket.once('close', () => {
      this.#connections--;
      const n = (this.#perAddress.get(addr) ?? 1) - 1;
      if (n <= 0) this.#perAddress.delete(addr);
      else this.#perAddress.set(addr, n);
      this.#active.delete(socket);
    });
  }

  /** The socket saw nothing move for `idleTimeoutMs`. */
  #onTimeout(socket: Socket): void {
    const w = this.#active.get(socket);
    if (w === undefined || w.res.writableEnded) {
      // Before a first request the header timeout answers (408); an idle
      // keep-alive connection (its response out) is closed here.
      if (this.#served.has(socket)) socket.destroy();
      return;
    }
    const { req, res } = w;
    if (socket.writableLength > 0 || res.writableNeedDrain) {
      // The response waits for a client that stopped reading.
      this.#stats.reader++;
      this.#warn('http_client_stopped_reading', this.#fields(w), 'client stopped reading its response; connection closed');
      socket.destroy();
      return;
    }
    if (!req.complete && req.readableFlowing !== null && req.readableLength === 0) {
      this.#stats.idle++;
      this.#timeout(w, 'idle');
      return;
    }
    // The server is busy (reading the body later, computing the answer): not the client's fault.
    socket.setTimeout(this.#o.limits.idleTimeoutMs);
  }

  #sweep(): void {
    const now = this.#o.clock.now();
    const d = this.#o.descriptors?.();
    if (d !== undefined && d.open !== undefined && d.limit > 0) {
      const high = d.open >= Math.floor(d.limit * 0.9);
      if (high && !this.#descriptorsHigh) {
        this.#o.logger.warn({ event: 'descriptors_near_limit', listener: this.#o.listener, open: d.open, limit: d.limit }, 'open file descriptors near the limit: shedding new client requests');
      } else if (!high && this.#descriptorsHigh) {
        this.#o.logger.info({ event: 'descriptors_recovered', listener: this.#o.listener, open: d.open, limit: d.limit }, 'open file descriptors back below 90% of the limit');
      }
      this.#descriptorsHigh = high;
    }
    const { bodyTimeoutMs, bodyMinBytes } = this.#o.limits;
    for (const w of this.#active.values()) {
      if (w.kind !== 'client' || w.fired || w.req.complete || w.socket.destroyed) continue;
      const bytes = w.socket.bytesRead;
      // Only time the server spends waiting on the client counts.
      const waiting = w.req.readableFlowing !== null && w.req.readableLength === 0;
      if (!waiting || bytes - w.windowBytes >= Math.max(1, bodyMinBytes)) {
        w.windowAt = now;
        w.windowBytes = bytes;
        continue;
      }
      if (now - w.windowAt >= bodyTimeoutMs && (bodyMinBytes > 0 || bytes === w.windowBytes)) {
        this.#stats.body++;
        this.#timeout(w, 'body');
      }
    }
  }

  #fields(w: Watched): Record<string, unknown> {
    return { listener: this.#o.listener, remote: normaliseAddress(w.socket.remoteAddress), method: w.req.method, path: (w.req.url ?? '/').split('?')[0] };
  }

  /** Answers a stalled request `RequestTimeout` (clients) and closes its connection. */
  #timeout(w: Watched, why: 'body' | 'idle'): void {
    w.fired = true;
    const { req, res, socket } = w;
    this.#warn(
      'http_request_timeout',
      { ...this.#fields(w), reason: why === 'body' ? `body delivered less than ${this.#o.limits.bodyMinBytes} bytes in ${this.#o.limits.bodyTimeoutMs} ms` : `nothing received for ${this.#o.limits.idleTimeoutMs} ms` },
      'request body stalled: answered RequestTimeout and closed the connection',
    );
    if (w.kind === 'peer' || res.headersSent) {
      socket.destroy();
      return;
    }
    const body = xml('RequestTimeout', ERRORS.RequestTimeout.message, (req.url ?? '/').split('?')[0]!);
    const t = setTimeout(() => socket.destroy(), 5_000);
    t.unref();
    res.once('finish', () => {
      clearTimeout(t);
      socket.destroy();
    });
    try {
      res.writeHead(ERRORS.RequestTimeout.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), connection: 'close' });
      res.end(body);
    } catch {
      socket.destroy();
    }
  }
}


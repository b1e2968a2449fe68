/**
 * Internode RPC server: one `(req, res) => void` handler that the composition
 * root mounts for every path under `/svc/rpc/` and `/svc/peer/` on the S3
 * listener. It authenticates the request before anything else (403 and no
 * side effect when the token is missing, forged or expired), routes to a
 * registered drive service or peer method, and speaks the wire format of
 * `rpc-wire.ts`.
 */

import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { closeAfterLinger } from '../util/lingering-close.ts';
import { RPC_TOKEN_HEADER, type RpcAuth, type VerifiedToken } from './rpc-auth.ts';
import {
  decodeMsg,
  encodeFrame,
  encodeMsg,
  errorToWire,
  FRAME_END,
  FRAME_ERROR,
  FRAME_RECORD,
  RPC_ARGS_HEADER,
  RPC_ERROR_HEADER,
  RPC_KIND_HEADER,
  RPC_MAX_UNARY_BYTES,
  RPC_PEER_PREFIX,
  RPC_STORAGE_PREFIX,
} from './rpc-wire.ts';

/** Per-call context handed to every method. */
export interface RpcContext {
  /** Node id of the authenticated caller. */
  readonly caller: string;
  /** Aborted when the caller disconnects before the response is complete. */
  readonly signal: AbortSignal;
}

export type RpcMethod =
  | { readonly kind: 'unary'; handle(args: unknown, ctx: RpcContext): Promise<unknown> }
  | { readonly kind: 'upload'; handle(args: unknown, body: AsyncIterable<Uint8Array>, ctx: RpcContext): Promise<unknown> }
  | { readonly kind: 'download'; handle(args: unknown, ctx: RpcContext): Promise<Readable> }
  | { readonly kind: 'records'; handle(args: unknown, ctx: RpcContext): AsyncIterable<unknown> };

/** A named set of methods: one drive's storage operations, or peer operations. */
export type RpcService = Readonly<Record<string, RpcMethod>>;

export interface RpcServerOptions {
  auth: RpcAuth;
  logger: Logger;
  /** Called with the node id and the address of every authenticated caller (it is alive, and a peer), and the clock skew its token showed. */
  onCaller?: (nodeId: string, address: string | undefined, skewMs: number) => void;
  /**
   * The cluster's members (`host:port` of every node): a token naming any
   * other node is refused, however good its signature (a node started with
   * other volume arguments, or a client holding the root secret).
   */
  isMember?: (nodeId: string) => boolean;
  /** A call refused because the caller's clock is off by more than the token window: who, and by how much. */
  onClockSkew?: (nodeId: string, skewMs: number) => void;
}

export class RpcServer {
  readonly #auth: RpcAuth;
  readonly #logger: Logger;
  readonly #drives = new Map<string, RpcService>();
  readonly #peer = new Map<string, RpcMethod>();
  readonly #onCaller: ((nodeId: string, address: string | undefined, skewMs: number) => void) | undefined;
  readonly #isMember: ((nodeId: string) => boolean) | undefined;
  readonly #onClockSkew: ((nodeId: string, skewMs: number) => void) | undefined;

  constructor(opts: RpcServerOptions) {
    this.#auth = opts.auth;
    this.#logger = opts.logger;
    this.#onCaller = opts.onCaller;
    this.#isMember = opts.isMember;
    this.#onClockSkew = opts.onClockSkew;
    // The reconnect probe of every client (rpc-client.ts) calls this.
    this.#peer.set('health', { kind: 'unary', handle: async () => ({ ok: true }) });
  }

  /** Serves one local drive's storage operations under `/svc/rpc/v1/<driveId>/`. */
  registerDrive(driveId: string, service: RpcService): void {
    this.#drives.set(driveId, service);
  }

  unregisterDrive(driveId: string): void {
    this.#drives.delete(driveId);
  }

  /** Adds peer methods under `/svc/peer/v1/<method>`; a name may be registered once. */
  registerPeer(service: RpcService): void {
    for (const [name, method] of Object.entries(service)) {
      if (this.#peer.has(name)) throw new SvcError('InternalError', `peer RPC method ${name} registered twice`);
      this.#peer.set(name, method);
    }
  }

  /** The request handler for `/svc/rpc/` and `/svc/peer/`. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.#dispatch(req, res).catch((err: unknown) => {
      this.#logger.error({ event: 'rpc_dispatch_failed', err, url: req.url }, 'internode RPC dispatch failed');
      if (!res.headersSent) sendError(res, err);
      else res.destroy(err instanceof Error ? err : undefined);
    });
  };

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    let token: VerifiedToken;
    try {
      const header = req.headers[RPC_TOKEN_HEADER];
      token = this.#auth.verify(method, url, Array.isArray(header) ? header[0] : header);
      if (this.#isMember !== undefined && !this.#isMember(token.nodeId)) {
        throw new SvcError('AccessDenied', `internode RPC authentication failed: ${token.nodeId} is not a node of this cluster (check that every node has the same volume arguments)`, {
          reason: 'not a member',
          nodeId: token.nodeId,
        });
      }
    } catch (err) {
      this.#logRefused(req, url, err);
      refuse(req, res, err);
      return;
    }
    this.#onCaller?.(token.nodeId, req.socket.remoteAddress, token.skewMs);
    if (method !== 'POST') {
      refuse(req, res, new SvcError('MethodNotAllowed'));
      return;
    }
    const target = this.#route(url);
    if (target instanceof SvcError) {
      refuse(req, res, target);
      return;
    }

    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort(new SvcError('InternalError', 'RPC caller disconnected'));
    });
    const ctx: RpcContext = { caller: token.nodeId, signal: abort.signal };
    // The call's arguments must be the ones the token was signed for.
    const argsOf = async (): Promise<unknown> => {
      const body = await readBody(req);
      this.#checkArgs(req, token, body, url);
      return decodeMsg(body);
    };
    const rpc = target;
    try {
      switch (rpc.kind) {
        case 'unary': {
          const args = await argsOf();
          const result = await rpc.handle(args, ctx);
          sendMsg(res, 200, result);
          return;
        }
        case 'upload': {
          const header = req.headers[RPC_ARGS_HEADER];
          const raw = typeof header === 'string' ? header : '';
          this.#checkArgs(req, token, Buffer.from(raw, 'utf8'), url);
          const args = raw.length > 0 ? decodeMsg(Buffer.from(raw, 'base64url')) : undefined;
          // A handler that stops reading early (the drive is full) must not
          // destroy the request: that resets the connection, the caller's
          // kernel drops the error answered below, and the caller counts a
          // live node unreachable (it took whole nodes offline while one of
          // their drives was full). The rest of the body is discarded instead.
          const result = await rpc.handle(args, req.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>, ctx);
          sendMsg(res, 200, result);
          return;
        }
        case 'download': {
          const args = await argsOf();
          const stream = await rpc.handle(args, ctx);
          res.writeHead(200, { 'content-type': 'application/octet-stream', [RPC_KIND_HEADER]: 'download' });
          // A failure mid-body destroys the response: the client sees a truncated
          // chunked body and fails the read instead of returning short data.
          await pipeline(stream, res).catch((err: unknown) => {
            if (!abort.signal.aborted) this.#logger.warn({ event: 'rpc_stream_failed', url, err }, 'internode RPC download failed mid-stream');
            res.destroy();
          });
          return;
        }
        case 'records': {
          const args = await argsOf();
          await this.#sendRecords(res, rpc.handle(args, ctx), abort.signal, url);
          return;
        }
      }
    } catch (err) {
      if (!(err instanceof SvcError)) this.#logger.warn({ event: 'rpc_handler_error', url, err }, 'internode RPC handler failed');
      if (res.headersSent) res.destroy();
      // An authenticated caller: the answer is sent while the rest of its body is read and dropped.
      else refuse(req, res, err, { keepConnection: true });
    }
  }

  #checkArgs(req: IncomingMessage, token: VerifiedToken, args: Uint8Array, url: string): void {
    try {
      this.#auth.checkArgs(token, args);
    } catch (err) {
      this.#logRefused(req, url, err);
      throw err;
    }
  }

  #logRefused(req: IncomingMessage, url: string, err: unknown): void {
    const d = err instanceof SvcError ? err.details : undefined;
    const reason = d?.['reason'];
    // Who called, when the signature proves it (skew, a node of another layout): the address alone is a proxy's or a loopback's.
    const caller = typeof d?.['nodeId'] === 'string' ? { node: d['nodeId'] } : {};
    if (reason === 'clock skew') {
      if (typeof d?.['nodeId'] === 'string' && typeof d['skewMs'] === 'number') this.#onClockSkew?.(d['nodeId'], d['skewMs']);
      this.#logger.error(
        { event: 'rpc_clock_skew', url, remote: req.socket.remoteAddress, ...caller, skewMs: d?.['skewMs'] },
        err instanceof Error ? err.message : 'internode RPC refused: clock skew',
      );
      return;
    }
    this.#logger.warn({ event: 'rpc_auth_refused', url, remote: req.socket.remoteAddress, reason, ...caller }, 'internode RPC refused');
  }

  async #sendRecords(res: ServerResponse, records: AsyncIterable<unknown>, signal: AbortSignal, url: string): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/x-svc-records', [RPC_KIND_HEADER]: 'records' });
    try {
      for await (const record of records) {
        if (signal.aborted) return;
        if (!res.write(encodeFrame(FRAME_RECORD, encodeMsg(record)))) {
          await Promise.race([once(res, 'drain'), once(res, 'close')]);
        }
      }
      if (!signal.aborted) res.end(encodeFrame(FRAME_END, Buffer.alloc(0)));
    } catch (err) {
      if (!(err instanceof SvcError)) this.#logger.warn({ event: 'rpc_handler_error', url, err }, 'internode RPC record stream failed');
      if (!signal.aborted) res.end(encodeFrame(FRAME_ERROR, encodeMsg(errorToWire(err))));
    }
  }

  #route(url: string): RpcMethod | SvcError {
    const path = url.split('?', 1)[0] ?? '';
    if (path.startsWith(RPC_STORAGE_PREFIX)) {
      const rest = path.slice(RPC_STORAGE_PREFIX.length).split('/');
      if (rest.length !== 2) return new SvcError('InvalidRequest', 'malformed storage RPC path');
      let driveId: string;
      try {
        driveId = decodeURIComponent(rest[0] ?? '');
      } catch {
        return new SvcError('InvalidRequest', 'malformed drive id in storage RPC path');
      }
      const service = this.#drives.get(driveId);
      if (service === undefined) return new SvcError('DiskNotFound', `drive ${driveId} is not served by this node`);
      const m = Object.hasOwn(service, rest[1] ?? '') ? service[rest[1] ?? ''] : undefined;
      return m ?? new SvcError('InvalidRequest', `unknown storage RPC method ${rest[1]}`);
    }
    if (path.startsWith(RPC_PEER_PREFIX)) {
      const name = path.slice(RPC_PEER_PREFIX.length);
      return this.#peer.get(name) ?? new SvcError('InvalidRequest', `unknown peer RPC method ${name}`);
    }
    return new SvcError('InvalidRequest', 'not an internode RPC path');
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > RPC_MAX_UNARY_BYTES) throw new SvcError('EntityTooLarge', 'internode RPC request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

function sendMsg(res: ServerResponse, status: number, value: unknown, errorCode?: string): void {
  const body = encodeMsg(value);
  const headers: Record<string, string | number> = { 'content-type': 'application/msgpack', 'content-length': body.length };
  if (errorCode !== undefined) headers[RPC_ERROR_HEADER] = errorCode;
  res.writeHead(status, headers);
  res.end(body);
}

function sendError(res: ServerResponse, err: unknown): void {
  const wire = errorToWire(err);
  const status = err instanceof SvcError ? err.status : 500;
  sendMsg(res, status, wire, wire.code);
}

/**
 * Answers with an error without acting on the rest of the request body.
 * A stranger's connection is closed (lingering, `util/lingering-close.ts`,
 * so even a stranger reads why); a member's is kept while its remaining
 * body is discarded, so the answer is not lost to a connection reset (undici
 * closes it itself once it has the answer and is still sending).
 */
function refuse(req: IncomingMessage, res: ServerResponse, err: unknown, opts: { keepConnection?: boolean } = {}): void {
  if (!req.complete) {
    if (opts.keepConnection !== true) closeAfterLinger(req, res);
    else req.resume();
  }
  sendError(res, err);
}

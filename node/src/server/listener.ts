/**
 * The one place a listener is built (the S3/admin/RPC listener on 9000, the
 * console on 9001): plain HTTP, or TLS with the certificate store's pairs
 * (`tls/cert-store.ts`: SNI selection, reload without a restart), HTTP/1.1
 * with keep-alive either way. Every request is tagged with the trusted
 * proxies whose `X-Forwarded-*` headers it may carry (`api/request-origin.ts`).
 * Connection-level settings (timeouts, caps: `http-guard.ts`) are applied
 * here, so both listeners get them.
 */
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tagTrustedProxies } from '../api/request-origin.ts';
import type { CertificateStore } from '../tls/cert-store.ts';
import { IpSet } from '../util/ip-set.ts';
import { isClosing } from '../util/lingering-close.ts';
import type { Logger } from '../util/logger.ts';
import { type HttpGuard, httpServerOptions, type WatchKind } from './http-guard.ts';

export type Listener = HttpServer | HttpsServer;

export interface ListenerOptions {
  /** `s3` or `console`, for logs. */
  readonly name: string;
  readonly handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>;
  /** `Expect: 100-continue` requests go to the handler too (the S3 handler sends 100 once a request is authorised). */
  readonly checkContinue?: boolean;
  /** Requests with any other `Expect` value go to the handler too (node:http would answer 417). */
  readonly ignoreExpectations?: boolean;
  /** Serve TLS with these certificates; absent: plain HTTP. */
  readonly tls?: CertificateStore | undefined;
  /** Peers whose `X-Forwarded-*` headers count (none by default). */
  readonly trustedProxies?: IpSet;
  readonly logger?: Logger;
  /** Timeouts, connection caps and shedding (`http-guard.ts`); absent: Node's defaults, no request timeout. */
  readonly guard?: HttpGuard;
  /** What a request is for the guard (default: a client's). */
  readonly kindOf?: (req: IncomingMessage) => WatchKind;
}

export function createListener(o: ListenerOptions): Listener {
  const trusted = o.trustedProxies ?? IpSet.EMPTY;
  const tagged: RequestListener = trusted.empty
    ? o.handler
    : (req, res) => {
        tagTrustedProxies(req, trusted);
        o.handler(req, res);
      };
  const guard = o.guard;
  const kindOf = o.kindOf ?? (() => 'client' as const);
  const watched: RequestListener = guard === undefined ? tagged : (req, res) => void (guard.watch(req, res, kindOf(req)) && tagged(req, res));
  // A request pipelined behind one answered `connection: close` is read and dropped, never served.
  const handle: RequestListener = (req, res) => {
    if (isClosing(req.socket)) req.resume();
    else watched(req, res);
  };
  // Bodies of any length stream for as long as they take (uploads of many GiB): the guard bounds
  // how long headers take and how a body progresses instead.
  const common = guard === undefined ? { requestTimeout: 0 } : httpServerOptions(guard.limits);
  let server: Listener;
  if (o.tls !== undefined) {
    // A TLS handshake is bounded like the request head that follows it (Node's default: 120 s).
    const handshakeTimeout = guard === undefined ? 120_000 : guard.limits.headerTimeoutMs;
    const https = createHttpsServer({ ...common, handshakeTimeout, ...o.tls.serverOptions() }, handle);
    o.tls.attach(https);
    const log = o.logger;
    // A client that does not trust us, or speaks plain HTTP to a TLS port: its problem, logged quietly.
    if (log !== undefined) https.on('tlsClientError', (err: NodeJS.ErrnoException, socket) => log.debug({ event: 'tls_client_error', listener: o.name, peer: socket.remoteAddress, code: err.code, err: err.message }, 'TLS handshake failed'));
    server = https;
  } else {
    server = createHttpServer(common, handle);
  }
  guard?.attach(server);
  if (o.checkContinue === true) server.on('checkContinue', handle);
  if (o.ignoreExpectations === true) server.on('checkExpectation', handle);
  return server;
}

/** `https` or `http`: what clients of `server` use. */
export function schemeOf(server: Listener): 'https' | 'http' {
  return 'setSecureContext' in server ? 'https' : 'http';
}

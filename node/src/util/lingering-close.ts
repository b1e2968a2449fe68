/**
 * Closing a connection whose request body was refused unread.
 *
 * A server that answers before reading the body (no such bucket, over
 * quota, denied) and then closes the socket with client bytes still unread
 * makes the kernel send a reset instead of an orderly close. The reset can
 * reach the client before it has read the answer — and it discards what the
 * server had not transmitted yet — so the client sees `ECONNRESET` / `EPIPE`
 * where it should see the S3 error; the AWS SDKs call that a retryable
 * timeout and upload the whole body again. Web servers solve this with a
 * "lingering close" (Apache's `lingering_close`, nginx's
 * `lingering_close`/`lingering_time`): half-close after the answer, read and
 * drop what the client still sends for a bounded time, then close.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Connections answered `connection: close`: a request that still arrives on one is not served. */
const closing = new WeakSet<Socket>();

/**
 * Whether `socket` was answered `connection: close` and lingers: a request
 * pipelined behind the refused body must not be executed (RFC 9112 §9.6).
 */
export function isClosing(socket: Socket): boolean {
  return closing.has(socket);
}

/** How long a refused body is read and dropped after the answer before the connection is cut. */
export const LINGER_MS = 5_000;

/**
 * Closes `req`'s connection after the answer `res` is about to carry (it is
 * marked `connection: close` here, so call this before writing its head):
 * the answer is followed by a FIN, the rest of the body is read and dropped,
 * and the socket closes when the client closes its side — or after
 * `lingerMs`, whichever comes first.
 */
export function closeAfterLinger(req: IncomingMessage, res: ServerResponse, lingerMs = LINGER_MS): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
  const socket = req.socket;
  if (socket.destroyed) return;
  closing.add(socket);
  // Node ends a `connection: close` response with `socket.destroySoon()`,
  // which closes as soon as the answer is written: for this one socket, that
  // becomes a half-close (the FIN follows the answer; reading goes on).
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    const t = setTimeout(() => socket.destroy(), lingerMs);
    t.unref();
    socket.once('close', () => clearTimeout(t));
  };
  // What still arrives of the body is read and dropped.
  req.resume();
}

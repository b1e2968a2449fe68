/**
 * Internode RPC wire format, shared by the server and the client.
 *
 * Routes (all POST):
 *   /svc/rpc/<version>/<drive-id>/<method>   one drive's storage operation
 *   /svc/peer/<version>/<method>             peer operations (health, locks, signals)
 *
 * Method kinds:
 *   unary     request body = msgpack(args);          response body = msgpack(result)
 *   upload    args = base64url(msgpack) in the `x-svc-rpc-args` header, request
 *             body = the raw byte stream;              response body = msgpack(result)
 *   download  request body = msgpack(args);          response body = the raw byte stream
 *   records   request body = msgpack(args);          response body = a stream of frames
 *
 * A records frame is `[u8 type][u32 BE length][payload]`: type 0 carries one
 * msgpack record, type 1 ends the stream cleanly (empty payload), type 2
 * carries msgpack({code, message}) and ends the stream with that error. A
 * stream without the end frame was truncated and fails on the client.
 *
 * Errors before the response starts: HTTP status of the SvcError, header
 * `x-svc-rpc-error: <code>`, body msgpack({code, message}). The client
 * re-throws the same SvcError code locally.
 */
import { Packr } from 'msgpackr';
import { type ErrorCode, isErrorCode, SvcError } from '../util/errors.ts';

export const RPC_VERSION = 'v1';
export const RPC_STORAGE_PREFIX = `/svc/rpc/${RPC_VERSION}/`;
export const RPC_PEER_PREFIX = `/svc/peer/${RPC_VERSION}/`;
export const RPC_ARGS_HEADER = 'x-svc-rpc-args';
export const RPC_ERROR_HEADER = 'x-svc-rpc-error';
export const RPC_KIND_HEADER = 'x-svc-rpc-kind';

/** Largest msgpack request or response body accepted for unary calls. */
export const RPC_MAX_UNARY_BYTES = 64 * 1024 * 1024;
/** Largest single record frame. */
export const RPC_MAX_RECORD_BYTES = 64 * 1024 * 1024;

export type RpcKind = 'unary' | 'upload' | 'download' | 'records';

const packr = new Packr({ useRecords: false, moreTypes: true });

export function encodeMsg(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeMsg(buf: Uint8Array): unknown {
  if (buf.length === 0) return undefined;
  return packr.unpack(buf);
}

export const FRAME_RECORD = 0;
export const FRAME_END = 1;
export const FRAME_ERROR = 2;

export function encodeFrame(type: number, payload: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

export interface WireError {
  code: string;
  message: string;
}

export function errorToWire(err: unknown): WireError {
  if (err instanceof SvcError) return { code: err.code, message: err.message };
  return { code: 'InternalError', message: err instanceof Error ? err.message : String(err) };
}

/** The local SvcError for an error received from a peer (unknown codes become InternalError). */
export function errorFromWire(wire: unknown, origin: string): SvcError {
  const w = (typeof wire === 'object' && wire !== null ? wire : {}) as Partial<WireError>;
  const code: ErrorCode = typeof w.code === 'string' && isErrorCode(w.code) ? w.code : 'InternalError';
  const message = typeof w.message === 'string' ? w.message : undefined;
  return new SvcError(code, message, { remote: origin });
}

/**
 * Incremental parser of a records frame stream. Feed chunks with `push`;
 * complete frames come out in order.
 */
export class FrameParser {
  // Received bytes not yet parsed, kept as chunks so a large frame arriving
  // in many pieces is joined once, not once per piece.
  #chunks: Buffer[] = [];
  #length = 0;

  push(chunk: Uint8Array): { type: number; payload: Buffer }[] {
    this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.#length += chunk.byteLength;
    const out: { type: number; payload: Buffer }[] = [];
    while (this.#length >= 5) {
      const head = this.#peek(5);
      const len = head.readUInt32BE(1);
      if (len > RPC_MAX_RECORD_BYTES) throw new SvcError('InternalError', `RPC record frame too large (${len} bytes)`);
      if (this.#length < 5 + len) break;
      const frame = this.#take(5 + len);
      out.push({ type: frame.readUInt8(0), payload: frame.subarray(5) });
    }
    return out;
  }

  /** Bytes received but not yet forming a whole frame. */
  get pending(): number {
    return this.#length;
  }

  /** The first `n` buffered bytes (joined only when they span chunks). */
  #peek(n: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= n) return first;
    const joined = Buffer.concat(this.#chunks, this.#length);
    this.#chunks = [joined];
    return joined;
  }

  #take(n: number): Buffer {
    const head = this.#peek(n);
    const out = head.subarray(0, n);
    const rest = head.subarray(n);
    if (rest.length > 0) this.#chunks[0] = rest;
    else this.#chunks.shift();
    this.#length -= n;
    return out;
  }
}

/** Encodes a drive id (an endpoint path such as `/data/d1`) as one path segment. */
export function encodeDriveId(id: string): string {
  return encodeURIComponent(id);
}

export function storagePath(driveId: string, method: string): string {
  return `${RPC_STORAGE_PREFIX}${encodeDriveId(driveId)}/${method}`;
}

export function peerPath(method: string): string {
  return `${RPC_PEER_PREFIX}${method}`;
}

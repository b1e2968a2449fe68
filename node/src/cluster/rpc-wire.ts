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
  #buf: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): { type: number; payload: Buffer }[] {
    this.#buf = this.#buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buf, chunk]);
    const out: { type: number; payload: Buffer }[] = [];
    while (this.#buf.length >= 5) {
      const len = this.#buf.readUInt32BE(1);
      if (len > RPC_MAX_RECORD_BYTES) throw new SvcError('InternalError', `RPC record frame too large (${len} bytes)`);
      if (this.#buf.length < 5 + len) break;
      out.push({ type: this.#buf.readUInt8(0), payload: this.#buf.subarray(5, 5 + len) });
      this.#buf = this.#buf.subarray(5 + len);
    }
    return out;
  }

  /** Bytes received but not yet forming a whole frame. */
  get pending(): number {
    return this.#buf.length;
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

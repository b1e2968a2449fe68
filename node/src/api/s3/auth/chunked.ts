/**
 * `aws-chunked` content decoding (`Content-Encoding: aws-chunked`), for the
 * STREAMING-* payload modes:
 *
 *   signed:   <hex-size>;chunk-signature=<sig>\r\n<data>\r\n … 0;chunk-signature=<sig>\r\n
 *   unsigned: <hex-size>\r\n<data>\r\n … 0\r\n
 *   then, with trailers: <name>:<value>\r\n … [x-amz-trailer-signature:<sig>\r\n] \r\n
 *   and without trailers: \r\n
 *
 * Data is yielded as it arrives (never a whole chunk buffered); each chunk's
 * signature is checked when the chunk ends, the trailer signature when the
 * trailer ends, and every failure throws before the generator finishes, so a
 * consumer that commits only after full iteration never commits a bad body.
 */
import { createHash, type Hash } from 'node:crypto';
import { SvcError } from '../../../util/errors.ts';
import { EMPTY_SHA256, hmacHex, sha256Hex, signaturesEqual } from './sigv4.ts';

/** Longest chunk header or trailer line accepted. */
const MAX_LINE = 4096;
/** Largest chunk size accepted (the SDKs use 64 KiB–8 MiB). */
const MAX_CHUNK = 64 * 1024 * 1024;
const MAX_TRAILER_LINES = 16;

export interface ChunkSigning {
  signingKey: Buffer;
  amzDate: string;
  scope: string;
  /** Seed: the request's own signature. */
  seedSignature: string;
}

export interface ChunkedOptions {
  /** Present for signed streaming: every chunk (and the trailer) must be signed. */
  signing?: ChunkSigning;
  /** Trailer header names announced in `x-amz-trailer` (lower case). */
  expectTrailers: readonly string[];
  /** Receives the trailers once they are read and verified. */
  onTrailers?: (trailers: Map<string, string>) => void;
}

function incomplete(msg: string): SvcError {
  return new SvcError('IncompleteBody', `Malformed or truncated aws-chunked body: ${msg}`);
}

/** Pulls bytes from an async source with a small look-ahead buffer. */
class Reader {
  readonly #it: AsyncIterator<Uint8Array>;
  #buf: Buffer = Buffer.alloc(0);
  #done = false;
  constructor(src: AsyncIterable<Uint8Array>) {
    this.#it = src[Symbol.asyncIterator]();
  }
  async #more(): Promise<boolean> {
    if (this.#done) return false;
    const r = await this.#it.next();
    if (r.done) {
      this.#done = true;
      return false;
    }
    const chunk = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    return true;
  }
  /** Reads one line ending in CRLF (a bare LF is tolerated); undefined at clean EOF. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const nl = this.#buf.indexOf(0x0a);
      if (nl >= 0) {
        const end = nl > 0 && this.#buf[nl - 1] === 0x0d ? nl - 1 : nl;
        const s = this.#buf.toString('latin1', 0, end);
        this.#buf = this.#buf.subarray(nl + 1);
        return s;
      }
      if (this.#buf.length > MAX_LINE) throw incomplete('chunk header line too long');
      if (!(await this.#more())) {
        if (this.#buf.length === 0) return undefined;
        throw incomplete('body ended inside a chunk header');
      }
    }
  }
  /** Yields exactly `n` bytes as they arrive. */
  async *take(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.#buf.length === 0 && !(await this.#more())) throw incomplete('body ended inside chunk data');
      const piece = this.#buf.subarray(0, Math.min(left, this.#buf.length));
      this.#buf = this.#buf.subarray(piece.length);
      left -= piece.length;
      yield piece;
    }
  }
  /** Consumes a CRLF (or LF) that must follow chunk data. */
  async crlf(): Promise<void> {
    const l = await this.line();
    if (l === undefined) throw incomplete('missing CRLF after chunk data');
    if (l !== '') throw incomplete('chunk data longer than its declared size');
  }
  /** True when nothing but whitespace remains. */
  async atEnd(): Promise<boolean> {
    for (;;) {
      const trimmed = this.#buf.toString('latin1').trim();
      if (trimmed.length > 0) return false;
      this.#buf = Buffer.alloc(0);
      if (!(await this.#more())) return true;
    }
  }
}

function parseChunkHeader(line: string, signed: boolean): { size: number; signature?: string } {
  const semi = line.indexOf(';');
  const sizeHex = (semi < 0 ? line : line.slice(0, semi)).trim();
  if (!/^[0-9a-fA-F]{1,16}$/.test(sizeHex)) throw incomplete(`bad chunk size '${sizeHex.slice(0, 32)}'`);
  const size = Number.parseInt(sizeHex, 16);
  if (size > MAX_CHUNK) throw incomplete('chunk too large');
  let signature: string | undefined;
  if (semi >= 0) {
    for (const ext of line.slice(semi + 1).split(';')) {
      const eq = ext.indexOf('=');
      if (eq >= 0 && ext.slice(0, eq).trim() === 'chunk-signature') signature = ext.slice(eq + 1).trim();
    }
  }
  if (signed && (signature === undefined || !/^[0-9a-f]{64}$/.test(signature))) {
    throw new SvcError('SignatureDoesNotMatch', 'A chunk of the streaming body is missing its chunk-signature.');
  }
  return { size, signature };
}

function chunkStringToSign(s: ChunkSigning, prev: string, dataHash: string): string {
  return `AWS4-HMAC-SHA256-PAYLOAD\n${s.amzDate}\n${s.scope}\n${prev}\n${EMPTY_SHA256}\n${dataHash}`;
}

/** Decodes an aws-chunked body, verifying chunk and trailer signatures. */
export async function* decodeAwsChunked(src: AsyncIterable<Uint8Array>, opts: ChunkedOptions): AsyncGenerator<Buffer> {
  const reader = new Reader(src);
  const signing = opts.signing;
  let prev = signing?.seedSignature ?? '';
  for (;;) {
    const line = await reader.line();
    if (line === undefined) throw incomplete('body ended before the final zero-length chunk');
    const { size, signature } = parseChunkHeader(line, signing !== undefined);
    let hash: Hash | undefined;
    if (signing) hash = createHash('sha256');
    if (size > 0) {
      for await (const piece of reader.take(size)) {
        hash?.update(piece);
        yield piece;
      }
      await reader.crlf();
    }
    if (signing) {
      const expected = hmacHex(signing.signingKey, chunkStringToSign(signing, prev, hash!.digest('hex')));
      if (!signaturesEqual(expected, signature!)) {
        throw new SvcError('SignatureDoesNotMatch', 'The chunk signature of the streaming body does not match.');
      }
      prev = expected;
    }
    if (size === 0) break;
  }
  // trailer section (or the final empty line)
  const trailers = new Map<string, string>();
  let trailerSignature: string | undefined;
  let canonicalTrailer = '';
  for (let i = 0; ; i++) {
    if (i > MAX_TRAILER_LINES) throw incomplete('too many trailer lines');
    const l = await reader.line();
    if (l === undefined || l === '') break;
    const colon = l.indexOf(':');
    if (colon <= 0) throw incomplete('malformed trailer line');
    const name = l.slice(0, colon).trim().toLowerCase();
    const value = l.slice(colon + 1).trim();
    if (name === 'x-amz-trailer-signature') {
      trailerSignature = value;
      continue;
    }
    trailers.set(name, value);
    canonicalTrailer += `${name}:${value}\n`;
  }
  if (!(await reader.atEnd())) throw incomplete('unexpected bytes after the final chunk');
  for (const want of opts.expectTrailers) {
    if (!trailers.has(want)) throw incomplete(`announced trailer '${want}' is missing`);
  }
  for (const got of trailers.keys()) {
    if (!opts.expectTrailers.includes(got)) throw new SvcError('InvalidArgument', `Trailer '${got}' was not announced in x-amz-trailer.`);
  }
  if (signing && opts.expectTrailers.length > 0) {
    if (trailerSignature === undefined) throw new SvcError('SignatureDoesNotMatch', 'The trailer signature is missing.');
    const sts = `AWS4-HMAC-SHA256-TRAILER\n${signing.amzDate}\n${signing.scope}\n${prev}\n${sha256Hex(canonicalTrailer)}`;
    if (!signaturesEqual(hmacHex(signing.signingKey, sts), trailerSignature)) {
      throw new SvcError('SignatureDoesNotMatch', 'The trailer signature does not match.');
    }
  }
  opts.onTrailers?.(trailers);
}

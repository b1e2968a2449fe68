/**
 * The envelope of svc's small internal records under `.svc.sys` (`pool.bin`,
 * `rebalance.bin`): our own versioned, checksummed format, the same idea as
 * xl.meta's. Layout:
 *
 *   0   4  magic (4 ASCII bytes, one per record kind: "SVPB", "SVRB")
 *   4   2  format major (LE u16)
 *   6   2  format minor (LE u16)
 *   8   4  body length B (LE u32)
 *   12  B  body: msgpack map
 *   12+B 8 XXH64(body, seed 0), big-endian
 *
 * A reader refuses a newer major (it cannot know what changed) and accepts
 * any minor of its major: minors only add optional fields. Decoding never
 * trusts the input: a short buffer, a wrong magic, a size or checksum
 * mismatch is `FileCorrupt`, never a crash or a half-decoded record. Pure.
 */
import { Packr, Unpackr } from 'msgpackr';
import { xxh64Into, xxh64Matches } from '../../erasure/xxh64.ts';
import { SvcError } from '../../util/errors.ts';

const HEADER = 12;
const TRAILER = 8;
/** Largest body accepted: these records are small (one entry per pool). */
export const MAX_RECORD_BODY = 16 * 1024 * 1024;

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

export interface RecordKind {
  /** Four ASCII bytes. */
  readonly magic: string;
  /** Human name for errors (`pool.bin`). */
  readonly name: string;
  readonly major: number;
  readonly minor: number;
}

export function encodeRecord(kind: RecordKind, body: unknown): Buffer {
  const payload = packr.pack(body);
  if (payload.length > MAX_RECORD_BODY) throw new SvcError('InternalError', `${kind.name}: record too large (${payload.length} bytes)`);
  const out = Buffer.alloc(HEADER + payload.length + TRAILER);
  out.write(kind.magic, 0, 4, 'latin1');
  out.writeUInt16LE(kind.major, 4);
  out.writeUInt16LE(kind.minor, 6);
  out.writeUInt32LE(payload.length, 8);
  payload.copy(out, HEADER);
  xxh64Into(payload, out, HEADER + payload.length);
  return out;
}

function corrupt(kind: RecordKind, why: string): SvcError {
  return new SvcError('FileCorrupt', `${kind.name}: ${why}`);
}

/** The body of a record of `kind`, unvalidated (the caller checks its shape). */
export function decodeRecord(kind: RecordKind, buf: Uint8Array): { minor: number; body: unknown } {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < HEADER + TRAILER) throw corrupt(kind, 'too short');
  if (b.toString('latin1', 0, 4) !== kind.magic) throw corrupt(kind, 'bad magic');
  const major = b.readUInt16LE(4);
  const minor = b.readUInt16LE(6);
  if (major !== kind.major) {
    throw corrupt(kind, `format ${major}.${minor} is not readable by this build (reads ${kind.major}.x); was it written by a newer svc?`);
  }
  const len = b.readUInt32LE(8);
  if (len > MAX_RECORD_BODY || HEADER + len + TRAILER !== b.length) throw corrupt(kind, 'size mismatch');
  const payload = b.subarray(HEADER, HEADER + len);
  if (!xxh64Matches(payload, b, HEADER + len)) throw corrupt(kind, 'checksum mismatch');
  let body: unknown;
  try {
    body = unpackr.unpack(payload);
  } catch {
    throw corrupt(kind, 'body is not msgpack');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw corrupt(kind, 'body is not a map');
  return { minor, body };
}

/**
 * Shape checks for decoders: each throws `FileCorrupt` naming the field.
 * `at` is the path of the field for the message (`pools[1].state`).
 */
export class FieldReader {
  readonly #kind: RecordKind;
  constructor(kind: RecordKind) {
    this.#kind = kind;
  }

  fail(at: string, want: string): never {
    throw corrupt(this.#kind, `${at}: expected ${want}`);
  }

  obj(v: unknown, at: string): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(at, 'a map');
    return v as Record<string, unknown>;
  }

  str(v: unknown, at: string): string {
    if (typeof v !== 'string') this.fail(at, 'a string');
    return v;
  }

  /** A non-negative safe integer (counters, sizes, unix milliseconds). */
  int(v: unknown, at: string): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) this.fail(at, 'a non-negative integer');
    return v;
  }

  num(v: unknown, at: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(at, 'a number');
    return v;
  }

  bool(v: unknown, at: string): boolean {
    if (typeof v !== 'boolean') this.fail(at, 'a boolean');
    return v;
  }

  arr(v: unknown, at: string): unknown[] {
    if (!Array.isArray(v)) this.fail(at, 'an array');
    return v;
  }

  strs(v: unknown, at: string): string[] {
    return this.arr(v, at).map((x, i) => this.str(x, `${at}[${i}]`));
  }

  oneOf<T extends string>(v: unknown, at: string, values: readonly T[]): T {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) this.fail(at, `one of ${values.join(', ')}`);
    return v as T;
  }

  optStr(v: unknown, at: string): string | null {
    return v === null || v === undefined ? null : this.str(v, at);
  }
}

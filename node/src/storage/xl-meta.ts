/**
 * xl.meta: the per-object metadata file (one per drive per object), our own
 * versioned format. Layout (see docs/xl-meta.md):
 *
 *   0   4  magic "SVXL"
 *   4   2  format major (LE u16) = 1
 *   6   2  format minor (LE u16) = 0
 *   8   4  body length B (LE u32)
 *   12  B  body: msgpack { v: 1, vs: [version…] } (versions newest first, no inline data)
 *   12+B 8 XXH64(body, seed 0), big-endian
 *   20+B 4 inline section length I (LE u32)
 *   24+B I inline section: msgpack map versionId → bin (this drive's framed shard)
 *   24+B+I 8 XXH64(inline section), big-endian
 *
 * Decoding never trusts the input: any size, checksum, or shape mismatch is
 * `FileCorrupt`, never a crash or a partially decoded journal.
 */
import { Packr, Unpackr } from 'msgpackr';
import { xxh64Into, xxh64Matches } from '../erasure/xxh64.ts';
import { SvcError } from '../util/errors.ts';
import type { ChecksumRecord, ErasureInfo, FileVersion, PartRecord } from './drive.ts';

export const XL_MAGIC = 'SVXL';
export const XL_MAJOR = 1;
export const XL_MINOR = 0;
/** Most versions one object may hold. */
export const MAX_VERSIONS = 10_000;

const HEADER = 12;
const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

/** Wire form of one version: short keys keep 10 000-part journals small. */
interface WireVersion {
  id: string;
  mt: number;
  t: 1 | 2;
  dd: string;
  ec?: [number, number, number, number, number[]];
  sz: number;
  p: [number, number, string, number, ChecksumRecord | null][];
  et: string;
  ch: Record<string, string>;
  um: Record<string, string>;
  sm: Record<string, string>;
  sc: string;
  tg: string;
  cs?: ChecksumRecord;
  il: boolean;
}

function toWire(v: FileVersion): WireVersion {
  const w: WireVersion = {
    id: v.versionId,
    mt: v.modTime,
    t: v.type === 'object' ? 1 : 2,
    dd: v.dataDir,
    sz: v.size,
    p: v.parts.map((p) => [p.number, p.size, p.etag, p.modTime, p.checksum ?? null]),
    et: v.etag,
    ch: v.contentHeaders,
    um: v.userMeta,
    sm: v.sysMeta,
    sc: v.storageClass,
    tg: v.tags,
    il: v.inline,
  };
  if (v.erasure) {
    const e = v.erasure;
    w.ec = [e.data, e.parity, e.blockSize, e.index, e.distribution];
  }
  if (v.checksum) w.cs = v.checksum;
  return w;
}

function corrupt(why: string): SvcError {
  return new SvcError('FileCorrupt', `xl.meta: ${why}`);
}

function isInt(x: unknown, min = 0): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= min;
}

function isStrMap(x: unknown): x is Record<string, string> {
  if (typeof x !== 'object' || x === null || Array.isArray(x) || x instanceof Uint8Array) return false;
  for (const val of Object.values(x)) if (typeof val !== 'string') return false;
  return true;
}

function checkChecksum(x: unknown): ChecksumRecord {
  if (!isStrMap(x) || typeof x.algorithm !== 'string' || typeof x.value !== 'string' || typeof x.type !== 'string') {
    throw corrupt('bad checksum record');
  }
  return { algorithm: x.algorithm, value: x.value, type: x.type };
}

function fromWire(x: unknown): FileVersion {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw corrupt('version is not a map');
  const w = x as Record<string, unknown>;
  if (typeof w.id !== 'string' || !isInt(w.mt) || (w.t !== 1 && w.t !== 2) || typeof w.dd !== 'string') {
    throw corrupt('bad version header');
  }
  if (!isInt(w.sz) || typeof w.et !== 'string' || typeof w.sc !== 'string' || typeof w.tg !== 'string') {
    throw corrupt('bad version fields');
  }
  if (!isStrMap(w.ch) || !isStrMap(w.um) || !isStrMap(w.sm) || typeof w.il !== 'boolean') {
    throw corrupt('bad version maps');
  }
  if (!Array.isArray(w.p)) throw corrupt('bad parts');
  const parts: PartRecord[] = w.p.map((p: unknown) => {
    if (!Array.isArray(p) || p.length !== 5 || !isInt(p[0], 1) || !isInt(p[1]) || typeof p[2] !== 'string' || !isInt(p[3])) {
      throw corrupt('bad part');
    }
    const part: PartRecord = { number: p[0], size: p[1], etag: p[2], modTime: p[3] };
    if (p[4] !== null) part.checksum = checkChecksum(p[4]);
    return part;
  });
  let erasure: ErasureInfo | undefined;
  if (w.ec !== undefined) {
    const e = w.ec;
    if (
      !Array.isArray(e) ||
      e.length !== 5 ||
      !isInt(e[0], 1) ||
      !isInt(e[1]) ||
      !isInt(e[2], 1) ||
      !isInt(e[3], 1) ||
      !Array.isArray(e[4]) ||
      e[4].length !== e[0] + e[1] ||
      !e[4].every((d: unknown) => isInt(d, 1) && d <= e[0] + e[1]) ||
      e[3] > e[0] + e[1]
    ) {
      throw corrupt('bad erasure info');
    }
    erasure = { data: e[0], parity: e[1], blockSize: e[2], index: e[3], distribution: e[4] as number[] };
  }
  const v: FileVersion = {
    versionId: w.id,
    modTime: w.mt,
    type: w.t === 1 ? 'object' : 'delete',
    dataDir: w.dd,
    size: w.sz,
    parts,
    etag: w.et,
    contentHeaders: w.ch,
    userMeta: w.um,
    sysMeta: w.sm,
    storageClass: w.sc,
    tags: w.tg,
    inline: w.il,
  };
  if (erasure) v.erasure = erasure;
  if (w.cs !== undefined) v.checksum = checkChecksum(w.cs);
  if (v.type === 'object' && !erasure) throw corrupt('object version without erasure info');
  return v;
}

/** Serialises a versions journal (newest first) with the inline data of inline versions. */
export function encodeXlMeta(versions: readonly FileVersion[]): Uint8Array {
  if (versions.length > MAX_VERSIONS) throw new SvcError('MaxVersionsExceeded');
  const body = packr.pack({ v: 1, vs: versions.map(toWire) });
  const inlineMap: Record<string, Uint8Array> = {};
  let hasInline = false;
  for (const v of versions) {
    if (v.inline && v.inlineData) {
      inlineMap[v.versionId] = v.inlineData;
      hasInline = true;
    }
  }
  const inline = hasInline ? packr.pack(inlineMap) : new Uint8Array(0);
  const out = Buffer.allocUnsafe(HEADER + body.length + 8 + 4 + inline.length + 8);
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  out.write(XL_MAGIC, 0, 'latin1');
  dv.setUint16(4, XL_MAJOR, true);
  dv.setUint16(6, XL_MINOR, true);
  dv.setUint32(8, body.length, true);
  out.set(body, HEADER);
  let pos = HEADER + body.length;
  xxh64Into(body, out, pos);
  pos += 8;
  dv.setUint32(pos, inline.length, true);
  pos += 4;
  out.set(inline, pos);
  pos += inline.length;
  xxh64Into(inline, out, pos);
  return out;
}

function unpackChecked(buf: Uint8Array, what: string): unknown {
  try {
    return unpackr.unpack(buf);
  } catch (err) {
    throw new SvcError('FileCorrupt', `xl.meta: undecodable ${what}`, undefined, { cause: err });
  }
}

/**
 * Parses xl.meta bytes into the versions journal (newest first). With
 * `withData`, inline versions carry their `inlineData`.
 */
export function decodeXlMeta(buf: Uint8Array, withData = true): FileVersion[] {
  if (buf.length < HEADER + 8 + 4 + 8) throw corrupt('too short');
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.toString('latin1', 0, 4) !== XL_MAGIC) throw corrupt('bad magic');
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const major = dv.getUint16(4, true);
  if (major !== XL_MAJOR) throw corrupt(`unsupported format version ${major}`);
  const bodyLen = dv.getUint32(8, true);
  if (HEADER + bodyLen + 8 + 4 + 8 > buf.length) throw corrupt('body length out of range');
  const body = buf.subarray(HEADER, HEADER + bodyLen);
  let pos = HEADER + bodyLen;
  if (!xxh64Matches(body, buf, pos)) throw corrupt('body checksum mismatch');
  pos += 8;
  const inlineLen = dv.getUint32(pos, true);
  pos += 4;
  if (pos + inlineLen + 8 !== buf.length) throw corrupt('inline section length mismatch');
  const inline = buf.subarray(pos, pos + inlineLen);
  pos += inlineLen;
  const decoded = unpackChecked(body, 'body');
  if (typeof decoded !== 'object' || decoded === null) throw corrupt('body is not a map');
  const { v, vs } = decoded as { v?: unknown; vs?: unknown };
  if (v !== 1 || !Array.isArray(vs)) throw corrupt('bad body shape');
  if (vs.length > MAX_VERSIONS) throw corrupt('too many versions');
  const versions = vs.map(fromWire);
  if (withData && inlineLen > 0) {
    if (!xxh64Matches(inline, buf, pos)) throw corrupt('inline checksum mismatch');
    const map = unpackChecked(inline, 'inline section');
    if (typeof map !== 'object' || map === null || Array.isArray(map)) throw corrupt('inline section is not a map');
    const data = map as Record<string, unknown>;
    for (const ver of versions) {
      if (!ver.inline) continue;
      const d = data[ver.versionId];
      if (d !== undefined) {
        if (!(d instanceof Uint8Array)) throw corrupt('inline data is not binary');
        ver.inlineData = d;
      }
    }
  }
  return versions;
}

/**
 * A version replaced by a commit (same version id, e.g. the null version of an
 * unversioned overwrite) stays in the journal under `<id>~sup~<tag>` with its
 * data in place until the commit reached write quorum, so a crash in between
 * can never leave neither the old nor the new version readable. Readers vote
 * on the base id (`baseVersionId`).
 */
export const SUPERSEDED_MARK = '~sup~';

/** The version id a (possibly superseded) journal entry stands for. */
export function baseVersionId(id: string): string {
  const i = id.indexOf(SUPERSEDED_MARK);
  return i < 0 ? id : id.slice(0, i);
}

/** Journal id of a superseded copy of `v`. */
export function supersededId(v: FileVersion): string {
  return `${baseVersionId(v.versionId)}${SUPERSEDED_MARK}${v.dataDir || `inline-${v.modTime}`}`;
}

/** Newest-first order: mod time descending, then version id for a total order. */
export function compareVersions(a: FileVersion, b: FileVersion): number {
  if (a.modTime !== b.modTime) return b.modTime - a.modTime;
  return a.versionId < b.versionId ? 1 : a.versionId > b.versionId ? -1 : 0;
}

/**
 * Merges `version` into a journal: replaces the version with the same id (returned
 * as `replaced`) and keeps newest-first order. Throws `MaxVersionsExceeded`.
 */
export function mergeVersion(
  versions: readonly FileVersion[],
  version: FileVersion,
): { versions: FileVersion[]; replaced?: FileVersion } {
  const out: FileVersion[] = [];
  let replaced: FileVersion | undefined;
  for (const v of versions) {
    if (v.versionId === version.versionId) replaced = v;
    else out.push(v);
  }
  if (out.length + 1 > MAX_VERSIONS) throw new SvcError('MaxVersionsExceeded');
  out.push(version);
  out.sort(compareVersions);
  return replaced ? { versions: out, replaced } : { versions: out };
}

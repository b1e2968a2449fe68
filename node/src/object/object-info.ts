/**
 * Conversions between the stored version record and the contract's
 * `ObjectInfo`, plus precondition checks. Pure.
 */
import { replicationStatus } from './replication-status.ts';
import type { FileVersion } from '../storage/drive.ts';
import { lockOf } from './object-lock.ts';
import { plainPartSizes, sseOf } from './sse.ts';
import type { ChecksumAlgorithm, ChecksumType, ContentHeaders, ObjectChecksum, ObjectInfo, StorageClass } from './types.ts';

export function toChecksum(c: FileVersion['checksum']): ObjectChecksum | undefined {
  if (!c) return undefined;
  return { algorithm: c.algorithm as ChecksumAlgorithm, value: c.value, type: c.type as ChecksumType };
}

export function toObjectInfo(bucket: string, key: string, v: FileVersion, isLatest: boolean): ObjectInfo {
  const sse = v.type === 'object' ? sseOf(v.sysMeta) : undefined;
  // Clients see plaintext sizes; an encrypted version stores its packages' ciphertext.
  const sizes = sse ? plainPartSizes(v) : undefined;
  const info: ObjectInfo = {
    bucket,
    name: key,
    versionId: v.versionId,
    isLatest,
    deleteMarker: v.type === 'delete',
    size: sizes ? sizes.reduce((a, b) => a + b, 0) : v.size,
    etag: v.etag,
    modTime: new Date(v.modTime),
    storageClass: (v.storageClass || 'STANDARD') as StorageClass,
    contentHeaders: { ...v.contentHeaders } as ContentHeaders,
    userMeta: { ...v.userMeta },
    tags: v.tags,
    parts: v.parts.map((p, i) => {
      const c = toChecksum(p.checksum);
      return { number: p.number, size: sizes ? sizes[i]! : p.size, etag: p.etag, modTime: new Date(p.modTime), ...(c ? { checksum: c } : {}) };
    }),
    dataBlocks: v.erasure?.data ?? 0,
    parityBlocks: v.erasure?.parity ?? 0,
  };
  const c = toChecksum(v.checksum);
  if (c) info.checksum = c;
  if (v.sysMeta.acl) info.acl = v.sysMeta.acl;
  if (sse) info.sse = sse;
  const rs = replicationStatus(v.sysMeta);
  if (rs) info.replicationStatus = rs;
  const lock = lockOf(v.sysMeta);
  if (lock.mode !== undefined || lock.legalHold !== undefined) {
    info.lock = {
      ...(lock.mode !== undefined ? { mode: lock.mode, retainUntil: new Date(lock.retainUntil!) } : {}),
      ...(lock.legalHold !== undefined ? { legalHold: lock.legalHold } : {}),
    };
  }
  return info;
}

/** A delete marker to write (`'null'` in an unversioned or suspended bucket). */
export function newDeleteMarker(versionId: string, modTime: number): FileVersion {
  return {
    versionId,
    modTime,
    type: 'delete',
    dataDir: '',
    size: 0,
    parts: [],
    etag: '',
    contentHeaders: {},
    userMeta: {},
    sysMeta: {},
    storageClass: '',
    tags: '',
    inline: false,
  };
}

/** System metadata with the version's ACL replaced ('' removes it). */
export function withAcl(sysMeta: Record<string, string>, acl: string): Record<string, string> {
  const { acl: _old, ...rest } = sysMeta;
  return acl === '' ? rest : { ...rest, acl };
}

/** Content headers as stored (only defined string values). */
export function storedHeaders(h: ContentHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const [k, val] of Object.entries(h)) if (typeof val === 'string') out[k] = val;
  return out;
}


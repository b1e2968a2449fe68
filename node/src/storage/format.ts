/**
 * Drive identity: `<drive>/.svc.sys/format.json`.
 *
 * One JSON document per drive: the format version, the deployment id (shared
 * by every drive of every pool), this drive's id, and the pool's set matrix of
 * drive ids in slot order (which fixes which drive holds which shard
 * position), plus the distribution algorithm and the geometry it implies.
 * Slot identity comes from this matrix, never from command-line order.
 *
 * Three parts:
 * - file I/O over one local drive root (`readFormatFile`, `writeFormatFile`):
 *   atomic publish (tmp → fsync → rename → fsync dir); the drive root itself
 *   is never created;
 * - the pure format-quorum decision (`decideFormat`): given what N drives of
 *   a pool hold, format fresh / use the existing format / wait / fail;
 * - `ensurePoolFormat`, the same over any `FormatIO` (local files here,
 *   remote drives later), which writes a fresh pool only when every drive is
 *   reachable and unformatted.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type ErrorCode, SvcError } from '../util/errors.ts';
import { SYS_VOL } from './drive.ts';

export const FORMAT_FILE = 'format.json';
export const FORMAT_VERSION = 1;
export const DISTRIBUTION_ALGO = 'SIPMOD+PARITY';
/** Placeholder id of an offline drive in a matrix built from partial reads. */
export const OFFLINE_DRIVE_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

export interface FormatFile {
  readonly version: typeof FORMAT_VERSION;
  /** `erasure-single` for the single-drive layout. */
  readonly format: 'erasure' | 'erasure-single';
  /** Deployment id (UUID). */
  readonly id: string;
  readonly erasure: {
    /** This drive's id (UUID). */
    readonly this: string;
    /** `sets[s][d]` = id of the drive in slot d of set s, for this pool. */
    readonly sets: readonly (readonly string[])[];
    readonly distributionAlgo: typeof DISTRIBUTION_ALGO;
    readonly setCount: number;
    readonly setDriveCount: number;
    readonly driveCount: number;
  };
}

/** What one drive holds, as seen by a reader. */
export type DriveFormatState =
  | { readonly state: 'formatted'; readonly format: FormatFile }
  | { readonly state: 'unformatted' }
  | { readonly state: 'offline'; readonly reason: string }
  | { readonly state: 'corrupt'; readonly reason: string };

/** Geometry the command line asks for. */
export interface PoolGeometry {
  readonly cmdline: string;
  readonly setCount: number;
  readonly setDriveCount: number;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ===== validation and (de)serialisation

/** Validates a parsed document; throws `CorruptedFormat` naming the problem. */
export function validateFormat(doc: unknown, where = 'format.json'): FormatFile {
  const fail = (why: string) => new SvcError('CorruptedFormat', `${where}: ${why}`, { where });
  if (typeof doc !== 'object' || doc === null) throw fail('not a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.version !== FORMAT_VERSION) throw fail(`unsupported format version ${JSON.stringify(d.version)}`);
  if (d.format !== 'erasure' && d.format !== 'erasure-single') throw fail(`unknown format ${JSON.stringify(d.format)}`);
  if (typeof d.id !== 'string' || !UUID_RE.test(d.id)) throw fail('deployment id is not a UUID');
  const e = d.erasure as Record<string, unknown> | undefined;
  if (typeof e !== 'object' || e === null) throw fail('missing erasure section');
  if (e.distributionAlgo !== DISTRIBUTION_ALGO) throw fail(`unknown distribution algorithm ${JSON.stringify(e.distributionAlgo)}`);
  if (typeof e.this !== 'string' || !UUID_RE.test(e.this)) throw fail('drive id is not a UUID');
  const sets = e.sets;
  if (!Array.isArray(sets) || sets.length === 0) throw fail('set matrix is empty');
  const width = (sets[0] as unknown[] | undefined)?.length ?? 0;
  const seen = new Set<string>();
  for (const s of sets) {
    if (!Array.isArray(s) || s.length !== width || width === 0) throw fail('set matrix rows differ in width');
    for (const id of s) {
      if (typeof id !== 'string' || !UUID_RE.test(id)) throw fail('set matrix holds a non-UUID drive id');
      if (seen.has(id)) throw fail(`drive id ${id} appears twice in the set matrix`);
      seen.add(id);
    }
  }
  if (!seen.has(e.this)) throw fail('this drive is not a member of its set matrix');
  if (e.setCount !== sets.length || e.setDriveCount !== width || e.driveCount !== sets.length * width) {
    throw fail('stored geometry disagrees with the set matrix');
  }
  if ((d.format === 'erasure-single') !== (seen.size === 1)) throw fail('single-drive marker disagrees with the set matrix');
  return doc as FormatFile;
}

export function formatPath(root: string): string {
  return join(root, SYS_VOL, FORMAT_FILE);
}

// ===== file I/O on a local drive root

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Reads a local drive's format. A missing drive root throws `VolumeNotFound`
 * (roots are never auto-created); a root without `format.json` is
 * `unformatted`; unreadable or invalid JSON is `corrupt`; I/O errors other
 * than "not found" make the drive `offline`.
 */
export async function readFormatFile(root: string): Promise<DriveFormatState> {
  try {
    const st = await stat(root);
    if (!st.isDirectory()) throw new SvcError('VolumeNotFound', `drive path ${root} is not a directory`, { path: root });
  } catch (err) {
    if (err instanceof SvcError) throw err;
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') {
      throw new SvcError('VolumeNotFound', `drive path ${root} does not exist; disk roots are never created automatically`, { path: root });
    }
    return { state: 'offline', reason: `${errno(err) ?? 'error'} on ${root}` };
  }
  let text: string;
  try {
    text = await readFile(formatPath(root), 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return { state: 'unformatted' };
    if (errno(err) === 'EISDIR') return { state: 'corrupt', reason: `${formatPath(root)} is a directory` };
    if (errno(err) === 'ENOTDIR') return { state: 'corrupt', reason: `${join(root, SYS_VOL)} is not a directory` };
    // Out of file descriptors says nothing about the drive: callers keep what they knew.
    if (errno(err) === 'EMFILE' || errno(err) === 'ENFILE') throw new SvcError('SlowDown', `out of file descriptors reading ${formatPath(root)}`, { path: root }, { cause: err });
    return { state: 'offline', reason: `${errno(err) ?? 'error'} reading ${formatPath(root)}` };
  }
  try {
    return { state: 'formatted', format: validateFormat(JSON.parse(text), formatPath(root)) };
  } catch (err) {
    return { state: 'corrupt', reason: err instanceof SvcError ? err.message : `${formatPath(root)}: invalid JSON` };
  }
}

async function fsyncPath(path: string, flags: number): Promise<void> {
  const fh = await open(path, flags);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Publishes `format` on a local drive atomically: write a temp file in
 * `.svc.sys`, fsync it, rename over `format.json`, fsync `.svc.sys` (and the
 * root when `.svc.sys` was just created). The root must already exist.
 */
export async function writeFormatFile(root: string, format: FormatFile): Promise<void> {
  validateFormat(format, 'format to write');
  const st = await stat(root).catch((err: unknown) => {
    if (errno(err) === 'ENOENT') throw new SvcError('VolumeNotFound', `drive path ${root} does not exist`, { path: root });
    throw err;
  });
  if (!st.isDirectory()) throw new SvcError('VolumeNotFound', `drive path ${root} is not a directory`, { path: root });
  await writeSysFile(root, FORMAT_FILE, `${JSON.stringify(format, null, 2)}\n`);
}

/**
 * Publishes `text` as `.svc.sys/<name>` on a local drive atomically and
 * durably: a temp file beside it, fsync'd, renamed into place, then `.svc.sys`
 * fsync'd (and the root, when `.svc.sys` was just created). Drive-local state
 * (the format, the node's start count), never an object.
 */
export async function writeSysFile(root: string, name: string, text: string): Promise<void> {
  const sysDir = join(root, SYS_VOL);
  let created = false;
  try {
    await mkdir(sysDir);
    created = true;
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
  }
  const tmp = join(sysDir, `${name}.tmp-${randomUUID()}`);
  try {
    const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(sysDir, name));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncPath(sysDir, constants.O_RDONLY | constants.O_DIRECTORY);
  if (created) await fsyncPath(root, constants.O_RDONLY | constants.O_DIRECTORY);
}

// ===== the pure format-quorum decision

export type SlotStatus =
  /** holds the reference format; `set`/`slot` from the matrix */
  | { readonly status: 'ok'; readonly set: number; readonly slot: number; readonly driveId: string }
  /** reachable but empty: a replaced drive; stays offline until heal writes its format */
  | { readonly status: 'unformatted' }
  | { readonly status: 'offline'; readonly reason: string }
  | { readonly status: 'corrupt'; readonly reason: string }
  /** formatted for another deployment or pool */
  | { readonly status: 'foreign'; readonly reason: string };

export type FormatDecision =
  | { readonly action: 'fresh' }
  | { readonly action: 'use'; readonly reference: FormatFile; readonly slots: readonly SlotStatus[] }
  | { readonly action: 'wait'; readonly reason: string }
  | { readonly action: 'fail'; readonly code: ErrorCode; readonly message: string };

/** Drives that must agree on one format before it is used: half the pool, at least one. */
export function formatQuorum(driveCount: number): number {
  return Math.max(1, Math.floor(driveCount / 2));
}

function matrixKey(f: FormatFile): string {
  return `${f.id}|${JSON.stringify(f.erasure.sets)}`;
}

function geometryMismatch(geo: PoolGeometry, f: FormatFile): FormatDecision | undefined {
  const wantSingle = geo.setCount * geo.setDriveCount === 1;
  const haveSingle = f.format === 'erasure-single';
  const e = f.erasure;
  if (wantSingle || haveSingle) {
    if (wantSingle && haveSingle) return undefined;
    return {
      action: 'fail',
      code: 'UnsupportedSnsdExpansion',
      message: `pool "${geo.cmdline}": drives are formatted as ${haveSingle ? 'a single-drive deployment' : `${e.driveCount} drives in sets of ${e.setDriveCount}`} but the command line asks for ${wantSingle ? 'a single drive' : `${geo.setCount * geo.setDriveCount} drives in sets of ${geo.setDriveCount}`}; a single-drive deployment cannot be expanded or changed`,
    };
  }
  if (e.driveCount !== geo.setCount * geo.setDriveCount || e.setDriveCount !== geo.setDriveCount) {
    return {
      action: 'fail',
      code: 'PoolTopologyMismatch',
      message: `pool "${geo.cmdline}": stored format has ${e.driveCount} drives in sets of ${e.setDriveCount}, the configuration has ${geo.setCount * geo.setDriveCount} drives in sets of ${geo.setDriveCount}; the layout of a formatted pool is permanent (restore the original command line and SVC_ERASURE_SET_DRIVE_COUNT)`,
    };
  }
  return undefined;
}

/**
 * Decides what to do with a pool given what each of its drives holds (in
 * command-line order).
 * - every drive reachable and unformatted → `fresh`;
 * - a format shared by at least `formatQuorum` drives → checked against the
 *   configured geometry → `use` (with each drive's slot) or `fail`
 *   (`PoolTopologyMismatch`, `UnsupportedSnsdExpansion`);
 * - otherwise `wait` while offline drives could still complete the picture,
 *   else `fail` (`CorruptedFormat`).
 */
/**
 * True when the formatted drives all carry one format and every other drive
 * is unformatted or unreachable: what a pool looks like while its first node
 * is still writing `format.json` to each drive. A node that does not format
 * waits on this state instead of calling the pool corrupt.
 */
export function formatInProgress(drives: readonly DriveFormatState[]): boolean {
  const keys = new Set(drives.flatMap((d) => (d.state === 'formatted' ? [matrixKey(d.format)] : [])));
  return keys.size === 1 && drives.every((d) => d.state !== 'corrupt');
}

export function decideFormat(geo: PoolGeometry, drives: readonly DriveFormatState[]): FormatDecision {
  const n = drives.length;
  if (n !== geo.setCount * geo.setDriveCount) {
    return { action: 'fail', code: 'InternalError', message: `pool "${geo.cmdline}": ${n} drive states for ${geo.setCount * geo.setDriveCount} drives` };
  }
  const formatted = drives.flatMap((d) => (d.state === 'formatted' ? [d.format] : []));
  const offline = drives.filter((d) => d.state === 'offline').length;
  const corrupt = drives.filter((d) => d.state === 'corrupt');

  if (formatted.length === 0) {
    if (corrupt.length > 0) {
      return { action: 'fail', code: 'CorruptedFormat', message: `pool "${geo.cmdline}": ${corrupt.map((c) => (c.state === 'corrupt' ? c.reason : '')).join('; ')}` };
    }
    if (offline > 0) return { action: 'wait', reason: `pool "${geo.cmdline}": ${offline} of ${n} drives unreachable; a fresh pool is formatted only when every drive is reachable` };
    return { action: 'fresh' };
  }

  // Group formats by (deployment id, matrix); the largest group is the candidate.
  const groups = new Map<string, { format: FormatFile; count: number }>();
  for (const f of formatted) {
    const k = matrixKey(f);
    const g = groups.get(k);
    if (g) g.count++;
    else groups.set(k, { format: f, count: 1 });
  }
  const ranked = [...groups.values()].sort((a, b) => b.count - a.count);
  const best = ranked[0]!;
  const tie = ranked.length > 1 && ranked[1]!.count === best.count;
  const quorum = formatQuorum(n);

  // The stored geometry is decisive on its own: it can only be wrong in one way.
  const mismatch = geometryMismatch(geo, best.format);
  if (mismatch && !tie) return mismatch;

  if (tie || best.count < quorum) {
    if (best.count + offline >= quorum && !tie) {
      return { action: 'wait', reason: `pool "${geo.cmdline}": ${best.count} of ${n} drives agree on a format, ${quorum} needed; ${offline} unreachable` };
    }
    if (tie && offline > 0) return { action: 'wait', reason: `pool "${geo.cmdline}": drives disagree on the format; waiting for ${offline} unreachable drives` };
    return {
      action: 'fail',
      code: 'CorruptedFormat',
      message: `pool "${geo.cmdline}": no format quorum (${best.count} of ${n} drives agree${tie ? ', conflicting formats' : ''}, ${quorum} needed)`,
    };
  }

  const ref = best.format;
  const slotOf = new Map<string, { set: number; slot: number }>();
  ref.erasure.sets.forEach((row, s) => {
    row.forEach((id, d) => {
      slotOf.set(id, { set: s, slot: d });
    });
  });
  const used = new Set<string>();
  const slots: SlotStatus[] = drives.map((d) => {
    if (d.state === 'unformatted') return { status: 'unformatted' };
    if (d.state === 'offline') return { status: 'offline', reason: d.reason };
    if (d.state === 'corrupt') return { status: 'corrupt', reason: d.reason };
    if (matrixKey(d.format) !== matrixKey(ref)) return { status: 'foreign', reason: `drive belongs to deployment ${d.format.id} or another pool` };
    const pos = slotOf.get(d.format.erasure.this)!;
    if (used.has(d.format.erasure.this)) return { status: 'foreign', reason: `drive id ${d.format.erasure.this} appears on two drives` };
    used.add(d.format.erasure.this);
    return { status: 'ok', set: pos.set, slot: pos.slot, driveId: d.format.erasure.this };
  });
  return { action: 'use', reference: ref, slots };
}

/** Format documents for a fresh pool, one per drive in command-line order. */
export function newPoolFormats(geo: PoolGeometry, deploymentId: string, newId: () => string = randomUUID): FormatFile[] {
  const ids: string[][] = [];
  for (let s = 0; s < geo.setCount; s++) {
    const row: string[] = [];
    for (let d = 0; d < geo.setDriveCount; d++) row.push(newId());
    ids.push(row);
  }
  const single = geo.setCount * geo.setDriveCount === 1;
  return ids.flat().map((id) => ({
    version: FORMAT_VERSION,
    format: single ? 'erasure-single' : 'erasure',
    id: deploymentId,
    erasure: {
      this: id,
      sets: ids,
      distributionAlgo: DISTRIBUTION_ALGO,
      setCount: geo.setCount,
      setDriveCount: geo.setDriveCount,
      driveCount: geo.setCount * geo.setDriveCount,
    },
  }));
}

// ===== orchestration over any drive transport

/** Minimal per-drive access the quorum logic needs; `i` is the drive's command-line index in the pool. */
export interface FormatIO {
  readFormat(i: number): Promise<DriveFormatState>;
  writeFormat(i: number, format: FormatFile): Promise<void>;
}

export type PoolFormatResult =
  | { readonly action: 'use'; readonly formatted: boolean; readonly reference: FormatFile; readonly slots: readonly SlotStatus[] }
  | { readonly action: 'wait'; readonly reason: string };

/**
 * Reads every drive of a pool, formats it when fresh (with `deploymentId`,
 * or a new one), and returns the decision. Throws `SvcError` for `fail`.
 * A fresh pool is re-read after writing so the result reflects the disks.
 */
export async function ensurePoolFormat(
  geo: PoolGeometry,
  io: FormatIO,
  opts: { deploymentId?: string | undefined; newId?: () => string } = {},
): Promise<PoolFormatResult> {
  const n = geo.setCount * geo.setDriveCount;
  const read = () => Promise.all(Array.from({ length: n }, (_, i) => io.readFormat(i)));
  const decision = decideFormat(geo, await read());
  if (decision.action === 'fail') throw new SvcError(decision.code, decision.message, { pool: geo.cmdline });
  if (decision.action === 'wait') return decision;
  if (decision.action === 'use') {
    if (opts.deploymentId !== undefined && decision.reference.id !== opts.deploymentId) {
      throw new SvcError('CorruptedFormat', `pool "${geo.cmdline}" belongs to deployment ${decision.reference.id}, other pools to ${opts.deploymentId}`, {
        pool: geo.cmdline,
      });
    }
    return { action: 'use', formatted: false, reference: decision.reference, slots: decision.slots };
  }
  const formats = newPoolFormats(geo, opts.deploymentId ?? (opts.newId ?? randomUUID)(), opts.newId);
  await Promise.all(formats.map((f, i) => io.writeFormat(i, f)));
  const after = decideFormat(geo, await read());
  if (after.action !== 'use') {
    throw new SvcError('CorruptedFormat', `pool "${geo.cmdline}": drives do not read back the format just written (${after.action})`, { pool: geo.cmdline });
  }
  return { action: 'use', formatted: true, reference: after.reference, slots: after.slots };
}

/** `FormatIO` over local drive roots. */
export function localFormatIO(roots: readonly string[]): FormatIO {
  return {
    readFormat: (i) => readFormatFile(roots[i]!),
    writeFormat: (i, f) => writeFormatFile(roots[i]!, f),
  };
}

/**
 * A `Drive` that reports each operation on the `svc:drive:io` tracing
 * channel (`util/diagnostics.ts`), for per-drive I/O spans, inside requests
 * traced in detail (sampled). Otherwise every call goes straight to the
 * wrapped drive: a property read and a call, no allocation.
 *
 * Streams (`createFile`'s input, `readFileStream`'s output, `walkDir`) are
 * traced for the call itself: a read span covers opening the stream, a
 * write span the whole upload (the call resolves once the file is durable).
 */
import { type DriveIoMessage, driveIo, tracingDetail } from '../util/diagnostics.ts';
import type { DiskInfo, Drive, FileVersion, MakeVolOptions, PartState, RenameDataResult, VolInfo, WalkEntry, WalkOptions } from './drive.ts';

export class TracedDrive implements Drive {
  readonly #d: Drive;

  constructor(drive: Drive) {
    this.#d = drive;
  }

  get endpoint(): string {
    return this.#d.endpoint;
  }

  /** The drive this one reports for. */
  get inner(): Drive {
    return this.#d;
  }

  #trace<T>(op: string, vol: string, path: string, fn: () => Promise<T>): Promise<T> {
    const msg: DriveIoMessage = { drive: this.#d.endpoint, op, vol, path };
    return driveIo.tracePromise(fn, msg);
  }

  isOnline(): boolean {
    return this.#d.isOnline();
  }

  diskInfo(): Promise<DiskInfo> {
    return this.#d.diskInfo();
  }

  makeVol(vol: string, opts?: MakeVolOptions): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.makeVol(vol, opts);
    return this.#trace('makeVol', vol, '', () => this.#d.makeVol(vol, opts));
  }

  listVols(): Promise<VolInfo[]> {
    return this.#d.listVols();
  }

  statVol(vol: string): Promise<VolInfo> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.statVol(vol);
    return this.#trace('statVol', vol, '', () => this.#d.statVol(vol));
  }

  deleteVol(vol: string, force: boolean): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.deleteVol(vol, force);
    return this.#trace('deleteVol', vol, '', () => this.#d.deleteVol(vol, force));
  }

  writeAll(vol: string, path: string, data: Uint8Array): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.writeAll(vol, path, data);
    return this.#trace('writeAll', vol, path, () => this.#d.writeAll(vol, path, data));
  }

  readAll(vol: string, path: string): Promise<Uint8Array> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.readAll(vol, path);
    return this.#trace('readAll', vol, path, () => this.#d.readAll(vol, path));
  }

  createFile(vol: string, path: string, size: number, stream: AsyncIterable<Uint8Array>, opts?: { frameBlockSize?: number }): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.createFile(vol, path, size, stream, opts);
    return this.#trace('createFile', vol, path, () => this.#d.createFile(vol, path, size, stream, opts));
  }

  readFileStream(vol: string, path: string, offset: number, length: number, opts?: { chunkSize?: number; reuse?: boolean }): Promise<AsyncIterable<Uint8Array>> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.readFileStream(vol, path, offset, length, opts);
    return this.#trace('readFileStream', vol, path, () => this.#d.readFileStream(vol, path, offset, length, opts));
  }

  verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.verifyFile(vol, path, shardBlockSize, dataBytes);
    return this.#trace('verifyFile', vol, path, () => this.#d.verifyFile(vol, path, shardBlockSize, dataBytes));
  }

  checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.checkParts(vol, path, version, opts);
    return this.#trace('checkParts', vol, path, () => this.#d.checkParts(vol, path, version, opts));
  }

  renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.renameFile(srcVol, srcPath, dstVol, dstPath);
    return this.#trace('renameFile', dstVol, dstPath, () => this.#d.renameFile(srcVol, srcPath, dstVol, dstPath));
  }

  delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.delete(vol, path, opts);
    return this.#trace('delete', vol, path, () => this.#d.delete(vol, path, opts));
  }

  listDir(vol: string, path: string): Promise<string[]> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.listDir(vol, path);
    return this.#trace('listDir', vol, path, () => this.#d.listDir(vol, path));
  }

  readXlMeta(vol: string, path: string): Promise<Uint8Array> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.readXlMeta(vol, path);
    return this.#trace('readXlMeta', vol, path, () => this.#d.readXlMeta(vol, path));
  }

  renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.renameData(srcVol, srcPath, version, dstVol, dstPath);
    return this.#trace('renameData', dstVol, dstPath, () => this.#d.renameData(srcVol, srcPath, version, dstVol, dstPath));
  }

  undoRenameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string, replaced: FileVersion | undefined): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.undoRenameData(srcVol, srcPath, version, dstVol, dstPath, replaced);
    return this.#trace('undoRenameData', dstVol, dstPath, () => this.#d.undoRenameData(srcVol, srcPath, version, dstVol, dstPath, replaced));
  }

  commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.commitRenameData(srcVol, srcPath);
    return this.#trace('commitRenameData', srcVol, srcPath, () => this.#d.commitRenameData(srcVol, srcPath));
  }

  writeMetadata(vol: string, path: string, version: FileVersion, opts?: { update?: boolean }): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.writeMetadata(vol, path, version, opts);
    return this.#trace('writeMetadata', vol, path, () => this.#d.writeMetadata(vol, path, version, opts));
  }

  deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    if (!driveIo.hasSubscribers || !tracingDetail()) return this.#d.deleteVersion(vol, path, versionId);
    return this.#trace('deleteVersion', vol, path, () => this.#d.deleteVersion(vol, path, versionId));
  }

  walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    return this.#d.walkDir(vol, opts);
  }
}

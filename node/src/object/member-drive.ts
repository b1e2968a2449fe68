/**
 * Format membership of a set's drive slot (SPEC "Drive replacement"): a
 * drive belongs to its slot only while its `format.json` names the id the
 * pool's set matrix gives that slot. A drive that lost its format (emptied
 * while the node runs, swapped for an empty one, mounted over by another
 * file system) or carries another id is not a member: the object layer
 * treats it as offline (every call fails `DiskNotFound`, `isOnline()` is
 * false) until the set heal writes the format into its slot and rebuilds
 * what it should hold.
 *
 * Membership follows the drive's own report: every `diskInfo()` (the object
 * layer's periodic drive probe, placement, capacity) compares the id the
 * drive reads from its format.json with the expected one. A slot without an
 * expected id (tests and tools that run without formats) is always a member.
 */
import type {
  DiskInfo,
  Drive,
  FileVersion,
  MakeVolOptions,
  PartState,
  RenameDataResult,
  VolInfo,
  WalkEntry,
  WalkOptions,
} from '../storage/drive.ts';
import { SvcError } from '../util/errors.ts';

/** `member`; `unformatted`: reachable without a format (a replacement); `foreign`: formatted for another slot or deployment; `corrupt`: unreadable format. */
export type Membership = 'member' | 'unformatted' | 'foreign' | 'corrupt';

export class MemberDrive implements Drive {
  readonly inner: Drive;
  /** The id the set matrix gives this slot; undefined: membership is not checked. */
  readonly expectedId: string | undefined;
  #state: Membership = 'member';
  /** performance.now() of the last observation. */
  #observedAt = Number.NEGATIVE_INFINITY;

  constructor(inner: Drive, expectedId: string | undefined) {
    this.inner = inner;
    this.expectedId = expectedId;
  }

  get endpoint(): string {
    return this.inner.endpoint;
  }

  get membership(): Membership {
    return this.#state;
  }

  /** True when the drive reported its identity within the last `ms` milliseconds. */
  observedWithin(ms: number): boolean {
    return this.expectedId === undefined || performance.now() - this.#observedAt <= ms;
  }

  /** Updates membership from what the drive reports (diskInfo's `id` and `format`). */
  observe(info: DiskInfo): Membership {
    if (this.expectedId === undefined || !info.online) return this.#state;
    this.#observedAt = performance.now();
    let next: Membership;
    if (info.id === this.expectedId) next = 'member';
    else if (info.id !== '') next = 'foreign';
    else next = info.format === 'corrupt' ? 'corrupt' : 'unformatted';
    this.#state = next;
    return next;
  }

  #guard(): void {
    if (this.#state === 'member') return;
    const why =
      this.#state === 'unformatted'
        ? 'it has no format (an empty or replaced drive): the set heal must write its format and rebuild it first'
        : this.#state === 'corrupt'
          ? 'its format.json is unreadable'
          : `its format.json names another drive than this slot's ${this.expectedId}`;
    throw new SvcError('DiskNotFound', `${this.inner.endpoint} is not a member of its erasure set: ${why}`, { endpoint: this.inner.endpoint, membership: this.#state });
  }

  isOnline(): boolean {
    return this.#state === 'member' && this.inner.isOnline();
  }

  async diskInfo(): Promise<DiskInfo> {
    const info = await this.inner.diskInfo();
    this.observe(info);
    return this.#state === 'member' ? info : { ...info, online: false };
  }

  async makeVol(vol: string, opts?: MakeVolOptions): Promise<void> {
    this.#guard();
    return this.inner.makeVol(vol, opts);
  }

  async listVols(): Promise<VolInfo[]> {
    this.#guard();
    return this.inner.listVols();
  }

  async statVol(vol: string): Promise<VolInfo> {
    this.#guard();
    return this.inner.statVol(vol);
  }

  async deleteVol(vol: string, force: boolean): Promise<void> {
    this.#guard();
    return this.inner.deleteVol(vol, force);
  }

  async writeAll(vol: string, path: string, data: Uint8Array): Promise<void> {
    this.#guard();
    return this.inner.writeAll(vol, path, data);
  }

  async readAll(vol: string, path: string): Promise<Uint8Array> {
    this.#guard();
    return this.inner.readAll(vol, path);
  }

  async createFile(vol: string, path: string, size: number, stream: AsyncIterable<Uint8Array>, opts?: { frameBlockSize?: number }): Promise<void> {
    this.#guard();
    return this.inner.createFile(vol, path, size, stream, opts);
  }

  async readFileStream(vol: string, path: string, offset: number, length: number, opts?: { chunkSize?: number; reuse?: boolean }): Promise<AsyncIterable<Uint8Array>> {
    this.#guard();
    return this.inner.readFileStream(vol, path, offset, length, opts);
  }

  async verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    this.#guard();
    return this.inner.verifyFile(vol, path, shardBlockSize, dataBytes);
  }

  async checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]> {
    this.#guard();
    return this.inner.checkParts(vol, path, version, opts);
  }

  async renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void> {
    this.#guard();
    return this.inner.renameFile(srcVol, srcPath, dstVol, dstPath);
  }

  async delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void> {
    this.#guard();
    return this.inner.delete(vol, path, opts);
  }

  async listDir(vol: string, path: string): Promise<string[]> {
    this.#guard();
    return this.inner.listDir(vol, path);
  }

  async readXlMeta(vol: string, path: string): Promise<Uint8Array> {
    this.#guard();
    return this.inner.readXlMeta(vol, path);
  }

  async renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult> {
    this.#guard();
    return this.inner.renameData(srcVol, srcPath, version, dstVol, dstPath);
  }

  async undoRenameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string, replaced: FileVersion | undefined): Promise<void> {
    this.#guard();
    return this.inner.undoRenameData(srcVol, srcPath, version, dstVol, dstPath, replaced);
  }

  async commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    this.#guard();
    return this.inner.commitRenameData(srcVol, srcPath);
  }

  async writeMetadata(vol: string, path: string, version: FileVersion, opts?: { update?: boolean }): Promise<void> {
    this.#guard();
    return this.inner.writeMetadata(vol, path, version, opts);
  }

  async deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    this.#guard();
    return this.inner.deleteVersion(vol, path, versionId);
  }

  async *walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    this.#guard();
    yield* this.inner.walkDir(vol, opts);
  }
}

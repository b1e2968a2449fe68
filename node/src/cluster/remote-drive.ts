/**
 * `RemoteDrive`: a drive of another node, reached over internode RPC
 * (`/svc/rpc/v1/<drive-id>/<method>`, served by `driveRpcService`). Shard data
 * streams both ways; metadata travels as msgpack. Transport failures surface as
 * `DiskNotFound` (the peer client marks the node offline and probes it in the
 * background); errors raised by the remote drive come back with their code.
 */
import type { Readable } from 'node:stream';
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
import type { PeerClient } from './rpc-client.ts';
import { storagePath } from './rpc-wire.ts';

/** Deadline of calls whose work grows with the data (`verifyFile`, a deep `checkParts`). */
export const HEAVY_CALL_TIMEOUT_MS = 10 * 60_000;

export class RemoteDrive implements Drive {
  readonly endpoint: string;
  /** The drive's id on its node: the endpoint path, e.g. `/data/d1`. */
  readonly driveId: string;
  readonly #peer: PeerClient;
  /** Set when the peer answered that this drive is missing; cleared by the next success. */
  #driveMissing = false;

  constructor(peer: PeerClient, driveId: string, endpoint: string) {
    this.#peer = peer;
    this.driveId = driveId;
    this.endpoint = endpoint;
  }

  isOnline(): boolean {
    return this.#peer.isOnline() && !this.#driveMissing;
  }

  async rpc(method: string, ...args: unknown[]): Promise<unknown> {
    return this.#track(this.#peer.rpcCall(storagePath(this.driveId, method), args));
  }

  /**
   * A call whose work grows with the data (a whole shard file read back or
   * bitrot-verified): the metadata deadline would cut it off on a big part,
   * so it gets a long one; a hung peer is still caught in under a second by
   * the client's responsiveness watch.
   */
  async #heavy(method: string, ...args: unknown[]): Promise<unknown> {
    return this.#track(this.#peer.rpcCall(storagePath(this.driveId, method), args, { timeoutMs: HEAVY_CALL_TIMEOUT_MS }));
  }

  /** Follows the remote drive's own state: `DiskNotFound` from the peer (not the transport) marks it missing. */
  async #track<T>(p: Promise<T>): Promise<T> {
    try {
      const v = await p;
      this.#driveMissing = false;
      return v;
    } catch (err) {
      if (err instanceof SvcError && err.code === 'DiskNotFound' && this.#peer.isOnline()) this.#driveMissing = true;
      throw err;
    }
  }

  async diskInfo(): Promise<DiskInfo> {
    return (await this.rpc('diskInfo')) as DiskInfo;
  }

  async makeVol(vol: string, opts?: MakeVolOptions): Promise<void> {
    if (opts === undefined) await this.rpc('makeVol', vol);
    else await this.rpc('makeVol', vol, opts);
  }

  async listVols(): Promise<VolInfo[]> {
    return (await this.rpc('listVols')) as VolInfo[];
  }

  async statVol(vol: string): Promise<VolInfo> {
    return (await this.rpc('statVol', vol)) as VolInfo;
  }

  async deleteVol(vol: string, force: boolean): Promise<void> {
    await this.rpc('deleteVol', vol, force);
  }

  async writeAll(vol: string, path: string, data: Uint8Array): Promise<void> {
    await this.rpc('writeAll', vol, path, data);
  }

  async readAll(vol: string, path: string): Promise<Uint8Array> {
    return (await this.rpc('readAll', vol, path)) as Uint8Array;
  }

  async createFile(vol: string, path: string, size: number, stream: AsyncIterable<Uint8Array>, opts?: { frameBlockSize?: number }): Promise<void> {
    // The frame size travels along so the serving drive checks frames as it
    // writes them (and its verifyFile can skip the read-back), as a local drive does.
    await this.#track(this.#peer.rpcUpload(storagePath(this.driveId, 'createFile'), [vol, path, size, opts?.frameBlockSize ?? 0], stream));
  }

  async readFileStream(vol: string, path: string, offset: number, length: number): Promise<Readable> {
    return this.#track(this.#peer.rpcDownload(storagePath(this.driveId, 'readFileStream'), [vol, path, offset, length]));
  }

  async verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    await this.#heavy('verifyFile', vol, path, shardBlockSize, dataBytes);
  }

  async checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]> {
    // The version travels without its inline shard: the serving drive reads its own files.
    const { inlineData: _inline, ...plain } = version;
    return (await (opts.deep ? this.#heavy('checkParts', vol, path, plain, { deep: true }) : this.rpc('checkParts', vol, path, plain, { deep: false }))) as PartState[];
  }

  async renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void> {
    await this.rpc('renameFile', srcVol, srcPath, dstVol, dstPath);
  }

  async delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void> {
    await this.rpc('delete', vol, path, { recursive: opts.recursive });
  }

  async listDir(vol: string, path: string): Promise<string[]> {
    return (await this.rpc('listDir', vol, path)) as string[];
  }

  async readXlMeta(vol: string, path: string): Promise<Uint8Array> {
    return (await this.rpc('readXlMeta', vol, path)) as Uint8Array;
  }

  async renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult> {
    const res = (await this.rpc('renameData', srcVol, srcPath, version, dstVol, dstPath)) as RenameDataResult | undefined;
    return res ?? {};
  }

  async undoRenameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
    replaced: FileVersion | undefined,
  ): Promise<void> {
    await this.rpc('undoRenameData', srcVol, srcPath, version, dstVol, dstPath, replaced ?? null);
  }

  async commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    await this.rpc('commitRenameData', srcVol, srcPath);
  }

  async writeMetadata(vol: string, path: string, version: FileVersion, opts?: { update?: boolean }): Promise<void> {
    await this.rpc('writeMetadata', vol, path, version, opts ?? null);
  }

  async deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    await this.rpc('deleteVersion', vol, path, versionId);
  }

  async *walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    const wire: WalkOptions = { recursive: opts.recursive };
    if (opts.prefix !== undefined) wire.prefix = opts.prefix;
    if (opts.marker !== undefined) wire.marker = opts.marker;
    if (opts.orphanAgeMs !== undefined) wire.orphanAgeMs = opts.orphanAgeMs;
    for await (const rec of this.#peer.rpcRecords(storagePath(this.driveId, 'walkDir'), [vol, wire])) yield rec as WalkEntry;
  }
}

/**
 * Server side of `RemoteDrive`: exposes one local `Drive` as an `RpcService`
 * under `/svc/rpc/v1/<drive-id>/<method>`. Every method name equals the
 * `Drive` method it serves; args arrive as a msgpack array in `Drive`
 * parameter order (see `remote-drive.ts`).
 */
import { Readable } from 'node:stream';
import type { Drive, FileVersion, MakeVolOptions, WalkOptions } from '../storage/drive.ts';
import { SvcError } from '../util/errors.ts';
import type { RpcMethod, RpcService } from './rpc-server.ts';

function argv(args: unknown, n: number): unknown[] {
  if (!Array.isArray(args) || args.length !== n) throw new SvcError('InvalidArgument', `storage RPC expects ${n} arguments`);
  return args;
}

function str(v: unknown): string {
  if (typeof v !== 'string') throw new SvcError('InvalidArgument', 'storage RPC expects a string argument');
  return v;
}

function num(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new SvcError('InvalidArgument', 'storage RPC expects a number argument');
  return v;
}

function bytes(v: unknown): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new SvcError('InvalidArgument', 'storage RPC expects a binary argument');
  return v;
}

function obj<T>(v: unknown): T {
  if (typeof v !== 'object' || v === null) throw new SvcError('InvalidArgument', 'storage RPC expects an object argument');
  return v as T;
}

function unary(handle: (a: unknown[]) => Promise<unknown>, n: number): RpcMethod {
  return { kind: 'unary', handle: async (args) => handle(argv(args, n)) };
}

/** The RPC methods serving `drive`. */
export function driveRpcService(drive: Drive): RpcService {
  return {
    diskInfo: unary(() => drive.diskInfo(), 0),
    makeVol: {
      kind: 'unary',
      handle: async (args) => {
        // One argument from nodes that send no options.
        const [v, o] = Array.isArray(args) && args.length === 1 ? [args[0], null] : argv(args, 2);
        return drive.makeVol(str(v), o === null || o === undefined ? undefined : obj<MakeVolOptions>(o));
      },
    },
    listVols: unary(() => drive.listVols(), 0),
    statVol: unary(([v]) => drive.statVol(str(v)), 1),
    deleteVol: unary(([v, f]) => drive.deleteVol(str(v), f === true), 2),
    writeAll: unary(([v, p, d]) => drive.writeAll(str(v), str(p), bytes(d)), 3),
    readAll: unary(([v, p]) => drive.readAll(str(v), str(p)), 2),
    createFile: {
      kind: 'upload',
      handle: async (args, body) => {
        const [v, p, size, frameBlockSize] = argv(args, 4);
        const frame = num(frameBlockSize);
        await drive.createFile(str(v), str(p), num(size), body, frame > 0 ? { frameBlockSize: frame } : undefined);
        return undefined;
      },
    },
    readFileStream: {
      kind: 'download',
      handle: async (args) => {
        const [v, p, off, len] = argv(args, 4);
        const stream = await drive.readFileStream(str(v), str(p), num(off), num(len));
        return stream instanceof Readable ? stream : Readable.from(stream, { objectMode: false });
      },
    },
    verifyFile: unary(([v, p, bs, n]) => drive.verifyFile(str(v), str(p), num(bs), num(n)), 4),
    checkParts: unary(([v, p, ver, o]) => drive.checkParts(str(v), str(p), obj<FileVersion>(ver), { deep: obj<{ deep?: unknown }>(o).deep === true }), 4),
    renameFile: unary(([sv, sp, dv, dp]) => drive.renameFile(str(sv), str(sp), str(dv), str(dp)), 4),
    delete: unary(([v, p, o]) => drive.delete(str(v), str(p), { recursive: obj<{ recursive?: unknown }>(o).recursive === true }), 3),
    listDir: unary(([v, p]) => drive.listDir(str(v), str(p)), 2),
    readXlMeta: unary(([v, p]) => drive.readXlMeta(str(v), str(p)), 2),
    renameData: unary(([sv, sp, ver, dv, dp]) => drive.renameData(str(sv), str(sp), obj<FileVersion>(ver), str(dv), str(dp)), 5),
    undoRenameData: unary(
      ([sv, sp, ver, dv, dp, rep]) =>
        drive.undoRenameData(str(sv), str(sp), obj<FileVersion>(ver), str(dv), str(dp), rep === undefined || rep === null ? undefined : obj<FileVersion>(rep)),
      6,
    ),
    commitRenameData: unary(([sv, sp]) => drive.commitRenameData(str(sv), str(sp)), 2),
    writeMetadata: unary(([v, p, ver, o]) => {
      const opts = o === undefined || o === null ? undefined : obj<{ update?: boolean }>(o);
      return drive.writeMetadata(str(v), str(p), obj<FileVersion>(ver), opts);
    }, 4),
    deleteVersion: unary(([v, p, id]) => drive.deleteVersion(str(v), str(p), str(id)), 3),
    walkDir: {
      kind: 'records',
      handle: (args) => {
        const [v, o] = argv(args, 2);
        return drive.walkDir(str(v), obj<WalkOptions>(o));
      },
    },
  };
}

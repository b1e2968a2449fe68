/**
 * Reads and read-modify-writes of `pool.bin` and `rebalance.bin` through the
 * object layer's `.svc.sys` records (`SysRecords`: newest copy across pools
 * at quorum, parity-N/2 writes on every pool, updates under the record's
 * namespace lock, so two pool leaders never overwrite each other's change).
 */
import { decodePoolMeta, encodePoolMeta, POOL_META_PATH, type PoolMeta } from './pool-meta.ts';
import { decodeRebalanceMeta, encodeRebalanceMeta, REBALANCE_META_PATH, type RebalanceMeta } from './rebalance-meta.ts';

/** The part of the object layer's `SysRecords` these records use. */
export interface SysRecordStore {
  /** The record's value at quorum; undefined when absent. */
  read(path: string): Promise<Uint8Array | undefined>;
  /** Under the record's lock: `fn` returns the new value, undefined to delete, `null` to leave it. */
  update(path: string, fn: (cur: Uint8Array | undefined) => Promise<Uint8Array | undefined | null>): Promise<unknown>;
}

/** What an update function returns: the new record, `undefined` to leave it, or `null` to delete it. */
export type RecordUpdate<T> = T | undefined | null;

export class PoolRecords {
  readonly #io: SysRecordStore;

  constructor(io: SysRecordStore) {
    this.#io = io;
  }

  async readPoolMeta(): Promise<PoolMeta | undefined> {
    const bytes = await this.#io.read(POOL_META_PATH);
    return bytes === undefined ? undefined : decodePoolMeta(bytes);
  }

  async readRebalanceMeta(): Promise<RebalanceMeta | undefined> {
    const bytes = await this.#io.read(REBALANCE_META_PATH);
    return bytes === undefined ? undefined : decodeRebalanceMeta(bytes);
  }

  /** Reads `pool.bin` under its lock, applies `fn`, persists the result; returns the record now in force. */
  updatePoolMeta(fn: (current: PoolMeta | undefined) => RecordUpdate<PoolMeta> | Promise<RecordUpdate<PoolMeta>>): Promise<PoolMeta | undefined> {
    return this.#update(POOL_META_PATH, decodePoolMeta, encodePoolMeta, fn);
  }

  updateRebalanceMeta(
    fn: (current: RebalanceMeta | undefined) => RecordUpdate<RebalanceMeta> | Promise<RecordUpdate<RebalanceMeta>>,
  ): Promise<RebalanceMeta | undefined> {
    return this.#update(REBALANCE_META_PATH, decodeRebalanceMeta, encodeRebalanceMeta, fn);
  }

  async #update<T>(
    path: string,
    decode: (b: Uint8Array) => T,
    encode: (v: T) => Buffer,
    fn: (current: T | undefined) => RecordUpdate<T> | Promise<RecordUpdate<T>>,
  ): Promise<T | undefined> {
    let result: T | undefined;
    await this.#io.update(path, async (bytes) => {
      const current = bytes === undefined ? undefined : decode(bytes);
      const next = await fn(current);
      if (next === undefined) {
        result = current;
        return null;
      }
      if (next === null) {
        result = undefined;
        return current === undefined ? null : undefined;
      }
      result = next;
      return encode(next);
    });
    return result;
  }
}

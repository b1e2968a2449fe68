/**
 * Small internal records under `.svc.sys` (bucket metadata today), written
 * on every pool with parity N/2 whatever the configured storage class.
 */
import { createHash, randomUUID } from 'node:crypto';
import { BLOCK_SIZE } from '../erasure/index.ts';
import { type FileVersion, SYS_VOL } from '../storage/drive.ts';
import { objectPath } from '../storage/object-path.ts';
import type { Clock } from '../util/clock.ts';
import { hashOrder } from './placement.ts';
import type { Pools } from './pools.ts';

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
}

export class SysRecords {
  readonly #pools: Pools;
  readonly #clock: Clock;

  constructor(pools: Pools, clock: Clock) {
    this.#pools = pools;
    this.#clock = clock;
  }

  /** Writes a small internal record under `.svc.sys` with parity N/2 on every pool. */
  async write(path: string, data: Uint8Array): Promise<void> {
    for (const pool of this.#pools.list) {
      const set = this.#pools.setOf(pool, path);
      const n = set.width;
      const parity = Math.floor(n / 2);
      const k = n - parity;
      const dist = hashOrder(`${SYS_VOL}/${path}`, n);
      const staged = await set.stageShards(
        (async function* () {
          if (data.length > 0) yield data;
        })(),
        data.length,
        { data: k, parity, distribution: dist, inlineBudget: Math.max(data.length, 1), partNumber: 1, dataDir: randomUUID() },
      );
      const now = this.#clock.now();
      const version: FileVersion = {
        versionId: 'null',
        modTime: now,
        type: 'object',
        dataDir: staged.dataDir,
        erasure: { data: k, parity, blockSize: BLOCK_SIZE, index: 0, distribution: dist },
        size: data.length,
        parts: [{ number: 1, size: data.length, etag: '', modTime: now }],
        etag: createHash('md5').update(data).digest('hex'),
        contentHeaders: {},
        userMeta: {},
        sysMeta: {},
        storageClass: 'STANDARD',
        tags: '',
        inline: staged.inline,
      };
      await set.commit(staged, version, SYS_VOL, path, SYS_VOL, path);
    }
  }

  /** Reads an internal record (first pool holding it at quorum); undefined when absent. */
  async read(path: string): Promise<Uint8Array | undefined> {
    const loc = await this.#pools.locate(SYS_VOL, path);
    if (!loc) return undefined;
    const v = loc.group.version;
    return collect(loc.set.readRange(SYS_VOL, objectPath(path), loc.group, 0, v.size, SYS_VOL, path));
  }

  async delete(path: string): Promise<void> {
    for (const pool of this.#pools.list) {
      await this.#pools.setOf(pool, path).deleteVersion(SYS_VOL, objectPath(path), 'null', SYS_VOL, path);
    }
  }
}

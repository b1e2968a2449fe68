/**
 * Test fixture: an object layer over real temp-dir drives, with helpers to
 * take a drive offline the way an operator would lose it (its root replaced
 * by a plain file) and bring it back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createObjectLayer, type ListQuorum } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import type { ObjectLayer } from '../src/object/types.ts';
import { newPoolFormats, writeFormatFile } from '../src/storage/format.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import type { Kms } from '../src/crypto/kms.ts';
import { type Clock, systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { type CommitHooks, type DriveHooks, faultyDrive } from './helpers/faulty-drive.ts';

export const DEPLOYMENT_ID = '8a3e1f0c-5b2d-4c6e-9f71-0d2b3c4e5f60';

export interface Fixture {
  base: string;
  roots: string[];
  drives: LocalDrive[];
  layer: ObjectLayer & { mrf: ServerPools['mrf'] };
  offline(i: number): Promise<void>;
  online(i: number): Promise<void>;
  /** A fresh layer over the same drives (a restart). */
  reopen(opts?: Partial<FixtureOptions>): Promise<ObjectLayer & { mrf: ServerPools['mrf'] }>;
  cleanup(): Promise<void>;
}

export interface FixtureOptions {
  drives: number;
  sets?: number;
  standardParity: number;
  rrsParity?: number;
  inlineBlock?: number;
  listQuorum?: ListQuorum;
  /** Crash points of the set-level commit (drive decorators, `helpers/faulty-drive.ts`). */
  commitHooks?: CommitHooks;
  /** Per-drive crash points and faults (drive decorators, `helpers/faulty-drive.ts`). */
  driveHooks?: (index: number) => DriveHooks | undefined;
  /** Write a format.json on every drive and give the layer the slot ids (drive membership checked). */
  formatted?: boolean;
  /** Key store for SSE-S3 / SSE-KMS (the same one after `reopen`). */
  kms?: Kms;
  /** The engine's clock (default the system clock). */
  clock?: Clock;
}

export async function makeFixture(opts: FixtureOptions): Promise<Fixture> {
  const base = await mkdtemp(join(tmpdir(), 'svc-engine-'));
  const sets = opts.sets ?? 1;
  const roots: string[] = [];
  for (let i = 0; i < opts.drives * sets; i++) {
    const r = join(base, `d${i}`);
    await mkdir(r);
    roots.push(r);
  }
  const mkDrives = async (hooks?: FixtureOptions['driveHooks'], commit?: CommitHooks) => {
    const ds = roots.map((r, i) => {
      const h = hooks?.(i);
      const d = new LocalDrive(r);
      return h || commit ? faultyDrive(d, h, commit) : d;
    });
    for (const d of ds) await d.init().catch(() => undefined);
    return ds;
  };
  let ids: string[][] | undefined;
  if (opts.formatted) {
    const fmts = newPoolFormats({ cmdline: 'fixture', setCount: sets, setDriveCount: opts.drives }, DEPLOYMENT_ID);
    for (const [i, f] of fmts.entries()) await writeFormatFile(roots[i]!, f);
    ids = fmts[0]!.erasure.sets.map((row) => [...row]);
  }
  const build = async (ds: LocalDrive[], o: Partial<FixtureOptions>) =>
    (await createObjectLayer({
      deploymentId: DEPLOYMENT_ID,
      pools: [
        {
          cmdline: `${base}/d{0...${roots.length - 1}}`,
          sets: Array.from({ length: sets }, (_, s) => ds.slice(s * opts.drives, (s + 1) * opts.drives)),
          standardParity: opts.standardParity,
          rrsParity: opts.rrsParity ?? Math.min(1, opts.standardParity),
          ...(ids ? { ids } : {}),
        },
      ],
      ...(opts.inlineBlock !== undefined ? { inlineBlock: opts.inlineBlock } : {}),
      ...(o.listQuorum ?? opts.listQuorum ? { listQuorum: o.listQuorum ?? opts.listQuorum! } : {}),
      logger: silentLogger,
      clock: opts.clock ?? systemClock,
      ...(opts.kms ? { kms: opts.kms } : {}),
    })) as ObjectLayer & { mrf: ServerPools['mrf'] };
  const drives = await mkDrives(opts.driveHooks, opts.commitHooks);
  const fx: Fixture = {
    base,
    roots,
    drives,
    layer: await build(drives, {}),
    async offline(i) {
      await rename(roots[i]!, `${roots[i]}.away`);
      await writeFile(roots[i]!, 'not a drive');
    },
    async online(i) {
      await rm(roots[i]!, { force: true });
      await rename(`${roots[i]}.away`, roots[i]!);
    },
    async reopen(o = {}) {
      const ds = await mkDrives(o.driveHooks, o.commitHooks ?? opts.commitHooks);
      return build(ds, o);
    },
    async cleanup() {
      for (const d of drives) await d.flush();
      await rm(base, { recursive: true, force: true });
    },
  };
  return fx;
}

export function bytes(n: number, seed = 1): Buffer {
  if (n === 0) return Buffer.alloc(0);
  // Deterministic but non-repeating content.
  const out = Buffer.allocUnsafe(n);
  let block = createHash('sha256').update(`seed-${seed}`).digest();
  for (let off = 0; off < n; off += 32) {
    block = createHash('sha256').update(block).digest();
    block.copy(out, off, 0, Math.min(32, n - off));
  }
  return out;
}

export function rand(n: number): Buffer {
  return randomBytes(n);
}

export async function readAllBody(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of body) parts.push(c);
  return Buffer.concat(parts);
}

export async function put(layer: ObjectLayer, bucket: string, key: string, data: Uint8Array, opts = {}) {
  return layer.putObject(bucket, key, putDataFromBuffer(data), opts);
}

export async function get(layer: ObjectLayer, bucket: string, key: string, opts = {}): Promise<Buffer> {
  const r = await layer.getObject(bucket, key, opts);
  return readAllBody(r.body);
}

export function md5(b: Uint8Array): string {
  return createHash('md5').update(b).digest('hex');
}

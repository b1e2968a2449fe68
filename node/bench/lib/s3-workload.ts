/**
 * The four S3 rows both the `s3` and the `peer` bench sections run, against
 * any endpoint whose CPU time the bench can read (a `ServerProcess`, Ceph's
 * daemons): 64 MiB PUT and GET ×N at 4 concurrent, 4 KiB PUT and GET ×N at
 * 16 concurrent, each as wall seconds and server CPU-seconds.
 */
import type { Agent } from 'node:http';
import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';

export const MiB = 1024 * 1024;
export const MB = 1e6;
export const BIG = 64 * MiB;
export const SMALL = 4096;
const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
export const BIG_COUNT = Math.max(4, Math.round(8 * scale));
export const SMALL_COUNT = Math.max(100, Math.round(1000 * scale));
/** Small PUTs and GETs of one warm-up round (see `workload`). */
export const WARM_COUNT = Math.ceil(SMALL_COUNT / 2);
/** Most warm-up rounds (see `workload`). */
const WARM_ROUNDS_MAX = 8;
/** A warm-up round whose small GETs per CPU-second gained less than this on the round before ends the warm-up. */
const WARM_STEADY = 0.05;

/** Something whose CPU-seconds so far the bench can read (all its threads, all its processes). */
export interface CpuSource {
  cpuSeconds(): number;
}

export interface Run {
  wall: number;
  cpu: number;
}

/** Runs `total` calls of `op(i)`, `concurrency` at a time; wall seconds and server CPU-seconds. */
export async function run(server: CpuSource, total: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<Run> {
  const cpu0 = server.cpuSeconds();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return { wall, cpu: Math.max(server.cpuSeconds() - cpu0, 0.01) };
}

export async function drain(body: unknown): Promise<number> {
  let n = 0;
  for await (const c of body as AsyncIterable<Uint8Array>) n += c.length;
  return n;
}

/**
 * `@aws-sdk/client-s3` for `endpoint` (path-style), at its default settings
 * (signed payloads, CRC32 checksums, its own keep-alive agent) unless an
 * `agent` or other settings (`config`) are given.
 */
export function s3Client(endpoint: string, creds: { accessKey: string; secretKey: string }, agent?: Agent, config: S3ClientConfig = {}): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
    ...(agent === undefined ? {} : { requestHandler: new NodeHttpHandler({ httpAgent: agent }) }),
    ...config,
  });
}

/** The four rows. */
export type RowKey = 'bigPut' | 'bigGet' | 'smallPut' | 'smallGet';

/** The four workloads against one endpoint. */
export interface Workload {
  bigPut: Run;
  bigGet: Run;
  smallPut: Run;
  smallGet: Run;
  /** Warm-up rounds the server took to reach its steady state (see `workload`). */
  warmRounds: number;
  /** Small GETs per server CPU-second in each warm-up round. */
  warmGets: number[];
}

/**
 * Warms up (JIT, connections, cached bucket metadata), then runs the four
 * rows in bucket `bucket`. The warm-up runs rounds of half a row of each
 * small operation at the row's concurrency until a round's small GETs per
 * CPU-second gain less than `WARM_STEADY` on the round before (two rounds at
 * least, `WARM_ROUNDS_MAX` at most), the same rule for every server.
 */
export async function workload(server: CpuSource, s3: S3Client, big: Buffer, small: Buffer, bucket = 'bench'): Promise<Workload> {
  const put = (key: string, body: Buffer) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const get = async (key: string, size: number) => {
    const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const n = await drain(r.Body);
    if (n !== size) throw new Error(`GET ${key}: ${n} bytes, expected ${size}`);
  };
  await put('big/warm', big);
  await get('big/warm', BIG);
  // The rows measure a server in its steady state (svc's request path compiled by V8's optimising
  // tiers, as in a server that has run a while), not its first thousands of requests. 32 warm-up
  // requests left svc's 4 KiB GET row 25-30 % below the same build after a longer warm-up; one
  // fixed half row still left it 20-35 % below on a CPU where the tiers took longer.
  const warmGets: number[] = [];
  for (let round = 1; ; round++) {
    await run(server, WARM_COUNT, 16, (i) => put(`small/warm-${round}-${i}`, small));
    warmGets.push(WARM_COUNT / (await run(server, WARM_COUNT, 16, (i) => get(`small/warm-${round}-${i}`, SMALL))).cpu);
    const gain = round >= 2 ? warmGets[round - 1]! / warmGets[round - 2]! - 1 : Infinity;
    if (round >= WARM_ROUNDS_MAX || gain < WARM_STEADY) break;
  }
  const bigPut = await run(server, BIG_COUNT, 4, (i) => put(`big/${i}`, big));
  const bigGet = await run(server, BIG_COUNT, 4, (i) => get(`big/${i}`, BIG));
  const smallPut = await run(server, SMALL_COUNT, 16, (i) => put(`small/${i}`, small));
  const smallGet = await run(server, SMALL_COUNT, 16, (i) => get(`small/${i}`, SMALL));
  return { bigPut, bigGet, smallPut, smallGet, warmRounds: warmGets.length, warmGets };
}

/** Per-CPU-second and wall rates of a workload's rows. */
export const rate = {
  bigWall: (r: Run) => (BIG_COUNT * BIG) / MB / r.wall,
  bigCpu: (r: Run) => (BIG_COUNT * BIG) / MB / r.cpu,
  smallWall: (r: Run) => SMALL_COUNT / r.wall,
  smallCpu: (r: Run) => SMALL_COUNT / r.cpu,
};

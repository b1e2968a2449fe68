/**
 * S3 section: 64 MiB PUT/GET (MB/s) and 4 KiB PUT/GET (ops/s) at concurrency
 * 1 and 16 through the S3 API with a real client (@aws-sdk/client-s3, its
 * default checksums on), each beside the object-layer figure measured in the
 * same run on the same engine (4 LocalDrives, EC:2), and beside that
 * figure combined with a loopback-HTTP ceiling (plain node:http moving the
 * same bytes, no S3, no disk). Client, server and engine share this process,
 * so their costs add: the combined ceiling is 1 / (1/layer + 1/http), and
 * what is left between it and the S3 figure is the S3 layer plus the
 * client's signing and checksums.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createS3Handler } from '../src/api/s3/index.ts';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ObjectLayer } from '../src/object/types.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { measure, section } from './harness.ts';

const MiB = 1024 * 1024;
const MB = 1e6;
const BIG = 64 * MiB;
const SMALL = 4096;
const CONCURRENCY = [1, 16];

interface Rate {
  perWall: number;
  perCpu: number;
}

/** Runs `rounds` calls of `fn` (after one warm-up) and returns units per wall- and CPU-second. */
async function timed(units: number, rounds: number, fn: () => Promise<unknown>): Promise<Rate> {
  await fn();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await fn();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = Math.max((cpu.user + cpu.system) / 1e6, 1e-6);
  return { perWall: (units * rounds) / wall, perCpu: (units * rounds) / cpuS };
}

async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

/** Costs that add up in one process: the rate of doing both. */
function combined(a: number, b: number): number {
  return 1 / (1 / a + 1 / b);
}

/** Plain HTTP over loopback, the same agent and chunking: GET downloads `body`, PUT uploads it (drained). */
function loopbackHttp(port: number, agent: Agent, method: 'GET' | 'PUT', body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: '/', agent, headers: method === 'PUT' ? { 'content-length': body.length } : {} }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
      });
      res.on('end', () => (method === 'GET' && n !== body.length ? reject(new Error('short loopback read')) : resolve()));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method === 'PUT') {
      for (let off = 0; off < body.length; off += MiB) req.write(body.subarray(off, off + MiB));
    }
    req.end();
  });
}

function parallel(n: number, fn: (i: number) => Promise<unknown>): Promise<unknown[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
}

section('s3: @aws-sdk/client-s3 PUT/GET vs the object layer (4 drives EC:2)', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-s3-'));
  const drives: LocalDrive[] = [];
  let layer: ObjectLayer | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const server = createServer();
  const plain = createServer((req, res) => {
    if (req.method === 'PUT') {
      req.resume();
      req.on('end', () => res.end());
      return;
    }
    res.writeHead(200, { 'content-length': plainBody.length });
    let off = 0;
    const pump = () => {
      while (off < plainBody.length) {
        const ok = res.write(plainBody.subarray(off, off + MiB));
        off += MiB;
        if (!ok) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  let plainBody = Buffer.alloc(0);
  try {
    for (let i = 0; i < 4; i++) {
      await mkdir(join(base, `d${i}`));
      const d = new LocalDrive(join(base, `d${i}`));
      await d.init();
      drives.push(d);
    }
    layer = await createObjectLayer({
      deploymentId: '22222222-3333-4444-8555-666666666666',
      pools: [{ cmdline: 'bench-s3', sets: [drives], standardParity: 2, rrsParity: 1 }],
      logger: silentLogger,
      clock: systemClock,
    });
    const engine = layer;
    const creds = { accessKey: 'bench', secretKey: 'bench-secret' };
    server.on('request', createS3Handler({ objectLayer: engine, credentials: [creds], logger: silentLogger, clock: systemClock }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainPort = (plain.address() as AddressInfo).port;
    const s3 = new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
      requestHandler: new NodeHttpHandler({ httpAgent: agent }),
    });
    await engine.makeBucket('bench');
    const big = randomBytes(BIG);
    plainBody = big;
    const small = randomBytes(SMALL);
    ctx.info('client, server and engine share this process; MB/s are wall-clock object bytes; ceilings: the object layer at the same');
    ctx.info('concurrency, and "layer+http" = that layer figure combined with plain loopback HTTP of the same bytes (costs added)');

    /** The rows of one 64 MiB operation: loopback HTTP, then S3 against the layer and against layer+http. */
    const largeRows = (op: 'PUT' | 'GET', c: number, s3r: Rate, layer: Rate, http: Rate) => {
      const name = `S3 ${op} 64 MiB, concurrency ${c}`;
      ctx.row({ name: `loopback HTTP ${op} 64 MiB, concurrency ${c}`, value: http.perWall / MB, unit: 'MB/s' });
      ctx.row({ name, value: s3r.perWall / MB, unit: 'MB/s', ceiling: { name: 'object layer', value: layer.perWall / MB } });
      ctx.row({ name, value: s3r.perWall / MB, unit: 'MB/s', ceiling: { name: 'layer+http', value: combined(layer.perWall, http.perWall) / MB } });
      ctx.row({
        name: `${name}, per CPU-s`,
        value: s3r.perCpu / MB,
        unit: 'MB/cpu-s',
        ceiling: { name: 'layer+http', value: combined(layer.perCpu, http.perCpu) / MB },
      });
    };

    for (const c of CONCURRENCY) {
      const rounds = c === 1 ? 3 : 1;
      const layerPut = await timed(BIG * c, rounds, () => parallel(c, (i) => engine.putObject('bench', `layer/big-${i}`, putDataFromBuffer(big), {})));
      const s3Put = await timed(BIG * c, rounds, () => parallel(c, (i) => s3.send(new PutObjectCommand({ Bucket: 'bench', Key: `s3/big-${i}`, Body: big }))));
      const httpPut = await timed(BIG * c, rounds, () => parallel(c, () => loopbackHttp(plainPort, agent, 'PUT', big)));
      largeRows('PUT', c, s3Put, layerPut, httpPut);
      const layerGet = await timed(BIG * c, rounds, () =>
        parallel(c, async (i) => {
          const r = await engine.getObject('bench', `layer/big-${i}`, {});
          if ((await drain(r.body)) !== BIG) throw new Error('short object-layer read');
        }),
      );
      const s3Get = await timed(BIG * c, rounds, () =>
        parallel(c, async (i) => {
          const r = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: `s3/big-${i}` }));
          if ((await drain(r.Body as Readable)) !== BIG) throw new Error('short S3 read');
        }),
      );
      const httpGet = await timed(BIG * c, rounds, () => parallel(c, () => loopbackHttp(plainPort, agent, 'GET', big)));
      largeRows('GET', c, s3Get, layerGet, httpGet);
    }

    for (const c of CONCURRENCY) {
      let n = 0;
      const layerPut = await measure(c, () => parallel(c, () => engine.putObject('bench', `layer/s-${n++ % 512}`, putDataFromBuffer(small), {})), { minMs: 1000 });
      let m = 0;
      const s3Put = await measure(c, () => parallel(c, () => s3.send(new PutObjectCommand({ Bucket: 'bench', Key: `s3/s-${m++ % 512}`, Body: small }))), { minMs: 1000 });
      ctx.row({ name: `S3 PUT 4 KiB, concurrency ${c}`, value: s3Put.perWallSecond, unit: 'ops/s', ceiling: { name: 'object layer', value: layerPut.perWallSecond } });
      let p = 0;
      const layerGet = await measure(
        c,
        () =>
          parallel(c, async () => {
            const r = await engine.getObject('bench', `layer/s-${p++ % Math.min(n, 512)}`, {});
            await drain(r.body);
          }),
        { minMs: 1000 },
      );
      let q = 0;
      const s3Get = await measure(
        c,
        () =>
          parallel(c, async () => {
            const r = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: `s3/s-${q++ % Math.min(m, 512)}` }));
            await drain(r.Body as Readable);
          }),
        { minMs: 1000 },
      );
      ctx.row({ name: `S3 GET 4 KiB, concurrency ${c}`, value: s3Get.perWallSecond, unit: 'ops/s', ceiling: { name: 'object layer', value: layerGet.perWallSecond } });
      ctx.row({ name: `S3 GET 4 KiB, concurrency ${c}, per CPU-s`, value: s3Get.perCpuSecond, unit: 'ops/cpu-s', ceiling: { name: 'object layer', value: layerGet.perCpuSecond } });
    }
    s3.destroy();
  } finally {
    agent.destroy();
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const d of drives) await d.flush();
    await layer?.close();
    await rm(base, { recursive: true, force: true });
  }
});

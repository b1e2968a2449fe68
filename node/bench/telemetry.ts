/**
 * Telemetry section: the 4 KiB S3 GET rate through the server's real request
 * path (dispatcher → S3 handler → object layer over 4 traced LocalDrives,
 * EC:2) with telemetry off and on, in one run. "On" is the default setup with
 * an endpoint: metrics, traces (default 1 % sampling) and logs exported over
 * OTLP/HTTP to a sink in this process. Rounds are paired (off and on back to
 * back, the order alternating) and the cost is the median of the pairs'
 * ratios, per CPU-second of this process (client, server and exporter share
 * it); the target is a cost of at most 5 %.
 *
 * The client is a keep-alive undici pool GETting one presigned URL, so the
 * client's share of the CPU is small and the server's cost shows.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Pool } from 'undici';
import { createS3Handler } from '../src/api/s3/index.ts';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ObjectLayer } from '../src/object/types.ts';
import { createDispatcher, type RequestHandler } from '../src/server/dispatcher.ts';
import { Readiness } from '../src/server/readiness.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { TracedDrive } from '../src/storage/traced-drive.ts';
import { startTelemetry, type Telemetry } from '../src/telemetry/telemetry.ts';
import { systemClock } from '../src/util/clock.ts';
import { loadConfig } from '../src/util/config.ts';
import { createLogger, silentLogger } from '../src/util/logger.ts';
import { httpRequestOperation } from '../src/util/diagnostics.ts';
import { measure, measureSync, section } from './harness.ts';

const CONCURRENCY = 16;
const ROUNDS = 6;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** An OTLP/HTTP endpoint that accepts and discards (a collector that keeps up). */
async function sink(): Promise<{ server: Server; url: string; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    n++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n };
}

section('telemetry: S3 GET 4 KiB with telemetry off and on (one run)', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-telemetry-'));
  const drives: LocalDrive[] = [];
  let layer: ObjectLayer | undefined;
  const server = createServer();
  const collector = await sink();
  let telemetry: Telemetry | undefined;
  let pool: Pool | undefined;
  try {
    for (let i = 0; i < 4; i++) {
      await mkdir(join(base, `d${i}`));
      const d = new LocalDrive(join(base, `d${i}`));
      await d.init();
      drives.push(d);
    }
    layer = await createObjectLayer({
      deploymentId: '33333333-4444-4555-8666-777777777777',
      pools: [{ cmdline: 'bench-telemetry', sets: [drives.map((d) => new TracedDrive(d))], standardParity: 2, rrsParity: 1 }],
      logger: silentLogger,
      clock: systemClock,
    });
    const creds = { accessKey: 'bench', secretKey: 'bench-secret' };
    const readiness = new Readiness({ lock: true, peers: true });
    readiness.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
    // The logger the server runs with (info level, nothing logged per successful GET), to /dev/null.
    const { config } = loadConfig({ args: ['/x'], env: { SVC_OBS_ENDPOINT: collector.url }, cwd: '/', readFile: () => '' });
    // The S3 handler is swapped between measurements (logger on and off) behind one handler.
    let s3Handler: RequestHandler | undefined;
    const dispatcher = createDispatcher({ health: readiness, healthEnabled: true, logger: silentLogger, handlers: { s3: (req, res) => s3Handler!(req, res) } });
    server.on('request', dispatcher.handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await layer.makeBucket('bench');
    await layer.putObject('bench', 'small', putDataFromBuffer(randomBytes(4096)), {});
    const s3 = new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
    });
    const url = new URL(await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'bench', Key: 'small' }), { expiresIn: 3600 }));
    s3.destroy();
    const path = `${url.pathname}${url.search}`;
    pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1 });
    const client = pool;
    const get = async () => {
      const r = await client.request({ method: 'GET', path });
      const body = await r.body.arrayBuffer();
      if (r.statusCode !== 200 || body.byteLength !== 4096) throw new Error(`GET answered ${r.statusCode} with ${body.byteLength} bytes`);
    };
    const batch = () => Promise.all(Array.from({ length: CONCURRENCY }, get));

    const setHandler = (log: typeof silentLogger) => {
      s3Handler = createS3Handler({ objectLayer: layer!, credentials: [creds], logger: log, clock: systemClock });
    };
    const off = { cpu: [] as number[], wall: [] as number[] };
    const on = { cpu: [] as number[], wall: [] as number[] };
    const ratios: number[] = [];
    const measureOff = async () => {
      setHandler(silentLogger);
      return measure(CONCURRENCY, batch, { minMs: 1000 });
    };
    const measureOn = async () => {
      telemetry = startTelemetry({ obs: config.obs, address: config.address, version: 'bench' });
      if (!telemetry) throw new Error('telemetry did not start');
      const t = telemetry;
      setHandler(createLogger('info', { write: () => true }, { mixin: t.logMixin, also: t.logStream ? [t.logStream] : [] }));
      const m = await measure(CONCURRENCY, batch, { minMs: 1000 });
      await telemetry.shutdown();
      telemetry = undefined;
      return m;
    };
    // Paired rounds, the order alternating: a drift of the machine's load hits both sides of a pair alike.
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0 ? await measureOff() : await measureOn();
      const second = round % 2 === 0 ? await measureOn() : await measureOff();
      const [a, b] = round % 2 === 0 ? [first, second] : [second, first];
      off.cpu.push(a.perCpuSecond);
      off.wall.push(a.perWallSecond);
      on.cpu.push(b.perCpuSecond);
      on.wall.push(b.perWallSecond);
      ratios.push(b.perCpuSecond / a.perCpuSecond);
    }
    const offCpu = median(off.cpu);
    const onCpu = median(on.cpu);
    // The request path's own share, measured without I/O (steadier than the GET rates on a busy
    // machine): the real dispatcher with a handler that names its operation and answers at once.
    const pathCost = await requestPathCost(config);
    ctx.info(`concurrency ${CONCURRENCY}, ${ROUNDS} paired rounds (order alternating), medians; "on" = metrics + traces (1 % sampled) + logs over OTLP/HTTP`);
    ctx.info(`OTLP requests received by the sink: ${collector.requests()}`);
    ctx.row({ name: 'S3 GET 4 KiB, telemetry off', value: median(off.wall), unit: 'ops/s' });
    ctx.row({ name: 'S3 GET 4 KiB, telemetry on', value: median(on.wall), unit: 'ops/s', ceiling: { name: 'off', value: median(off.wall) } });
    ctx.row({ name: 'S3 GET 4 KiB, telemetry off, per CPU-s', value: offCpu, unit: 'ops/cpu-s' });
    const cost = (1 - median(ratios)) * 100;
    ctx.row({
      name: 'S3 GET 4 KiB, telemetry on, per CPU-s',
      value: onCpu,
      unit: 'ops/cpu-s',
      ceiling: { name: 'off', value: offCpu },
      note: `cost ${cost.toFixed(1)} % (median of paired rounds; target <= 5 %)`,
    });
    ctx.row({ name: 'request path (dispatcher, no I/O), telemetry off', value: pathCost.off, unit: 'us/req' });
    ctx.row({ name: 'request path (dispatcher, no I/O), telemetry on', value: pathCost.on, unit: 'us/req' });
    const getUs = 1e6 / offCpu;
    ctx.row({
      name: 'telemetry on the request path, per 4 KiB GET',
      value: ((pathCost.on - pathCost.off) / getUs) * 100,
      unit: '% of CPU',
      note: `${(pathCost.on - pathCost.off).toFixed(2)} us of a ${getUs.toFixed(0)} us GET (target <= 5 %)`,
    });
  } finally {
    await telemetry?.shutdown();
    await pool?.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    collector.server.closeAllConnections();
    await new Promise<void>((r) => collector.server.close(() => r()));
    for (const d of drives) await d.flush();
    await layer?.close();
    await rm(base, { recursive: true, force: true });
  }
});

/** CPU per request through the real dispatcher (fake sockets, no I/O), telemetry off and on; medians of 3 pairs, µs. */
async function requestPathCost(config: ReturnType<typeof loadConfig>['config']): Promise<{ off: number; on: number }> {
  const readiness = new Readiness({ lock: true, peers: true });
  readiness.update({ storageRead: true, storageWrite: true, iam: true, finalized: true });
  const d = createDispatcher({
    health: readiness,
    healthEnabled: true,
    logger: silentLogger,
    handlers: {
      s3: (req, res) => {
        if (httpRequestOperation.hasSubscribers) httpRequestOperation.publish({ req, operation: 'GetObject' });
        res.statusCode = 200;
        res.emit('close');
      },
    },
  });
  const request = () => {
    const res = Object.assign(new EventEmitter(), { statusCode: 0, writableFinished: true }) as unknown as ServerResponse;
    const req = { url: '/bench/small', method: 'GET', headers: { host: 'bench' }, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
    d.handle(req, res);
  };
  const perRequest = () => 1e6 / measureSync(1, request, { minMs: 300 }).perCpuSecond;
  const off: number[] = [];
  const on: number[] = [];
  for (let i = 0; i < 3; i++) {
    off.push(perRequest());
    const t = startTelemetry({ obs: config.obs, address: config.address, version: 'bench' });
    on.push(perRequest());
    await t?.shutdown();
  }
  return { off: median(off), on: median(on) };
}

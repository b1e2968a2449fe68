/**
 * Starts the S3 API over the REAL engine in-process: LocalDrives on fresh
 * temp directories, `createObjectLayer`, `createS3Handler`, behind a
 * node:http server on 127.0.0.1, port 0. Small API so the integrator can
 * swap it for a spawned `svc` process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createS3Handler } from '../../src/api/s3/index.ts';
import type { Kms } from '../../src/crypto/kms.ts';
import type { ServerPools } from '../../src/object/index.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { buildEngine } from './engine.ts';

export interface S3ServerOptions {
  /** Drives in the one erasure set (default 4). */
  drives?: number;
  /** STANDARD parity (default drives/2 capped at 2); RRS parity default 1. */
  standardParity?: number;
  rrsParity?: number;
  clock?: Clock;
  accessKey?: string;
  secretKey?: string;
  /** Port of the web console whose origin may call the API cross-origin. */
  consolePort?: number;
  /** Region clients sign for (default us-east-1). */
  region?: string;
  /** Virtual-host domains (`<bucket>.<domain>`). */
  domains?: string[];
  /** The engine's own clock (object times, retention, lifecycle), apart from the one that checks signatures. */
  engineClock?: Clock;
  /** Key store for SSE-S3 / SSE-KMS. */
  kms?: Kms;
  /** Reuse this directory for the drives (a restart over the same data); it is then not removed on stop. */
  root?: string;
}

export interface S3Server {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  /** The engine behind the API, for assertions that bypass HTTP. */
  objectLayer: ServerPools;
  /** Directory holding the drives (`d0`, `d1`, …). */
  root: string;
  /** Stops the server; its drives are removed unless `keepData` (or they were given as `root`). */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

export async function start(opts: S3ServerOptions = {}): Promise<S3Server> {
  const accessKey = opts.accessKey ?? 'svcadmin';
  const secretKey = opts.secretKey ?? 'svcadmin-secret';
  const region = opts.region ?? 'us-east-1';
  const root = opts.root ?? (await mkdtemp(join(tmpdir(), 'svc-s3-')));
  const engine = await buildEngine(root, {
    drives: opts.drives ?? 4,
    standardParity: opts.standardParity ?? Math.min(2, Math.floor((opts.drives ?? 4) / 2)),
    rrsParity: opts.rrsParity ?? 1,
    ...(opts.engineClock ? { clock: opts.engineClock } : {}),
    ...(opts.kms ? { kms: opts.kms } : {}),
  });
  const handler = createS3Handler({
    objectLayer: engine,
    credentials: [{ accessKey, secretKey }],
    region,
    ...(opts.domains ? { domains: opts.domains } : {}),
    ...(opts.consolePort !== undefined ? { consolePort: opts.consolePort } : {}),
    logger: silentLogger,
    clock: opts.clock ?? systemClock,
  });
  const server: Server = createServer(handler);
  server.on('checkContinue', handler);
  server.on('checkExpectation', handler);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKey,
    secretKey,
    region,
    objectLayer: engine,
    root,
    async stop(o = {}) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      if (opts.root === undefined && !o.keepData) await rm(root, { recursive: true, force: true });
    },
  };
}

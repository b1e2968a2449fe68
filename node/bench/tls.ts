/**
 * TLS section: what serving https costs the server. Two real `svc server`
 * processes in the same run, identical but for TLS (4 drive folders each,
 * EC:2; the https one has an ECDSA P-256 certificate from a test CA, made
 * with `openssl`), driven in turn by the same client so a noisy neighbour
 * hits both alike:
 *
 *   PUT / GET 64 MiB ×N, 4 concurrent (@aws-sdk/client-s3, keep-alive):
 *     https per server CPU-second, as a share of http's
 *   GET /health on a new connection each time, 8 concurrent:
 *     plain TCP, https with a full handshake, https resuming a session
 *   server CPU per full handshake (https new connection − http new
 *     connection), beside its cryptographic floor measured in this process:
 *     one ECDSA P-256 signature and one X25519 key agreement
 *
 * and, for scale, AES-128-GCM alone (the TLS 1.3 record cipher node picks
 * first) per CPU-second.
 */
import { createCipheriv, createPrivateKey, diffieHellman, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { issueLeaf, makeCa } from '../test/helpers/certs.ts';
import { measureSync, section } from './harness.ts';
import { BIG, BIG_COUNT, drain, MB, MiB, type Run, run } from './lib/s3-workload.ts';
import { ServerProcess } from './lib/server-process.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const CONN_COUNT = Math.max(100, Math.round(400 * scale));
const CREDS = { accessKey: 'bench', secretKey: 'bench-secret-key' };

function client(server: ServerProcess): S3Client {
  const tls = server.ca !== undefined;
  return new S3Client({
    endpoint: `${tls ? 'https' : 'http'}://127.0.0.1:${server.port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: CREDS.accessKey, secretAccessKey: CREDS.secretKey },
    requestHandler: new NodeHttpHandler(
      tls ? { httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 64, ca: server.ca! }) } : { httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }) },
    ),
  });
}

/** GET /health on a connection made for it (the agent decides whether a TLS session is resumed). */
function healthOnce(server: ServerProcess, agent: HttpAgent | HttpsAgent): Promise<void> {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port: server.port, path: '/health', agent, headers: { connection: 'close' } };
    const onRes = (r: import('node:http').IncomingMessage) => {
      r.resume();
      r.on('end', () => (r.statusCode === 200 ? resolve() : reject(new Error(`health: HTTP ${r.statusCode}`))));
    };
    const req = server.ca === undefined ? httpRequest(opts, onRes) : httpsRequest({ ...opts, ca: server.ca }, onRes);
    req.on('error', reject);
    req.end();
  });
}

section('tls: svc over https vs http (two svc servers, same run)', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-tls-'));
  let plain: ServerProcess | undefined;
  let tls: ServerProcess | undefined;
  try {
    const ca = await makeCa(join(base, 'ca'), 'bench CA');
    const certs = join(base, 'certs');
    await issueLeaf(ca, certs, { ips: ['127.0.0.1'], dns: ['localhost'] });
    for (const s of ['plain', 'tls']) for (let i = 1; i <= 4; i++) await mkdir(join(base, s, `d${i}`), { recursive: true });
    plain = await ServerProcess.svc([join(base, 'plain', 'd{1...4}')], CREDS);
    tls = await ServerProcess.svc([join(base, 'tls', 'd{1...4}')], CREDS, { SVC_CERTS_DIR: certs }, { ca: ca.pem });
    const servers = { http: plain, https: tls };
    const clients = { http: client(plain), https: client(tls) };
    const big = randomBytes(BIG);
    for (const c of Object.values(clients)) await c.send(new CreateBucketCommand({ Bucket: 'bench' }));
    ctx.info(`servers: http pid ${plain.pid}, https pid ${tls.pid}; N = ${BIG_COUNT} large objects, ${CONN_COUNT} new connections`);

    const put = (k: keyof typeof clients, key: string) => clients[k].send(new PutObjectCommand({ Bucket: 'bench', Key: key, Body: big }));
    const get = async (k: keyof typeof clients, key: string) => {
      const r = await clients[k].send(new GetObjectCommand({ Bucket: 'bench', Key: key }));
      if ((await drain(r.Body)) !== BIG) throw new Error(`GET ${key}: short`);
    };
    for (const k of ['http', 'https'] as const) {
      await put(k, 'warm');
      await get(k, 'warm');
    }
    // alternate: http, https, for each workload
    const putRuns = { http: await run(plain, BIG_COUNT, 4, (i) => put('http', `big/${i}`)), https: await run(tls, BIG_COUNT, 4, (i) => put('https', `big/${i}`)) };
    const getRuns = { http: await run(plain, BIG_COUNT, 4, (i) => get('http', `big/${i}`)), https: await run(tls, BIG_COUNT, 4, (i) => get('https', `big/${i}`)) };
    for (const c of Object.values(clients)) c.destroy();
    const mbCpu = (r: Run) => (BIG_COUNT * BIG) / MB / r.cpu;
    const mbWall = (r: Run) => (BIG_COUNT * BIG) / MB / r.wall;
    ctx.row({ name: 'PUT 64 MiB over https, per server CPU-s', value: mbCpu(putRuns.https), unit: 'MB/cpu-s', ceiling: { name: 'same over http', value: mbCpu(putRuns.http) } });
    ctx.row({ name: 'PUT 64 MiB over https ×N, 4 concurrent', value: mbWall(putRuns.https), unit: 'MB/s', ceiling: { name: 'same over http', value: mbWall(putRuns.http) } });
    ctx.row({ name: 'GET 64 MiB over https, per server CPU-s', value: mbCpu(getRuns.https), unit: 'MB/cpu-s', ceiling: { name: 'same over http', value: mbCpu(getRuns.http) } });
    ctx.row({ name: 'GET 64 MiB over https ×N, 4 concurrent', value: mbWall(getRuns.https), unit: 'MB/s', ceiling: { name: 'same over http', value: mbWall(getRuns.http) } });

    // New connections: plain TCP, full TLS handshakes (no session cache), resumed sessions.
    const fresh = new HttpAgent({ keepAlive: false });
    const full = new HttpsAgent({ keepAlive: false, maxCachedSessions: 0 });
    const resumed = new HttpsAgent({ keepAlive: false, maxCachedSessions: 100 });
    for (let i = 0; i < 20; i++) {
      await healthOnce(servers.http, fresh);
      await healthOnce(servers.https, full);
      await healthOnce(servers.https, resumed);
    }
    const conn = {
      http: await run(plain, CONN_COUNT, 8, () => healthOnce(servers.http, fresh)),
      full: await run(tls, CONN_COUNT, 8, () => healthOnce(servers.https, full)),
      resumed: await run(tls, CONN_COUNT, 8, () => healthOnce(servers.https, resumed)),
    };
    const opsCpu = (r: Run) => CONN_COUNT / r.cpu;
    ctx.row({ name: 'GET /health, new TLS connection each (full handshake), per server CPU-s', value: opsCpu(conn.full), unit: 'ops/cpu-s', ceiling: { name: 'new TCP connection each', value: opsCpu(conn.http) } });
    ctx.row({ name: 'GET /health, new TLS connection each (resumed session), per server CPU-s', value: opsCpu(conn.resumed), unit: 'ops/cpu-s', ceiling: { name: 'new TCP connection each', value: opsCpu(conn.http) } });

    // The floor of a full handshake's server work: one ECDSA P-256 signature and one X25519 agreement.
    const key = createPrivateKey(await readFile(join(certs, 'private.key'), 'utf8'));
    const peer = generateKeyPairSync('x25519');
    const transcript = randomBytes(32);
    const floor = measureSync(1, () => {
      sign('sha256', transcript, key);
      const mine = generateKeyPairSync('x25519');
      diffieHellman({ privateKey: mine.privateKey, publicKey: peer.publicKey });
    });
    const perHandshakeMs = Math.max(((conn.full.cpu - conn.http.cpu) / CONN_COUNT) * 1000, 0);
    ctx.row({ name: 'server CPU per full TLS handshake', value: perHandshakeMs, unit: 'ms', ceiling: { name: 'ECDSA P-256 sign + X25519 in-process', value: 1000 / floor.perCpuSecond } });

    // For scale: the record cipher alone.
    const gcmKey = randomBytes(16);
    const block = randomBytes(MiB);
    const aes = measureSync(MiB, () => {
      const c = createCipheriv('aes-128-gcm', gcmKey, randomBytes(12));
      c.update(block);
      c.final();
      c.getAuthTag();
    });
    ctx.row({ name: 'AES-128-GCM alone (node:crypto), per CPU-s', value: aes.perCpuSecond / MB, unit: 'MB/cpu-s' });
  } finally {
    await plain?.stop();
    await tls?.stop();
    await rm(base, { recursive: true, force: true });
  }
});

/**
 * Graceful shutdown of a real `svc` process (docs/architecture.md
 * "Shutdown"): on SIGTERM the node turns not ready, its listeners refuse new
 * connections, a large streamed PUT and a slowly read GET in flight finish
 * (their audit records are kept and delivered), and it exits 0; background
 * jobs and the object layer stop only after the drain. Past
 * `SVC_SHUTDOWN_TIMEOUT` the requests left are cut and nothing of them is
 * visible after a restart.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startNotifyServer, startWebhookReceiver, until, type WebhookReceiver } from './helpers/notify.ts';
import { signedRequest } from './helpers/sigv4-signer.ts';
import { freePort, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const MiB = 1024 * 1024;

function client(endpoint: string): S3Client {
  return new S3Client({
    requestHandler: keepAliveHandler(),
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey },
  });
}

/** Deterministic bytes: block i is filled with (seed + i) & 0xff. */
function block(seed: number, i: number): Buffer {
  return Buffer.alloc(MiB, (seed + i) & 0xff);
}

function digest(seed: number, blocks: number): string {
  const h = createHash('sha256');
  for (let i = 0; i < blocks; i++) h.update(block(seed, i));
  return h.digest('hex');
}

/** A body of `blocks` MiB produced one MiB per `everyMs`; `sent()` counts the blocks handed out, `hold` stops it after that many until released. */
function slowBody(seed: number, blocks: number, everyMs: number, hold?: { after: number; until: Promise<void> }): { body: Readable; sent: () => number } {
  let n = 0;
  const body = new Readable({
    highWaterMark: MiB,
    read() {
      if (n === blocks) {
        this.push(null);
        return;
      }
      const wait = hold !== undefined && n === hold.after ? hold.until : new Promise((r) => setTimeout(r, everyMs));
      void wait.then(() => {
        this.push(block(seed, n));
        n++;
      });
    },
  });
  return { body, sent: () => n };
}

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch (err) {
    return (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
  }
}

const eventsOf = (srv: SvcRun) => srv.logs().map((l) => l['event']);

describe('SIGTERM with requests in flight', () => {
  let work: string;
  let audit: WebhookReceiver;
  let port: number;
  let env: Record<string, string>;

  beforeAll(async () => {
    work = tempDir('shutdown');
    audit = await startWebhookReceiver();
    port = await freePort();
    env = {
      SVC_AUDIT_WEBHOOK_ENABLE_audit: 'on',
      SVC_AUDIT_WEBHOOK_ENDPOINT_audit: audit.url,
      SVC_SHUTDOWN_TIMEOUT: '60s',
    };
  });
  afterAll(async () => {
    await audit?.close();
  });

  it('drains: the streamed PUT and the GET complete, new connections are refused, audit records survive, exit 0', async () => {
    const { srv, endpoint } = await startNotifyServer(work, env, port);
    try {
      const s3 = client(endpoint);
      await s3.send(new CreateBucketCommand({ Bucket: 'drain' }));
      const GET_BLOCKS = 24;
      await s3.send(new PutObjectCommand({ Bucket: 'drain', Key: 'read-me', Body: Readable.from((function* () { for (let i = 0; i < GET_BLOCKS; i++) yield block(7, i); })()), ContentLength: GET_BLOCKS * MiB }));

      // A 40 MiB PUT streamed over ~6 s (longer than the old fixed 5 s grace), and a GET read
      // slowly (the server waits on the client).
      const PUT_BLOCKS = 40;
      const put = slowBody(3, PUT_BLOCKS, 150);
      const putDone = s3.send(new PutObjectCommand({ Bucket: 'drain', Key: 'big-put', Body: put.body, ContentLength: PUT_BLOCKS * MiB }));
      const get = await s3.send(new GetObjectCommand({ Bucket: 'drain', Key: 'read-me' }));
      const getDone = (async () => {
        const h = createHash('sha256');
        let bytes = 0;
        for await (const chunk of get.Body as Readable) {
          h.update(chunk as Buffer);
          bytes += (chunk as Buffer).length;
          await new Promise((r) => setTimeout(r, 10));
        }
        return { bytes, sha: h.digest('hex') };
      })();
      await until('the PUT to be in flight', () => (put.sent() >= 4 ? true : undefined), 20_000);
      // A live notification listener (`mc watch`) never finishes on its own: the stop ends it rather than wait for the deadline.
      const listen = signedRequest(endpoint, ROOT, { method: 'GET', path: '/drain', query: { events: 's3:ObjectCreated:*' }, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
      await new Promise((r) => setTimeout(r, 300));

      srv.child.kill('SIGTERM');
      await until('shutdown to begin', () => (eventsOf(srv).includes('shutdown_begin') ? true : undefined), 10_000);
      // New connections are refused while the two requests are still running.
      expect(await refused(srv.port)).toBe(true);
      expect(put.sent()).toBeLessThan(PUT_BLOCKS);
      const notReady = srv.logs().find((l) => l['event'] === 'readiness_changed' && l['ready'] === false && l['wasReady'] === true);
      // a stop asked for is no fault: said at info, not as a lost readiness warning
      expect(notReady).toMatchObject({ level: 'info', shutdown: true });

      const listened = await listen;
      expect(listened.status, listened.body).toBe(200);
      const putOut = await putDone;
      expect(putOut.ETag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(await getDone).toEqual({ bytes: GET_BLOCKS * MiB, sha: digest(7, GET_BLOCKS) });
      expect(await srv.exited).toBe(0);
    } finally {
      await srv.stop();
    }

    // After a restart: the PUT is there with its bytes, and its audit record reached the webhook
    // (delivered before the exit, or from the audit queue once the node is back).
    const again = await startNotifyServer(work, env, port);
    try {
      const s3 = client(again.endpoint);
      const back = await s3.send(new GetObjectCommand({ Bucket: 'drain', Key: 'big-put' }));
      const h = createHash('sha256');
      for await (const chunk of back.Body as Readable) h.update(chunk as Buffer);
      expect(h.digest('hex')).toBe(digest(3, 40));
      const records = () => audit.bodies.map((b) => (b as unknown as { api: { name: string; object?: string; status: string; statusCode: number } }).api);
      await until('the audit records of the drained PUT and GET', () => {
        const r = records();
        const p = r.find((a) => a.name === 'PutObject' && a.object === 'big-put');
        const g = r.find((a) => a.name === 'GetObject' && a.object === 'read-me');
        return p && g ? { p, g } : undefined;
      }, 30_000).then(({ p, g }) => {
        expect(p).toMatchObject({ status: 'OK', statusCode: 200 });
        expect(g).toMatchObject({ status: 'OK', statusCode: 200 });
      });
    } finally {
      await again.srv.stop();
    }
    const events = eventsOf(srv);
    expect(events).toContain('shutdown_drained');
    expect(events).not.toContain('shutdown_drain_deadline');
    // Not ready before the listeners closed; the layer and the jobs after the drain.
    expect(events.indexOf('readiness_changed', events.indexOf('shutdown_signal'))).toBeLessThan(events.indexOf('shutdown_drained'));
    expect(events.indexOf('shutdown_drained')).toBeLessThan(events.indexOf('shutdown_complete'));
    // "shut down" is the last word: every background job stopped before it (it used to be logged
    // before the node's own jobs, the lock sweep and the audit flush among them, were stopped).
    expect(events.lastIndexOf('worker_ended')).toBeGreaterThan(-1);
    expect(events.lastIndexOf('worker_ended')).toBeLessThan(events.indexOf('shutdown_complete'));
    expect(events.filter((e) => e === 'shutdown_complete')).toHaveLength(1);
  }, 180_000);

  it('past SVC_SHUTDOWN_TIMEOUT the PUT left is cut cleanly: exit 0, nothing of it visible after a restart', async () => {
    const cutEnv = { ...env, SVC_SHUTDOWN_TIMEOUT: '1s' };
    const { srv, endpoint } = await startNotifyServer(work, cutEnv, port);
    const release = Promise.withResolvers<void>();
    try {
      const s3 = client(endpoint);
      await s3.send(new CreateBucketCommand({ Bucket: 'cut' }));
      // 16 MiB declared, 6 sent, then the client stalls.
      const put = slowBody(5, 16, 10, { after: 6, until: release.promise });
      const putDone = s3.send(new PutObjectCommand({ Bucket: 'cut', Key: 'half', Body: put.body, ContentLength: 16 * MiB })).then(
        () => 'stored',
        (err: unknown) => `failed: ${String(err)}`,
      );
      await until('the PUT to stall', () => (put.sent() >= 6 ? true : undefined), 20_000);
      const t0 = Date.now();
      srv.child.kill('SIGTERM');
      expect(await srv.exited).toBe(0);
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(await putDone).toMatch(/^failed/);
    } finally {
      release.resolve();
      await srv.stop();
    }
    const again = await startNotifyServer(work, cutEnv, port);
    try {
      const s3 = client(again.endpoint);
      await expect(s3.send(new HeadObjectCommand({ Bucket: 'cut', Key: 'half' }))).rejects.toMatchObject({ name: 'NotFound' });
      expect((await s3.send(new ListObjectsV2Command({ Bucket: 'cut' }))).KeyCount).toBe(0);
    } finally {
      await again.srv.stop();
    }
    expect(eventsOf(srv)).toContain('shutdown_drain_deadline');
  }, 120_000);
});


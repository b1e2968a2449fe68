/**
 * Notifications section: what bucket events cost small PUTs. One real
 * `svc server` (4 drive folders, EC:2) with a webhook target (a node:http
 * receiver in this process answering 200), two buckets on it: one whose
 * configuration sends every created object to the webhook, one without a
 * configuration. The same 4 KiB PUTs, 16 concurrent, go to each in turn
 * (two rounds each, alternating, the better round kept) so a noisy
 * neighbour hits both alike: the ratio is the throughput kept with a
 * target configured (the queue entry is written and fsync'd before the
 * answer; delivery runs beside the writes). Every event must reach the
 * receiver, or the section fails.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, PutBucketNotificationConfigurationCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { section } from './harness.ts';
import { type Run, run, s3Client, SMALL, SMALL_COUNT } from './lib/s3-workload.ts';
import { ServerProcess } from './lib/server-process.ts';

const CREDS = { accessKey: 'bench', secretKey: 'bench-secret-key' };

section('notify: 4 KiB PUTs with a webhook target vs none, same server, same run', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-notify-'));
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let svc: ServerProcess | undefined;
  try {
    for (let i = 1; i <= 4; i++) await mkdir(join(base, `d${i}`));
    svc = await ServerProcess.svc([join(base, 'd{1...4}')], CREDS, { SVC_NOTIFY_WEBHOOK_ENABLE_bench: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_bench: url });
    const s3 = s3Client(`http://127.0.0.1:${svc.port}`, CREDS, agent);
    await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'events' }));
    await s3.send(
      new PutBucketNotificationConfigurationCommand({ Bucket: 'events', NotificationConfiguration: { QueueConfigurations: [{ Id: 'all', QueueArn: 'arn:svc:sqs::bench:webhook', Events: ['s3:ObjectCreated:*'] }] } }),
    );
    const body = randomBytes(SMALL);
    const put = (bucket: string, key: string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    for (let i = 0; i < 32; i++) {
      await put('plain', `warm-${i}`);
      await put('events', `warm-${i}`);
    }
    const best = (a: Run | undefined, b: Run) => (a === undefined || b.wall < a.wall ? b : a);
    let plain: Run | undefined;
    let events: Run | undefined;
    for (let round = 0; round < 2; round++) {
      plain = best(plain, await run(svc, SMALL_COUNT, 16, (i) => put('plain', `r${round}/${i}`)));
      events = best(events, await run(svc, SMALL_COUNT, 16, (i) => put('events', `r${round}/${i}`)));
    }
    const expected = 32 + 2 * SMALL_COUNT;
    const t0 = performance.now();
    while (received < expected) {
      if (performance.now() - t0 > 120_000) throw new Error(`the webhook received ${received} of ${expected} events`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const drainedMs = performance.now() - t0;
    ctx.info(`server pid ${svc.pid}; N = ${SMALL_COUNT} PUTs per round; all ${expected} events delivered, the last ${drainedMs.toFixed(0)} ms after the last PUT`);
    ctx.row({ name: 'PUT 4 KiB ×N, 16 concurrent, webhook target', value: SMALL_COUNT / events!.wall, unit: 'ops/s', ceiling: { name: 'same PUTs, no notification configured', value: SMALL_COUNT / plain!.wall } });
    ctx.row({ name: 'PUT 4 KiB, webhook target, per server CPU-s', value: SMALL_COUNT / events!.cpu, unit: 'ops/cpu-s', ceiling: { name: 'no notification configured', value: SMALL_COUNT / plain!.cpu } });
    s3.destroy();
  } finally {
    agent.destroy();
    await svc?.stop();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await rm(base, { recursive: true, force: true });
  }
});

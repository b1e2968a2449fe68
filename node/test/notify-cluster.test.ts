/**
 * Delivery guarantees on a 4-node cluster of real `svc` processes: the
 * webhook receiver is stopped for a minute while 1 000 objects are written
 * through all four nodes, and one node is killed (SIGKILL) in the middle
 * of the stream and started again later. Once the receiver is back, every
 * version the bucket holds has arrived exactly once — none missing, none
 * twice, none for a write that did not happen — whichever node took the
 * write, the killed node's queue included (its events wait on its disk and
 * are delivered, after settling the ones a crash left mid-commit).
 */
import { CreateBucketCommand, ListObjectVersionsCommand, PutBucketNotificationConfigurationCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { startWebhookReceiver, until, type WebhookReceiver } from './helpers/notify.ts';

const supported = canUseMountNamespaces();
const OBJECTS = 1000;
const OUTAGE_MS = 60_000;

describe.skipIf(!supported)('bucket events on a 4-node cluster: target down for a minute, a node killed mid-stream', () => {
  let cluster: TestCluster;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await TestCluster.create({
      nodes: 4,
      drivesPerNode: 2,
      env: { SVC_NOTIFY_WEBHOOK_ENABLE_c: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_c: receiver.url },
    });
    await Promise.all([1, 2, 3, 4].map((k) => cluster.start(k)));
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 60_000)));
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
    await receiver?.close().catch(() => undefined);
  });

  it('delivers one event per version once the target is back', async () => {
    const s3 = cluster.s3(1);
    await s3.send(new CreateBucketCommand({ Bucket: 'stream' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'stream', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'stream', NotificationConfiguration: { QueueConfigurations: [{ Id: 'all', QueueArn: 'arn:svc:sqs::c:webhook', Events: ['s3:ObjectCreated:*'] }] } }));
    // A bucket configuration reaches every node through its record (peers drop their cached copy).
    await receiver.close();
    const stoppedAt = Date.now();

    const acked = new Map<string, string>();
    let next = 0;
    let killed = false;
    const alive = () => [1, 2, 3, 4].filter((k) => cluster.isRunning(k));
    const writer = async (w: number) => {
      for (;;) {
        const i = next++;
        if (i >= OBJECTS) return;
        if (i === 400 && !killed) {
          killed = true;
          await cluster.stop(3, 'SIGKILL');
        }
        const key = `obj-${String(i).padStart(4, '0')}`;
        // Round robin over the nodes; a write refused or cut by the kill is sent again to another node.
        for (let attempt = 0; ; attempt++) {
          const nodes = alive();
          const k = nodes[(i + w + attempt) % nodes.length]!;
          try {
            const r = await cluster.s3(k).send(new PutObjectCommand({ Bucket: 'stream', Key: key, Body: `body of ${key}` }));
            acked.set(key, r.VersionId!);
            break;
          } catch (err) {
            if (attempt > 20) throw err;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    expect(acked.size).toBe(OBJECTS);
    expect(receiver.bodies.length).toBe(0);

    // The killed node comes back while the target is still down.
    await cluster.start(3);
    await cluster.waitReady(3, 60_000);
    const wait = OUTAGE_MS - (Date.now() - stoppedAt);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await receiver.reopen();

    // Every version the bucket holds (the acknowledged ones, and any whose answer the kill cut off).
    const versions = new Set<string>();
    let marker: { KeyMarker?: string; VersionIdMarker?: string } = {};
    for (;;) {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket: 'stream', ...marker }));
      for (const v of page.Versions ?? []) versions.add(`${v.Key} ${v.VersionId}`);
      if (!page.IsTruncated) break;
      marker = { KeyMarker: page.NextKeyMarker!, VersionIdMarker: page.NextVersionIdMarker! };
    }
    for (const [k, v] of acked) expect(versions.has(`${k} ${v}`)).toBe(true);

    const seen = () => receiver.bodies.map((b) => {
      const o = (b.Records[0]!.s3 as { object: { key: string; versionId: string } }).object;
      return `${o.key} ${o.versionId}`;
    });
    await until(`${versions.size} events (got ${receiver.bodies.length})`, () => (receiver.bodies.length >= versions.size ? true : undefined), 180_000, 250);
    // Let stragglers (a duplicate) arrive before counting.
    await new Promise((r) => setTimeout(r, 2000));
    const got = seen();
    const counts = new Map<string, number>();
    for (const g of got) counts.set(g, (counts.get(g) ?? 0) + 1);
    expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
    expect(new Set(got)).toEqual(versions);
  }, 600_000);
});

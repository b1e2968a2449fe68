/**
 * Bucket notifications to a webhook, end to end on a real `svc` process:
 * the AWS SDK and the AWS CLI round-trip the configuration, an unknown
 * target is refused with S3's code, each write makes exactly the AWS record
 * it should (PUT, multipart complete, copy, delete, delete marker) filtered
 * by prefix and suffix, with the auth token; while the receiver is down the
 * events wait in the target's queue, across a restart of the node, and all
 * arrive once it is back, each once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCliHome, runCli } from './helpers/cli.ts';
import { expectRecords, ROOT, runStandardWorkload, s3Client, standardConfig, startNotifyServer, startWebhookReceiver, until, type WebhookReceiver } from './helpers/notify.ts';
import { spawn } from 'node:child_process';
import { freePort, NODE, REPO, runSvcCommand, SVC, type SvcRun, tempDir } from './svc-process.ts';

const ARN = 'arn:svc:sqs::hook1:webhook';
let work: string;
let receiver: WebhookReceiver;
let auditReceiver: WebhookReceiver;
let srv: SvcRun;
let endpoint: string;
let port: number;
let env: Record<string, string>;

beforeAll(async () => {
  work = tempDir('notify-webhook');
  receiver = await startWebhookReceiver();
  auditReceiver = await startWebhookReceiver();
  port = await freePort();
  env = {
    SVC_NOTIFY_WEBHOOK_ENABLE_hook1: 'on',
    SVC_NOTIFY_WEBHOOK_ENDPOINT_hook1: receiver.url,
    SVC_NOTIFY_WEBHOOK_AUTH_TOKEN_hook1: 'sekrit',
    SVC_NOTIFY_WEBHOOK_QUEUE_DIR_hook1: join(work, 'queue-hook1'),
    SVC_AUDIT_WEBHOOK_ENABLE_audit: 'on',
    SVC_AUDIT_WEBHOOK_ENDPOINT_audit: auditReceiver.url,
    SVC_AUDIT_WEBHOOK_AUTH_TOKEN_audit: 'audit-token',
  };
  ({ srv, endpoint } = await startNotifyServer(work, env, port));
  await prepareCliHome(work);
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  await receiver?.close();
  await auditReceiver?.close();
});

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    if (err instanceof S3ServiceException) return `${err.name}: ${err.message}`;
    throw err;
  }
}

describe('webhook target', () => {
  it('round-trips the configuration with the AWS SDK and refuses an unknown target with InvalidArgument', async () => {
    const s3 = s3Client(endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: 'cfg' }));
    expect((await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: 'cfg' }))).QueueConfigurations).toBeUndefined();
    expect(
      await code(
        s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'cfg', NotificationConfiguration: { QueueConfigurations: [{ QueueArn: 'arn:svc:sqs::nope:webhook', Events: ['s3:ObjectCreated:*'] }] } })),
      ),
    ).toMatch(/^InvalidArgument: Unable to validate the following destination configurations/);
    expect(await code(s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'cfg', NotificationConfiguration: { QueueConfigurations: [{ QueueArn: ARN, Events: ['s3:Bogus:*' as never] }] } })))).toMatch(
      /^InvalidArgument: A specified event is not supported/,
    );
    const overlapping = {
      QueueConfigurations: [
        { Id: 'a', QueueArn: ARN, Events: ['s3:ObjectCreated:*'] },
        { Id: 'b', QueueArn: ARN, Events: ['s3:ObjectCreated:Put'], Filter: { Key: { FilterRules: [{ Name: 'prefix' as const, Value: 'x/' }] } } },
      ],
    };
    expect(await code(s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'cfg', NotificationConfiguration: overlapping as never })))).toMatch(/^InvalidArgument: Configurations overlap/);
    // nothing was stored by the refused documents
    expect((await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: 'cfg' }))).QueueConfigurations).toBeUndefined();
    const cfg = standardConfig(ARN);
    await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'cfg', NotificationConfiguration: cfg as never }));
    const got = await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: 'cfg' }));
    expect(got.QueueConfigurations).toEqual(cfg.QueueConfigurations);
    expect(await code(s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: 'no-such-bucket' })))).toMatch(/^NoSuchBucket/);
  });

  it('round-trips the configuration with the AWS CLI', async () => {
    const cli = { work, target: { endpoint, accessKey: ROOT.accessKey, secretKey: ROOT.secretKey } };
    await runCli(cli, 'aws', ['s3api', 'create-bucket', '--bucket', 'clicfg']);
    const doc = {
      TopicConfigurations: [{ Id: 'topic', TopicArn: ARN, Events: ['s3:ObjectRemoved:Delete'] }],
      QueueConfigurations: [{ Id: 'q', QueueArn: ARN, Events: ['s3:ObjectCreated:Put'], Filter: { Key: { FilterRules: [{ Name: 'suffix', Value: '.txt' }] } } }],
    };
    writeFileSync(join(work, 'n.json'), JSON.stringify(doc));
    await runCli(cli, 'aws', ['s3api', 'put-bucket-notification-configuration', '--bucket', 'clicfg', '--notification-configuration', `file://${join(work, 'n.json')}`]);
    const back = JSON.parse(await runCli(cli, 'aws', ['s3api', 'get-bucket-notification-configuration', '--bucket', 'clicfg'])) as typeof doc;
    expect(back).toEqual(doc);
    writeFileSync(join(work, 'bad.json'), JSON.stringify({ QueueConfigurations: [{ QueueArn: 'arn:svc:sqs::missing:redis', Events: ['s3:ObjectCreated:*'] }] }));
    await expect(runCli(cli, 'aws', ['s3api', 'put-bucket-notification-configuration', '--bucket', 'clicfg', '--notification-configuration', `file://${join(work, 'bad.json')}`])).rejects.toThrow(
      /InvalidArgument/,
    );
    // an empty configuration removes it
    writeFileSync(join(work, 'empty.json'), '{}');
    await runCli(cli, 'aws', ['s3api', 'put-bucket-notification-configuration', '--bucket', 'clicfg', '--notification-configuration', `file://${join(work, 'empty.json')}`]);
    expect(JSON.parse((await runCli(cli, 'aws', ['s3api', 'get-bucket-notification-configuration', '--bucket', 'clicfg'])) || '{}')).toEqual({});
  });

  it('delivers the exact AWS record for PUT, multipart complete, copy, delete and delete-marker creation, filtered by prefix and suffix', async () => {
    const s3 = s3Client(endpoint);
    const before = receiver.bodies.length;
    const want = await runStandardWorkload(s3, 'events', ARN);
    const bodies = await until('every event at the webhook', () => (receiver.bodies.length - before >= want.length ? receiver.bodies.slice(before) : undefined));
    // nothing more comes (the filtered writes made no event)
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.bodies.length - before).toBe(want.length);
    expectRecords(
      bodies.map((b) => b.Records[0]!),
      want,
    );
    // MinIO's webhook body: EventName and Key beside the records, the token as a bearer
    expect(bodies.map((b) => b.EventName)).toEqual(want.map((w) => `s3:${w.name}`));
    expect(bodies[0]!.Key).toBe('events/img/a b+é.jpg');
    expect(receiver.auth.slice(-1)).toEqual(['Bearer sekrit']);
  });

  it('streams events to a ListenBucketNotification client, filtered by its events and prefix', async () => {
    const s3 = s3Client(endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: 'listen' }));
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Sha256 } = await import('./helpers/sigv4-signer.ts');
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey }, sha256: Sha256 });
    const url = new URL(`${endpoint}/listen`);
    const query = { events: ['s3:ObjectCreated:*'], prefix: 'in/' };
    const signed = await signer.sign({ method: 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/listen', query, headers: { host: url.host } });
    const ac = new AbortController();
    const res = await fetch(`${endpoint}/listen?events=${encodeURIComponent('s3:ObjectCreated:*')}&prefix=in%2F`, { headers: signed.headers, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const lines = async (n: number) =>
      until(`${n} listened events`, async () => {
        const { value } = await reader.read();
        text += Buffer.from(value ?? new Uint8Array()).toString();
        const l = text.split('\n').filter((x) => x.trim().startsWith('{'));
        return l.length >= n ? l : undefined;
      });
    await s3.send(new PutObjectCommand({ Bucket: 'listen', Key: 'out/skip', Body: 'x' }));
    await s3.send(new PutObjectCommand({ Bucket: 'listen', Key: 'in/one', Body: 'x' }));
    const got = await lines(1);
    ac.abort();
    const rec = (JSON.parse(got[0]!) as { Records: Record<string, unknown>[] }).Records[0]!;
    expect(rec.eventName).toBe('ObjectCreated:Put');
    expect((rec.s3 as { object: { key: string } }).object.key).toBe('in/one');
  });

  it('adds and removes a target through the admin API without a restart; svc admin notify list and svc admin info show its status', async () => {
    const second = await startWebhookReceiver();
    const env = { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') };
    try {
      const bad = await runSvcCommand(['admin', 'notify', 'set', 'webhook', 'live', 'endpoint=ftp://nope'], env);
      expect(bad.code).not.toBe(0);
      expect(bad.out + bad.err).toMatch(/XSvcNotifyTargetInvalid|http/);
      const set = await runSvcCommand(['admin', 'notify', 'set', 'webhook', 'live', `endpoint=${second.url}`, 'auth_token=Basic abc'], env);
      expect(set.code, set.out + set.err).toBe(0);
      const list = await runSvcCommand(['admin', 'notify', 'list', '--json'], env);
      const targets = JSON.parse(list.out) as { arn: string; source: string; online: boolean; queued: number }[];
      expect(targets.map((t) => [t.arn, t.source]).sort()).toEqual([
        ['arn:svc:sqs::hook1:webhook', 'env'],
        ['arn:svc:sqs::live:webhook', 'admin'],
      ]);
      expect(targets.find((t) => t.arn.includes('live'))!.online).toBe(true);
      const s3 = s3Client(endpoint);
      await s3.send(new CreateBucketCommand({ Bucket: 'live' }));
      await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'live', NotificationConfiguration: { QueueConfigurations: [{ Id: 'x', QueueArn: 'arn:svc:sqs::live:webhook', Events: ['s3:ObjectCreated:Put'] }] } }));
      await s3.send(new PutObjectCommand({ Bucket: 'live', Key: 'k', Body: 'v' }));
      await until('the event at the target set through the admin API', () => (second.bodies.length === 1 ? true : undefined));
      expect(second.auth).toEqual(['Basic abc']);
      // The console's overview lists the targets too.
      const { ConsoleClient } = await import('./helpers/console.ts');
      const con = new ConsoleClient(`http://127.0.0.1:${srv.consolePort}/svc/console/`);
      expect((await con.signIn(ROOT.accessKey, ROOT.secretKey)).status).toBe(200);
      const overview = (await con.call('GET', 'api/overview')).json<{ notifications?: { arn: string; online: boolean; delivered: number }[] }>();
      expect(overview.notifications?.map((t) => t.arn).sort()).toEqual(['arn:svc:sqs::hook1:webhook', 'arn:svc:sqs::live:webhook']);
      expect(overview.notifications?.find((t) => t.arn.includes('live'))).toMatchObject({ online: true, delivered: 1 });
      const info = await runSvcCommand(['admin', 'info'], env);
      expect(info.code).toBe(0);
      expect(info.out).toMatch(/Notification targets \(this node\):/);
      expect(info.out).toMatch(/arn:svc:sqs::live:webhook {2}online {2}queued 0\/100000 {2}delivered 1/);
      // an environment target cannot be changed through the API
      const envChange = await runSvcCommand(['admin', 'notify', 'remove', 'webhook', 'hook1'], env);
      expect(envChange.code).not.toBe(0);
      const removed = await runSvcCommand(['admin', 'notify', 'remove', 'webhook', 'live'], env);
      expect(removed.code, removed.out + removed.err).toBe(0);
      expect((JSON.parse((await runSvcCommand(['admin', 'notify', 'list', '--json'], env)).out) as { arn: string }[]).map((t) => t.arn)).toEqual(['arn:svc:sqs::hook1:webhook']);
      expect(await code(s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'live', NotificationConfiguration: { QueueConfigurations: [{ QueueArn: 'arn:svc:sqs::live:webhook', Events: ['s3:ObjectCreated:*'] }] } })))).toMatch(
        /^InvalidArgument/,
      );
    } finally {
      await second.close();
    }
  });

  it('svc watch prints the events of a bucket as they happen', async () => {
    const s3 = s3Client(endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: 'watched' }));
    const child = spawn(NODE, [SVC, 'watch', 'watched', '--prefix', 'logs/', '--json'], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      // The stream is open once a write shows up; keep writing until one does.
      let i = 0;
      await until(`svc watch to print an event (${err})`, async () => {
        await s3.send(new PutObjectCommand({ Bucket: 'watched', Key: `other/${i}`, Body: 'x' }));
        await s3.send(new PutObjectCommand({ Bucket: 'watched', Key: `logs/${i++}.txt`, Body: 'x' }));
        return out.includes('\n') ? true : undefined;
      }, 30_000, 200);
      const rec = JSON.parse(out.split('\n')[0]!) as { eventName: string; s3: { object: { key: string } } };
      expect(rec.eventName).toBe('ObjectCreated:Put');
      expect(rec.s3.object.key).toMatch(/^logs\/\d+\.txt$/);
      expect(out).not.toMatch(/other\//);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('sends an audit record of every S3 and admin request to the audit webhook: identity, outcome, latency', async () => {
    const s3 = s3Client(endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: 'audited' }));
    const put = await s3.send(new PutObjectCommand({ Bucket: 'audited', Key: 'dir/a.txt', Body: 'audit me' }));
    const putId = put.$metadata.requestId;
    const missing = await fetch(`${endpoint}/audited/nope`);
    expect(missing.status).toBe(403);
    const admin = await runSvcCommand(['admin', 'notify', 'list', '--json'], { SVC_ENDPOINT: endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: join(work, 'home') });
    expect(admin.code).toBe(0);
    type Entry = { api: { name: string; bucket?: string; object?: string; status: string; statusCode: number; errorCode?: string; rx: number; timeToResponseInNS: string }; requestID: string; accessKey: string; remotehost: string; deploymentid: string; time: string };
    const entries = () => auditReceiver.bodies as unknown as Entry[];
    const putEntry = await until(`the PutObject audit record (${putId}; got ${JSON.stringify(entries().slice(-3))})`, () => entries().find((e) => e.requestID === putId));
    expect(putEntry.api).toMatchObject({ name: 'PutObject', bucket: 'audited', object: 'dir/a.txt', status: 'OK', statusCode: 200, rx: 8 });
    expect(putEntry.accessKey).toBe(ROOT.accessKey);
    expect(putEntry.remotehost).toBe('127.0.0.1');
    expect(Number(putEntry.api.timeToResponseInNS)).toBeGreaterThan(0);
    expect(putEntry.deploymentid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(putEntry.time)).toBeGreaterThan(Date.now() - 60_000);
    const refused = await until('the refused anonymous GET', () => entries().find((e) => e.api.object === 'nope'));
    expect(refused.api).toMatchObject({ name: 'GetObject', status: 'Error', statusCode: 403, errorCode: 'AccessDenied' });
    expect(refused.accessKey).toBe('');
    const adminEntry = await until('the admin request', () => entries().find((e) => e.api.name === 'admin:v3/notify/targets'));
    expect(adminEntry).toMatchObject({ accessKey: ROOT.accessKey, api: { statusCode: 200, status: 'OK' } });
    expect(auditReceiver.auth.every((a) => a === 'Bearer audit-token')).toBe(true);
  });

  it('keeps events while the receiver is down and across a restart of the node, and delivers each once when it is back', async () => {
    const s3 = s3Client(endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: 'outage' }));
    await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'outage', NotificationConfiguration: { QueueConfigurations: [{ Id: 'all', QueueArn: ARN, Events: ['s3:ObjectCreated:*'] }] } }));
    receiver.failing = true;
    const before = receiver.bodies.length;
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    for (const k of keys.slice(0, 20)) await s3.send(new PutObjectCommand({ Bucket: 'outage', Key: k, Body: k }));
    // the node restarts while the events wait
    await srv.stop();
    ({ srv, endpoint } = await startNotifyServer(work, env, port));
    const s3b = s3Client(endpoint);
    for (const k of keys.slice(20)) await s3b.send(new PutObjectCommand({ Bucket: 'outage', Key: k, Body: k }));
    expect(receiver.bodies.length).toBe(before);
    receiver.failing = false;
    const got = await until('the queued events after the receiver returned', () => (receiver.bodies.length - before >= keys.length ? receiver.bodies.slice(before) : undefined), 90_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.bodies.length - before).toBe(keys.length);
    expect(got.map((b) => (b.Records[0]!.s3 as { object: { key: string } }).object.key).sort()).toEqual(keys);
  }, 180_000);
});

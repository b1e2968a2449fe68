/**
 * Bucket notification tests: a real webhook receiver (node:http on
 * loopback), a real `svc` process with notification targets, the exact
 * AWS record check every target's test shares, and bounded waits.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { runSvc, type SvcRun } from '../svc-process.ts';
import { keepAliveHandler } from './s3-client.ts';

export const ROOT = { accessKey: 'notifyroot', secretKey: 'notifyroot-secret' };

/** Polls `fn` until it returns a value other than undefined (or throws the last error after `ms`). */
export async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 30_000, every = 50): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export interface ReceivedBody {
  EventName: string;
  Key: string;
  Records: Record<string, unknown>[];
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  /** Bodies received and answered 200, in order. */
  readonly bodies: ReceivedBody[];
  /** Authorization headers seen. */
  readonly auth: (string | undefined)[];
  /** Answer 503 instead of taking events. */
  failing: boolean;
  close(): Promise<void>;
  /** Starts again on the same port after `close`. */
  reopen(): Promise<void>;
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  let server: Server;
  const r = {
    url: '',
    port: 0,
    bodies: [] as ReceivedBody[],
    auth: [] as (string | undefined)[],
    failing: false,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((res) => server.close(() => res()));
    },
    async reopen() {
      await listen(r.port);
    },
  };
  const listen = async (p: number) => {
    server = createServer((req, res) => {
      void readAll(req).then((text) => {
        if (req.method === 'HEAD') {
          res.writeHead(200).end();
          return;
        }
        if (r.failing) {
          res.writeHead(503).end('down');
          return;
        }
        r.auth.push(req.headers.authorization);
        r.bodies.push(JSON.parse(text) as ReceivedBody);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((res) => server.listen(p, '127.0.0.1', res));
    r.port = (server.address() as AddressInfo).port;
    r.url = `http://127.0.0.1:${r.port}/events`;
  };
  await listen(port);
  return r;
}

export interface Expected {
  name: string;
  bucket: string;
  key: string;
  size?: number;
  etag?: string;
  /** Omit for the null version. */
  versionId?: string;
  configurationId?: string;
  principalId?: string;
}

/** Checks one record field by field against the AWS S3 event format. */
export function expectRecord(rec: Record<string, unknown>, e: Expected): void {
  expect(rec.eventVersion).toBe('2.1');
  expect(rec.eventSource).toBe('aws:s3');
  expect(rec.awsRegion).toBe('us-east-1');
  expect(rec.eventName).toBe(e.name);
  expect(typeof rec.eventTime === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(rec.eventTime)).toBe(true);
  expect(Math.abs(Date.parse(rec.eventTime as string) - Date.now())).toBeLessThan(10 * 60_000);
  expect(rec.userIdentity).toEqual({ principalId: e.principalId ?? ROOT.accessKey });
  expect((rec.requestParameters as { sourceIPAddress: string }).sourceIPAddress).toBe('127.0.0.1');
  const resp = rec.responseElements as Record<string, string>;
  expect(resp['x-amz-request-id']).toMatch(/^[0-9A-F]{16}$/);
  expect(resp['x-amz-id-2']).toBeTruthy();
  const s3 = rec.s3 as { s3SchemaVersion: string; configurationId: string; bucket: Record<string, unknown>; object: Record<string, unknown> };
  expect(s3.s3SchemaVersion).toBe('1.0');
  if (e.configurationId !== undefined) expect(s3.configurationId).toBe(e.configurationId);
  expect(s3.bucket).toEqual({ name: e.bucket, ownerIdentity: { principalId: ROOT.accessKey }, arn: `arn:aws:s3:::${e.bucket}` });
  const o = s3.object;
  expect(decodeURIComponent(String(o.key).replace(/\+/g, ' '))).toBe(e.key);
  expect(o.sequencer).toMatch(/^[0-9A-F]{16}$/);
  if (e.size !== undefined) expect(o.size).toBe(e.size);
  else expect(o.size).toBeUndefined();
  if (e.etag !== undefined) expect(o.eTag).toBe(e.etag);
  else expect(o.eTag).toBeUndefined();
  if (e.versionId !== undefined) expect(o.versionId).toBe(e.versionId);
  else expect(o.versionId).toBeUndefined();
}

export function s3Client(endpoint: string): S3Client {
  return new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey } });
}

/** A single-node `svc server` on four drive folders in `work`, ready; `env` carries the targets. */
export async function startNotifyServer(work: string, env: Record<string, string>, port?: number): Promise<{ srv: SvcRun; endpoint: string }> {
  for (let i = 1; i <= 4; i++) mkdirSync(join(work, `d${i}`), { recursive: true });
  const srv = await runSvc(['server', join(work, 'd{1...4}')], { SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, ...env }, port !== undefined ? { port } : {});
  const endpoint = `http://127.0.0.1:${srv.port}`;
  await until(
    `svc to become ready:\n${srv.stdout().slice(-2000)}${srv.stderr().slice(-2000)}`,
    async () => {
      if (srv.child.exitCode !== null) throw new Error(`svc exited ${srv.child.exitCode}: ${srv.stdout().slice(-2000)}${srv.stderr()}`);
      const r = await fetch(`${endpoint}/health/ready`).catch(() => undefined);
      return r?.status === 200 ? true : undefined;
    },
    60_000,
    100,
  );
  return { srv, endpoint };
}

/** The standard test configuration: created events under `img/` ending `.jpg`, and every removal. */
export function standardConfig(arn: string): { QueueConfigurations: { Id: string; QueueArn: string; Events: string[]; Filter?: unknown }[] } {
  return {
    QueueConfigurations: [
      {
        Id: 'created-jpg',
        QueueArn: arn,
        Events: ['s3:ObjectCreated:*'],
        Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'img/' }, { Name: 'suffix', Value: '.jpg' }] } },
      },
      { Id: 'removed', QueueArn: arn, Events: ['s3:ObjectRemoved:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'img/' }] } } },
    ],
  };
}

/**
 * The sequence every target's test runs on a bucket configured with
 * `standardConfig`: PUT, multipart complete, copy, delete, delete-marker
 * creation, plus writes the filters must drop. Returns the events the
 * target must receive, in order.
 */
export async function runStandardWorkload(s3: S3Client, bucket: string, arn: string): Promise<Expected[]> {
  const sdk = await import('@aws-sdk/client-s3');
  await s3.send(new sdk.CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new sdk.PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: standardConfig(arn) as never }));
  const out: Expected[] = [];
  const put = await s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: 'img/a b+é.jpg', Body: 'hello' }));
  out.push({ name: 'ObjectCreated:Put', bucket, key: 'img/a b+é.jpg', size: 5, etag: put.ETag!.replace(/"/g, ''), configurationId: 'created-jpg' });
  // filtered out: wrong suffix, wrong prefix
  await s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: 'img/skip.png', Body: 'x' }));
  await s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: 'doc/skip.jpg', Body: 'x' }));
  const mp = await s3.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: 'img/mp.jpg' }));
  const p1 = await s3.send(new sdk.UploadPartCommand({ Bucket: bucket, Key: 'img/mp.jpg', UploadId: mp.UploadId, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024, 1) }));
  const p2 = await s3.send(new sdk.UploadPartCommand({ Bucket: bucket, Key: 'img/mp.jpg', UploadId: mp.UploadId, PartNumber: 2, Body: Buffer.alloc(7, 2) }));
  const done = await s3.send(
    new sdk.CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'img/mp.jpg',
      UploadId: mp.UploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.ETag }] },
    }),
  );
  out.push({ name: 'ObjectCreated:CompleteMultipartUpload', bucket, key: 'img/mp.jpg', size: 5 * 1024 * 1024 + 7, etag: done.ETag!.replace(/"/g, ''), configurationId: 'created-jpg' });
  const copy = await s3.send(new sdk.CopyObjectCommand({ Bucket: bucket, Key: 'img/copy.jpg', CopySource: `${bucket}/${encodeURIComponent('img/a b+é.jpg')}` }));
  out.push({ name: 'ObjectCreated:Copy', bucket, key: 'img/copy.jpg', size: 5, etag: copy.CopyObjectResult!.ETag!.replace(/"/g, ''), configurationId: 'created-jpg' });
  await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: 'img/copy.jpg' }));
  out.push({ name: 'ObjectRemoved:Delete', bucket, key: 'img/copy.jpg', configurationId: 'removed' });
  // deleting what is not there makes no event
  await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: 'img/never.jpg' }));
  await s3.send(new sdk.PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  const del = await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: 'img/mp.jpg' }));
  expect(del.DeleteMarker).toBe(true);
  out.push({ name: 'ObjectRemoved:DeleteMarkerCreated', bucket, key: 'img/mp.jpg', versionId: del.VersionId!, configurationId: 'removed' });
  return out;
}

/** Checks received records against the expected ones, in order, and that the sequencers of one key increase. */
export function expectRecords(got: Record<string, unknown>[], want: Expected[]): void {
  expect(got.map((r) => `${String(r.eventName)} ${String((r.s3 as { object: { key: string } }).object.key)}`)).toEqual(
    want.map((w) => `${w.name} ${encodeKey(w.key)}`),
  );
  got.forEach((r, i) => expectRecord(r, want[i]!));
  const seq = new Map<string, string>();
  for (const r of got) {
    const o = (r.s3 as { object: { key: string; sequencer: string } }).object;
    const prev = seq.get(o.key);
    if (prev !== undefined) expect(o.sequencer > prev).toBe(true);
    seq.set(o.key, o.sequencer);
  }
}

/** A key as the records carry it (form-encoded, `/` kept). */
export function encodeKey(key: string): string {
  return encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+').replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Test helpers for bucket replication: a "site" is one real `svc server`
 * process with four drives in a temp dir (its own port, restartable on the
 * same port and drives), with an S3 client and signed admin calls; plus
 * what the tests compare (every version of a bucket, page by page).
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import type { TargetReport } from '../../src/replicator/replication-system.ts';
import type { ResyncRecord } from '../../src/replicator/resync.ts';
import type { SvcRun } from '../svc-process.ts';
import { admin } from './admin.ts';
import { ROOT, startNotifyServer, until } from './notify.ts';
import { keepAliveHandler } from './s3-client.ts';

export { ROOT, until };

export class Site {
  readonly name: string;
  readonly work: string;
  readonly env: Record<string, string>;
  srv!: SvcRun;
  endpoint = '';
  port = 0;
  s3!: S3Client;

  constructor(name: string, env: Record<string, string> = {}) {
    this.name = name;
    this.work = mkdtempSync(join(tmpdir(), `svc-repl-${name}-`));
    this.env = env;
  }

  static async start(name: string, env: Record<string, string> = {}): Promise<Site> {
    const s = new Site(name, env);
    await s.start();
    return s;
  }

  /** Starts (or restarts, on the same port and drives) the server and waits until it is ready. */
  async start(): Promise<void> {
    const { srv, endpoint } = await startNotifyServer(this.work, this.env, this.port === 0 ? undefined : this.port);
    this.srv = srv;
    this.endpoint = endpoint;
    this.port = srv.port;
    this.s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey }, maxAttempts: 1 });
  }

  /** `host:port` as a remote target names it. */
  get hostPort(): string {
    return this.endpoint.replace(/^https?:\/\//, '');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.srv.child.exitCode !== null) return;
    this.srv.child.kill(signal);
    await this.srv.exited;
  }

  async admin(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, query: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string; json: () => unknown }> {
    return admin(this.endpoint, ROOT, { method, path, query, ...(body !== undefined ? { body } : {}) });
  }

  /** Adds `other`'s bucket as a remote target of `bucket`; its ARN. */
  async addTarget(bucket: string, other: { hostPort: string; accessKey?: string; secretKey?: string }, targetBucket: string, extra: Record<string, unknown> = {}): Promise<string> {
    const r = await this.admin(
      'PUT',
      'v3/set-remote-target',
      { bucket },
      JSON.stringify({ endpoint: other.hostPort, targetbucket: targetBucket, credentials: { accessKey: other.accessKey ?? ROOT.accessKey, secretKey: other.secretKey ?? ROOT.secretKey }, secure: false, type: 'replication', ...extra }),
    );
    if (r.status !== 200) throw new Error(`set-remote-target: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as string;
  }

  /** This site's replication status of `bucket` (one target). */
  async replStatus(bucket: string): Promise<{ targets: TargetReport[]; resync: ResyncRecord[] }> {
    const r = await this.admin('GET', 'v3/replication/status', { bucket });
    if (r.status !== 200) throw new Error(`replication/status: ${r.status} ${r.body}`);
    return (r.json() as { targets: TargetReport[]; resync: ResyncRecord[] }[])[0]!;
  }

  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    this.s3?.destroy();
    await rm(this.work, { recursive: true, force: true });
  }
}

export interface VersionRow {
  key: string;
  versionId: string;
  deleteMarker: boolean;
  isLatest: boolean;
  etag?: string;
  size?: number;
  lastModified: number;
}

/** Every version and delete marker of a bucket, keys ascending, newest first per key. */
export async function allVersions(s3: S3Client, bucket: string): Promise<VersionRow[]> {
  const out: VersionRow[] = [];
  let marker: { KeyMarker?: string; VersionIdMarker?: string } = {};
  for (;;) {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: 1000, ...marker }));
    const rows: VersionRow[] = [
      ...(page.Versions ?? []).map((v) => ({ key: v.Key!, versionId: v.VersionId!, deleteMarker: false, isLatest: v.IsLatest === true, etag: v.ETag!, size: v.Size!, lastModified: v.LastModified!.getTime() })),
      ...(page.DeleteMarkers ?? []).map((d) => ({ key: d.Key!, versionId: d.VersionId!, deleteMarker: true, isLatest: d.IsLatest === true, lastModified: d.LastModified!.getTime() })),
    ];
    out.push(...rows);
    if (!page.IsTruncated) break;
    marker = { KeyMarker: page.NextKeyMarker!, VersionIdMarker: page.NextVersionIdMarker! };
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : b.lastModified - a.lastModified || (a.versionId < b.versionId ? 1 : -1)));
}

/** A version row as a comparable line. */
export function rowLine(r: VersionRow): string {
  return `${r.key} ${r.versionId} ${r.deleteMarker ? 'DM' : `${r.etag} ${r.size}`}${r.isLatest ? ' latest' : ''}`;
}

/** The replication rule `svc replicate add` writes (every key, deletes as asked). */
export function ruleFor(arn: string, o: { id?: string; priority?: number; deleteMarkers?: boolean; existing?: boolean; prefix?: string } = {}) {
  return {
    ID: o.id ?? 'all',
    Priority: o.priority ?? 1,
    Status: 'Enabled' as const,
    Filter: { Prefix: o.prefix ?? '' },
    DeleteMarkerReplication: { Status: o.deleteMarkers === false ? ('Disabled' as const) : ('Enabled' as const) },
    ...(o.existing ? { ExistingObjectReplication: { Status: 'Enabled' as const } } : {}),
    Destination: { Bucket: arn },
  };
}

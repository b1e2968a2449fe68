/**
 * `svc replicate`: bucket replication as `mc replicate` shapes it.
 *
 *   svc replicate add ALIAS/BUCKET --remote-bucket http(s)://ACCESS:SECRET@HOST:PORT/BUCKET
 *       [--priority N] [--replicate delete,delete-marker,existing-objects] [--prefix P]
 *       [--tags "k=v&k2=v2"] [--storage-class SC] [--bandwidth 100MiB] [--healthcheck 10]
 *       [--region R] [--id ID] [--disable]
 *   svc replicate ls ALIAS/BUCKET
 *   svc replicate rm ALIAS/BUCKET (--id ID | --all)
 *   svc replicate status ALIAS/BUCKET
 *   svc replicate resync start|status|cancel ALIAS/BUCKET [--remote-bucket ARN]
 *
 * `add` registers the remote bucket as a target of the bucket (admin
 * `set-remote-target`, the body encrypted with the alias's secret key, as
 * mc sends it) and adds a rule naming its ARN to the bucket's replication
 * configuration (S3 `PutBucketReplication`, the other rules kept). `rm`
 * removes rules and the targets no rule names any more. ALIAS/BUCKET may be
 * just BUCKET when SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY are set.
 * Every command takes `--json`.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { escapeXml, parseXml, toXml, XML_DECL, type XmlNode, xmlList, xmlRawText, xmlText } from '../../api/s3/xml.ts';
import { type BucketTargetWire, parseRemoteUrl } from '../../replication/targets.ts';
import type { TargetReport } from '../../replicator/replication-system.ts';
import type { ResyncRecord } from '../../replicator/resync.ts';
import { formatBytes, parseByteSize } from '../../util/bytes.ts';
import type { ClientTlsOptions } from '../client-tls.ts';
import { AdminClient, ServerError } from './client.ts';
import { envTarget, readAliases, UsageError } from './config.ts';
import type { IamCommandDeps } from './iam-commands.ts';

interface Opt {
  json?: boolean;
}

const DEFAULT_REGION = 'us-east-1';

/** `ALIAS/BUCKET`, or `BUCKET` with the SVC_ENDPOINT server. */
export function bucketTarget(arg: string | undefined, env: NodeJS.ProcessEnv, tls?: ClientTlsOptions): { client: AdminClient; bucket: string } {
  if (arg === undefined || arg === '') throw new UsageError('name the bucket: ALIAS/BUCKET');
  const region = env['SVC_REGION'] || DEFAULT_REGION;
  const slash = arg.indexOf('/');
  if (slash > 0) {
    const a = readAliases(env).aliases[arg.slice(0, slash)];
    if (a !== undefined) return { client: new AdminClient({ name: arg.slice(0, slash), ...a }, region, tls), bucket: arg.slice(slash + 1).replace(/\/+$/, '') };
  }
  const t = envTarget(env);
  if (t === undefined && slash < 0 && readAliases(env).aliases[arg] !== undefined) throw new UsageError(`name the bucket too: ${arg}/BUCKET`);
  if (t === undefined || slash > 0) throw new UsageError(`no alias "${slash > 0 ? arg.slice(0, slash) : arg}", and SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY are not set; add one with svc alias set NAME URL ACCESS_KEY SECRET_KEY`);
  return { client: new AdminClient(t, region, tls), bucket: arg };
}

interface RuleView {
  id: string;
  priority: number;
  status: string;
  prefix: string;
  tags: string;
  destination: string;
  storageClass?: string;
  deleteMarkers: boolean;
  deletes: boolean;
  existingObjects: boolean;
}

type Node = Record<string, unknown>;

function child(n: Node, name: string): Node {
  const v = n[name];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Node) : {};
}

function enabled(n: Node, name: string): boolean {
  return xmlText(child(n, name), 'Status') === 'Enabled';
}

/** The rules of a configuration as GetBucketReplication returns it: each rule's XML (re-serialized, every element kept) and what it says. */
export function rulesOf(xml: string): { xml: string; view: RuleView }[] {
  return xmlList(parseXml(xml, 'ReplicationConfiguration'), 'Rule').map((r) => {
    const filter = child(r, 'Filter');
    const and = child(filter, 'And');
    const tags = [...xmlList(filter, 'Tag'), ...xmlList(and, 'Tag')].map((t) => `${encodeURIComponent(xmlRawText(t, 'Key') ?? '')}=${encodeURIComponent(xmlRawText(t, 'Value') ?? '')}`).join('&');
    const dest = child(r, 'Destination');
    const view: RuleView = {
      id: xmlRawText(r, 'ID') ?? '',
      priority: Number(xmlText(r, 'Priority') ?? 0),
      status: xmlText(r, 'Status') ?? '',
      prefix: xmlRawText(filter, 'Prefix') ?? xmlRawText(and, 'Prefix') ?? xmlRawText(r, 'Prefix') ?? '',
      tags,
      destination: xmlText(dest, 'Bucket') ?? '',
      deleteMarkers: enabled(r, 'DeleteMarkerReplication'),
      deletes: enabled(r, 'DeleteReplication'),
      existingObjects: enabled(r, 'ExistingObjectReplication'),
    };
    const sc = xmlText(dest, 'StorageClass');
    if (sc !== undefined) view.storageClass = sc;
    return { xml: toXml('Rule', r as XmlNode, false).slice(XML_DECL.length), view };
  });
}

/** The XML of one rule as `svc replicate add` writes it. */
export function ruleXml(r: RuleView): string {
  const tags = r.tags === '' ? [] : [...new URLSearchParams(r.tags)];
  const tagXml = (k: string, v: string) => `<Tag><Key>${escapeXml(k)}</Key><Value>${escapeXml(v)}</Value></Tag>`;
  let filter: string;
  if (tags.length === 0) filter = `<Prefix>${escapeXml(r.prefix)}</Prefix>`;
  else if (tags.length === 1 && r.prefix === '') filter = tagXml(tags[0]![0], tags[0]![1]);
  else filter = `<And><Prefix>${escapeXml(r.prefix)}</Prefix>${tags.map(([k, v]) => tagXml(k, v)).join('')}</And>`;
  const st = (on: boolean) => `<Status>${on ? 'Enabled' : 'Disabled'}</Status>`;
  return (
    `<Rule><ID>${escapeXml(r.id)}</ID><Priority>${r.priority}</Priority><Status>${r.status}</Status><Filter>${filter}</Filter>` +
    `<DeleteMarkerReplication>${st(r.deleteMarkers)}</DeleteMarkerReplication>` +
    (r.deletes ? `<DeleteReplication>${st(true)}</DeleteReplication>` : '') +
    `<Destination><Bucket>${escapeXml(r.destination)}</Bucket>${r.storageClass ? `<StorageClass>${r.storageClass}</StorageClass>` : ''}</Destination>` +
    (r.existingObjects ? `<ExistingObjectReplication>${st(true)}</ExistingObjectReplication>` : '') +
    `</Rule>`
  );
}

/** The bucket's replication rules (none when it has no configuration). */
async function currentRules(client: AdminClient, bucket: string): Promise<{ xml: string; view: RuleView }[]> {
  let xml: string;
  try {
    xml = (await client.s3('GET', `/${bucket}`, { replication: '' })).text;
  } catch (err) {
    if (err instanceof ServerError && err.code === 'ReplicationConfigurationNotFoundError') return [];
    throw err;
  }
  return rulesOf(xml);
}

/** A target as `list-remote-targets` lists it (the server always names its ARN). */
type TargetWire = BucketTargetWire & { arn: string };

async function listTargets(client: AdminClient, bucket: string): Promise<TargetWire[]> {
  return (await client.json<TargetWire[]>('GET', 'v3/list-remote-targets', { bucket, type: 'replication' })).value;
}

async function putRules(client: AdminClient, bucket: string, rules: readonly string[]): Promise<void> {
  if (rules.length === 0) {
    await client.s3('DELETE', `/${bucket}`, { replication: '' });
    return;
  }
  await client.s3('PUT', `/${bucket}`, { replication: '' }, `<ReplicationConfiguration><Role></Role>${rules.join('')}</ReplicationConfiguration>`);
}

/** What `v3/replication/status` answers per bucket. */
interface ReplicationStatus {
  targets: TargetReport[];
  resync: ResyncRecord[];
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  return s < 120 ? `${s.toFixed(1)}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${(s / 3600).toFixed(1)}h`;
}

/** `svc replicate status` as text. */
export function statusView(bucket: string, s: ReplicationStatus): string {
  if (s.targets.length === 0) return `${bucket}: no remote targets`;
  const lines = [`Replication of ${bucket} (this node's queues):`];
  for (const t of s.targets) {
    lines.push(`  ${t.arn}  →  ${t.endpoint}/${t.targetBucket}  ${t.online ? 'online' : 'OFFLINE'}`);
    lines.push(`    queued ${t.queued.count} (${formatBytes(t.queued.bytes)})  failed ${t.failed.count} (${formatBytes(t.failed.bytes)})  replicated ${t.completed.count} (${formatBytes(t.completed.bytes)})  lag ${duration(t.lagMs)}`);
    if (t.bandwidthLimit > 0) lines.push(`    bandwidth limit ${formatBytes(t.bandwidthLimit)}/s`);
    if (t.lastError !== undefined) lines.push(`    last error${t.lastErrorAt !== undefined ? ` (${new Date(t.lastErrorAt).toISOString()})` : ''}: ${t.lastError}`);
  }
  for (const r of s.resync) lines.push(`  resync to ${r.arn}: ${r.state}, ${r.scanned} versions scanned, ${r.queued} queued (${formatBytes(r.queuedBytes)}) on ${r.node}${r.lastError ? `: ${r.lastError}` : ''}`);
  return lines.join('\n');
}

export function registerReplicateCommands(program: Command, d: IamCommandDeps): void {
  const rep = program.command('replicate').description('bucket replication to another svc cluster or any S3 service (as mc replicate)');
  const print = (o: Opt, value: unknown, text: string) => d.print(o.json ? JSON.stringify(value) : text);
  rep
    .command('add')
    .description('add a remote bucket as a target and a rule replicating to it')
    .argument('<ALIAS/BUCKET>')
    .requiredOption('--remote-bucket <url>', 'http(s)://ACCESS:SECRET@HOST:PORT/BUCKET')
    .option('--priority <n>', 'rule priority (larger wins among rules to one target)', '1')
    .option('--replicate <what>', 'also replicate: delete, delete-marker, existing-objects (comma separated)', '')
    .option('--prefix <prefix>', 'only keys starting with this', '')
    .option('--tags <tags>', 'only versions with these tags ("k=v&k2=v2")', '')
    .option('--storage-class <class>', 'storage class of the replicas')
    .option('--bandwidth <size>', 'bandwidth limit per second (e.g. 100MiB)')
    .option('--healthcheck <seconds>', 'seconds between health checks of the target', '5')
    .option('--region <region>', 'region of the remote (default us-east-1)')
    .option('--id <id>', 'rule id (default: a new one)')
    .option('--disable', 'add the rule disabled')
    .option('--json', 'print JSON')
    .action(async (arg: string, o: Opt & { remoteBucket: string; priority: string; replicate: string; prefix: string; tags: string; storageClass?: string; bandwidth?: string; healthcheck: string; region?: string; id?: string; disable?: boolean }) =>
      d.run(!!o.json, async (remember) => {
        const { client, bucket } = bucketTarget(arg, d.env, d.tls?.());
        remember(client.target.name);
        let remote;
        try {
          remote = parseRemoteUrl(o.remoteBucket);
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        const what = o.replicate.split(',').map((s) => s.trim()).filter((s) => s !== '');
        for (const w of what) if (!['delete', 'delete-marker', 'existing-objects'].includes(w)) throw new UsageError(`--replicate takes delete, delete-marker, existing-objects; not "${w}"`);
        const priority = Number(o.priority);
        if (!Number.isInteger(priority) || priority < 0) throw new UsageError('--priority must be a non-negative integer');
        const health = Number(o.healthcheck);
        if (!Number.isInteger(health) || health < 1) throw new UsageError('--healthcheck must be a whole number of seconds, at least 1');
        let bandwidth = 0;
        if (o.bandwidth !== undefined) {
          try {
            bandwidth = parseByteSize(o.bandwidth, '--bandwidth');
          } catch (err) {
            throw new UsageError((err as Error).message);
          }
        }
        if (o.tags !== '' && what.includes('delete-marker')) throw new UsageError('delete markers have no tags: --replicate delete-marker cannot go with --tags');
        const body = {
          sourcebucket: bucket,
          endpoint: remote.endpoint,
          credentials: { accessKey: remote.accessKey, secretKey: remote.secretKey },
          targetbucket: remote.bucket,
          secure: remote.secure,
          type: 'replication',
          region: o.region ?? '',
          bandwidthlimit: bandwidth,
          healthCheckDuration: health * 1e9,
          replicationSync: false,
          disableProxy: true,
        };
        const arn = (await client.encrypted('PUT', 'v3/set-remote-target', { bucket }, body, false)).raw;
        const targetArn = JSON.parse(arn) as string;
        const rules = await currentRules(client, bucket);
        const id = o.id ?? `rule-${randomBytes(6).toString('hex')}`;
        const view: RuleView = {
          id,
          priority,
          status: o.disable ? 'Disabled' : 'Enabled',
          prefix: o.prefix,
          tags: o.tags,
          destination: targetArn,
          deleteMarkers: what.includes('delete-marker'),
          deletes: what.includes('delete'),
          existingObjects: what.includes('existing-objects'),
          ...(o.storageClass ? { storageClass: o.storageClass } : {}),
        };
        await putRules(client, bucket, [...rules.filter((r) => r.view.id !== id).map((r) => r.xml), ruleXml(view)]);
        print(o, { status: 'success', arn: targetArn, rule: view }, `Replication of ${bucket} to ${remote.endpoint}/${remote.bucket} added: rule ${id}, target ${targetArn}.`);
      }),
    );
  rep
    .command('ls')
    .description("the bucket's replication rules and their targets")
    .argument('<ALIAS/BUCKET>')
    .option('--json', 'print JSON')
    .action(async (arg: string, o: Opt) =>
      d.run(!!o.json, async (remember) => {
        const { client, bucket } = bucketTarget(arg, d.env, d.tls?.());
        remember(client.target.name);
        const rules = (await currentRules(client, bucket)).map((r) => r.view);
        const targets = await listTargets(client, bucket);
        const lines = rules.length === 0 ? [`${bucket}: no replication rules`] : [`Replication rules of ${bucket}:`];
        for (const r of rules) {
          const t = targets.find((x) => x.arn === r.destination);
          const also = [r.deleteMarkers ? 'delete-marker' : '', r.deletes ? 'delete' : '', r.existingObjects ? 'existing-objects' : ''].filter((x) => x !== '').join(',');
          lines.push(
            `  ${r.id}  priority ${r.priority}  ${r.status}  →  ${t ? `${t.secure ? 'https' : 'http'}://${t.endpoint}/${t.targetbucket}${t.isOnline ? '' : ' (OFFLINE)'}` : r.destination}` +
              `${r.prefix ? `  prefix ${r.prefix}` : ''}${r.tags ? `  tags ${r.tags}` : ''}${also ? `  replicate ${also}` : ''}${r.storageClass ? `  class ${r.storageClass}` : ''}`,
          );
        }
        print(o, { rules, targets }, lines.join('\n'));
      }),
    );
  rep
    .command('rm')
    .description('remove a rule (--id) or every rule (--all), and the targets no rule uses any more')
    .argument('<ALIAS/BUCKET>')
    .option('--id <id>', 'the rule to remove')
    .option('--all', 'remove every rule')
    .option('--json', 'print JSON')
    .action(async (arg: string, o: Opt & { id?: string; all?: boolean }) =>
      d.run(!!o.json, async (remember) => {
        const { client, bucket } = bucketTarget(arg, d.env, d.tls?.());
        remember(client.target.name);
        if ((o.id === undefined) === (o.all !== true)) throw new UsageError('name one rule with --id ID, or --all');
        const rules = await currentRules(client, bucket);
        const keep = o.all ? [] : rules.filter((r) => r.view.id !== o.id);
        if (!o.all && keep.length === rules.length) throw new UsageError(`${bucket} has no replication rule ${o.id}`);
        await putRules(client, bucket, keep.map((r) => r.xml));
        const used = new Set(keep.map((r) => r.view.destination));
        const targets = await listTargets(client, bucket);
        const removed: string[] = [];
        for (const t of targets) {
          if (used.has(t.arn)) continue;
          await client.request('DELETE', 'v3/remove-remote-target', { bucket, arn: t.arn });
          removed.push(t.arn);
        }
        print(o, { status: 'success', rulesLeft: keep.length, targetsRemoved: removed }, `Removed ${rules.length - keep.length} rule(s) of ${bucket}${removed.length > 0 ? ` and the target(s) ${removed.join(', ')}` : ''}.`);
      }),
    );
  rep
    .command('status')
    .description('per target: queued and failed copies (count, bytes), lag, last error, health')
    .argument('<ALIAS/BUCKET>')
    .option('--json', 'print JSON')
    .action(async (arg: string, o: Opt) =>
      d.run(!!o.json, async (remember) => {
        const { client, bucket } = bucketTarget(arg, d.env, d.tls?.());
        remember(client.target.name);
        const s = (await client.json<ReplicationStatus[]>('GET', 'v3/replication/status', { bucket })).value[0] ?? { targets: [], resync: [] };
        print(o, s, statusView(bucket, s));
      }),
    );
  const resync = rep.command('resync').description('replicate the versions a bucket already holds (rules with existing-objects)');
  for (const [name, method, path, what] of [
    ['start', 'POST', 'v3/replication/resync/start', 'start a resync to every target (or --remote-bucket ARN)'],
    ['status', 'GET', 'v3/replication/resync/status', 'the state of each target\'s resync'],
    ['cancel', 'POST', 'v3/replication/resync/cancel', 'stop a running resync'],
  ] as const) {
    resync
      .command(name)
      .description(what)
      .argument('<ALIAS/BUCKET>')
      .option('--remote-bucket <arn>', 'the target ARN (default: every target of the bucket)')
      .option('--json', 'print JSON')
      .action(async (arg: string, o: Opt & { remoteBucket?: string }) =>
        d.run(!!o.json, async (remember) => {
          const { client, bucket } = bucketTarget(arg, d.env, d.tls?.());
          remember(client.target.name);
          const q: Record<string, string> = { bucket };
          if (o.remoteBucket !== undefined && name !== 'status') q.arn = o.remoteBucket;
          const r = (await client.json<ResyncRecord[]>(method, path, q)).value;
          const lines = r.length === 0 ? [`${bucket}: no resync has run`] : r.map((x) => `resync of ${bucket} to ${x.arn}: ${x.state}, ${x.scanned} versions scanned, ${x.queued} queued (${formatBytes(x.queuedBytes)})${x.lastError ? `: ${x.lastError}` : ''}`);
          print(o, r, lines.join('\n'));
        }),
      );
  }
}

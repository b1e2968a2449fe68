/**
 * `svc admin notify`: bucket notification targets through the admin API.
 *
 *   svc admin notify list ALIAS
 *   svc admin notify set ALIAS TYPE ID KEY=VALUE...     (endpoint=https://… auth_token=…)
 *   svc admin notify remove ALIAS TYPE ID
 *   svc watch ALIAS [BUCKET] [--prefix P] [--suffix S] [--events TYPE,...]
 *
 * ALIAS may be left out when SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY
 * are set. Every command takes `--json`.
 */
import type { Command } from 'commander';
import type { NotifyTargetReport } from '../../object/admin/services.ts';
import { UsageError } from './config.ts';
import { type IamCommandDeps, target } from './iam-commands.ts';

interface Opt {
  json?: boolean;
}

function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return 'never';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
}

/** The targets as `svc admin notify list` and `svc admin info` print them. */
export function notifyView(targets: readonly NotifyTargetReport[], now = Date.now()): string {
  if (targets.length === 0) return 'Notification targets: none (SVC_NOTIFY_* variables or `svc admin notify set`)';
  const lines = ['Notification targets (this node):'];
  for (const t of targets) {
    lines.push(
      `  ${t.arn}  ${t.online ? 'online' : 'OFFLINE'}  queued ${t.queued}/${t.queueLimit}  delivered ${t.delivered}  last delivery ${ago(t.lastDeliveredAt, now)}  (${t.source === 'env' ? 'SVC_NOTIFY_*' : 'admin API'})`,
    );
    if (t.lastError !== undefined) lines.push(`    last error ${ago(t.lastErrorAt, now)}: ${t.lastError}`);
  }
  return lines.join('\n');
}

export function registerNotifyCommands(admin: Command, d: IamCommandDeps): void {
  const notify = admin.command('notify').description('bucket notification targets: status, and targets set without a restart');
  const print = (o: Opt, value: unknown, text: string) => d.print(o.json ? JSON.stringify(value) : text);
  notify
    .command('list')
    .description("every target of the node: ARN, online, queued events, last error")
    .argument('[args...]', 'ALIAS')
    .option('--json', 'print JSON')
    .action(async (args: string[], o: Opt) =>
      d.run(!!o.json, async (remember) => {
        const { client, rest } = target(args, d.env, d.tls?.());
        remember(client.target.name);
        if (rest.length > 0) throw new UsageError('usage: svc admin notify list ALIAS');
        const r = await client.json<NotifyTargetReport[]>('GET', 'v3/notify/targets');
        print(o, r.value, notifyView(r.value));
      }),
    );
  notify
    .command('set')
    .description('add or replace a target on every node (settings as in SVC_NOTIFY_<TYPE>_<KEY>, lower case)')
    .argument('[args...]', 'ALIAS TYPE ID KEY=VALUE...')
    .option('--json', 'print JSON')
    .action(async (args: string[], o: Opt) =>
      d.run(!!o.json, async (remember) => {
        const { client, rest } = target(args, d.env, d.tls?.());
        remember(client.target.name);
        const [type, id, ...pairs] = rest;
        if (type === undefined || id === undefined || pairs.length === 0) throw new UsageError('usage: svc admin notify set ALIAS TYPE ID KEY=VALUE... (e.g. webhook primary endpoint=https://hooks.example/s3)');
        const settings: Record<string, string> = {};
        for (const p of pairs) {
          const eq = p.indexOf('=');
          if (eq <= 0) throw new UsageError(`settings are KEY=VALUE, not "${p}"`);
          settings[p.slice(0, eq).toLowerCase()] = p.slice(eq + 1);
        }
        await client.request('PUT', 'v3/notify/target', { type, id }, JSON.stringify(settings));
        print(o, { status: 'success', arn: `arn:svc:sqs::${id}:${type}` }, `Target arn:svc:sqs::${id}:${type} set on every node.`);
      }),
    );
  notify
    .command('remove')
    .description('remove a target set with `svc admin notify set`')
    .argument('[args...]', 'ALIAS TYPE ID')
    .option('--json', 'print JSON')
    .action(async (args: string[], o: Opt) =>
      d.run(!!o.json, async (remember) => {
        const { client, rest } = target(args, d.env, d.tls?.());
        remember(client.target.name);
        const [type, id, ...more] = rest;
        if (type === undefined || id === undefined || more.length > 0) throw new UsageError('usage: svc admin notify remove ALIAS TYPE ID');
        await client.request('POST', 'v3/notify/target/remove', { type, id });
        print(o, { status: 'success' }, `Target arn:svc:sqs::${id}:${type} removed.`);
      }),
    );
}

interface WatchOpt {
  json?: boolean;
  prefix?: string;
  suffix?: string;
  events?: string;
}

/** One event as `svc watch` prints it. */
export function watchLine(record: Record<string, unknown>): string {
  const s3 = record.s3 as { bucket: { name: string }; object: { key: string; size?: number; versionId?: string } };
  const key = decodeURIComponent(s3.object.key.replace(/\+/g, ' '));
  const size = s3.object.size !== undefined ? `  ${s3.object.size} B` : '';
  const version = s3.object.versionId !== undefined ? `  version ${s3.object.versionId}` : '';
  return `${String(record.eventTime)}  ${String(record.eventName)}  ${s3.bucket.name}/${key}${size}${version}`;
}

/**
 * `svc watch`: the events of a bucket (or of every bucket) as they happen,
 * through ListenBucketNotification on the node the alias names: one line
 * per event (`--json`: the AWS record), until interrupted.
 */
export function registerWatchCommand(program: Command, d: IamCommandDeps): void {
  program
    .command('watch')
    .description('print bucket events as they happen (ListenBucketNotification): ALIAS [BUCKET]')
    .argument('[args...]', 'ALIAS [BUCKET]')
    .option('--prefix <prefix>', 'only keys starting with this')
    .option('--suffix <suffix>', 'only keys ending with this')
    .option('--events <types>', 'comma-separated: put, delete, get, or S3 event types (default put,delete)', 'put,delete')
    .option('--json', 'print each event as its AWS record (one JSON object a line)')
    .action(async (args: string[], o: WatchOpt) =>
      d.run(!!o.json, async (remember) => {
        const { client, rest } = target(args, d.env, d.tls?.());
        remember(client.target.name);
        if (rest.length > 1) throw new UsageError('usage: svc watch ALIAS [BUCKET] [--prefix P] [--suffix S] [--events put,delete,get]');
        const shorthand: Record<string, string> = { put: 's3:ObjectCreated:*', delete: 's3:ObjectRemoved:*', get: 's3:ObjectAccessed:*' };
        const events = (o.events ?? 'put,delete').split(',').map((e) => e.trim()).filter(Boolean).map((e) => shorthand[e] ?? e);
        const query: Record<string, string | string[]> = { events };
        if (o.prefix) query.prefix = o.prefix;
        if (o.suffix) query.suffix = o.suffix;
        const body = await client.stream(rest[0] ? `/${rest[0]}` : '/', query);
        let buf = '';
        const decoder = new TextDecoder();
        for await (const chunk of body) {
          buf += decoder.decode(chunk, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === '') continue;
            for (const r of (JSON.parse(line) as { Records?: Record<string, unknown>[] }).Records ?? []) d.print(o.json ? JSON.stringify(r) : watchLine(r));
          }
        }
      }),
    );
}

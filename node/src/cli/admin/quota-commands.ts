/**
 * `svc admin bucket quota`: a bucket's hard quota, through the routes and
 * body `mc quota` (madmin-go) uses.
 *
 *   svc admin bucket quota set ALIAS BUCKET --size 10GiB
 *   svc admin bucket quota info ALIAS BUCKET
 *   svc admin bucket quota clear ALIAS BUCKET
 *
 * ALIAS may be left out when SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY
 * are set. Every command takes `--json`.
 */
import type { Command } from 'commander';
import type { BucketQuotaReport } from '../../object/admin/services.ts';
import { parseByteSize } from '../../util/bytes.ts';
import { UsageError } from './config.ts';
import { formatBytes, formatPercent } from './format.ts';
import { exactly, type IamCommandDeps, target } from './iam-commands.ts';

interface QuotaOpt {
  json?: boolean;
  size?: string;
}

function sizeOf(s: string | undefined): number {
  if (s === undefined) throw new UsageError('usage: svc admin bucket quota set ALIAS BUCKET --size SIZE (e.g. 10GiB, 500MB, 1073741824)');
  let n: number;
  try {
    n = parseByteSize(s, '--size');
  } catch {
    throw new UsageError(`--size takes a byte size such as 10GiB, 500MB or 1073741824, not "${s}"`);
  }
  if (n <= 0) throw new UsageError('--size must be more than 0 bytes; use `svc admin bucket quota clear` to remove a quota');
  return n;
}

export function quotaView(q: BucketQuotaReport): string {
  return [
    `Bucket ${q.bucket}: hard quota ${formatBytes(q.size)}`,
    `Counted against it: ${formatBytes(q.usage)} (${formatPercent(q.size > 0 ? q.usage / q.size : 0)}), ${formatBytes(Math.max(0, q.size - q.usage))} left`,
    '  (the last usage scan plus the writes this node took since; writes through other nodes count from the next scan)',
    'Writes that would go over it are refused (PUT, copy, multipart complete).',
  ].join('\n');
}

export function registerQuotaCommands(admin: Command, d: IamCommandDeps): void {
  const bucket = admin.commands.find((c) => c.name() === 'bucket') ?? admin.command('bucket').description("per-bucket settings: the bucket's quota");
  const quota = bucket.command('quota').description('a hard limit on the bytes a bucket holds (what `mc quota` sets)');
  type Client = ReturnType<typeof target>['client'];
  const cmd = (name: string, description: string, usage: string, body: (client: Client, bucketName: string, o: QuotaOpt) => Promise<void>, withSize = false) => {
    const c = quota.command(name).description(description).argument('[args...]', usage).option('--json', 'print JSON');
    if (withSize) c.option('--size <size>', 'the quota: 10GiB, 500MB, 1073741824 …');
    c.action(async (args: string[], o: QuotaOpt) =>
      d.run(!!o.json, async (remember) => {
        const { client, rest } = target(args, d.env, d.tls?.());
        remember(client.target.name);
        const [b] = exactly(rest, 1, `svc admin bucket quota ${name} ALIAS BUCKET${withSize ? ' --size SIZE' : ''}`);
        await body(client, b!, o);
      }),
    );
  };
  const print = (o: QuotaOpt, value: unknown, text: string) => d.print(o.json ? JSON.stringify(value) : text);
  cmd(
    'set',
    "set a bucket's hard quota",
    'ALIAS BUCKET --size SIZE',
    async (client, b, o) => {
      const size = sizeOf(o.size);
      await client.request('PUT', 'v3/set-bucket-quota', { bucket: b }, JSON.stringify({ size, quota: size, quotatype: 'hard' }));
      print(o, { status: 'success', bucket: b, size }, `Set a hard quota of ${formatBytes(size)} on bucket \`${b}\`.`);
    },
    true,
  );
  cmd('info', "a bucket's quota and what counts against it now", 'ALIAS BUCKET', async (client, b, o) => {
    const r = await client.json<BucketQuotaReport>('GET', 'v3/get-bucket-quota', { bucket: b });
    print(o, r.value, quotaView(r.value));
  });
  cmd('clear', "remove a bucket's quota", 'ALIAS BUCKET', async (client, b, o) => {
    await client.request('PUT', 'v3/set-bucket-quota', { bucket: b }, JSON.stringify({ size: 0, quota: 0 }));
    print(o, { status: 'success', bucket: b }, `Cleared the quota of bucket \`${b}\`.`);
  });
}

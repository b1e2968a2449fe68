/**
 * The admin client groups of `svc` (SPEC "Command-line client"):
 *
 *   svc alias set NAME URL ACCESS_KEY SECRET_KEY | alias list | alias remove NAME
 *   svc pool list [ALIAS]            svc pool status [ALIAS] POOL [--by-id]
 *   svc decommission start|status|cancel|clear [ALIAS] [POOL[,POOL...]] [--by-id] [--watch]
 *   svc rebalance start|status|stop [ALIAS] [--watch]   (`svc expand ...` is the same group)
 *   svc heal start|status|stop [ALIAS] [--bucket B] [--prefix P] [--scan-mode normal|deep]
 *                               [--remove] [--recreate] [--dry-run] [--client-token T] [--watch]
 *   svc admin info [ALIAS]           svc admin snapshot [ALIAS]       svc admin kms [ALIAS]
 *   svc admin metrics [ALIAS] [--minutes N] [--step M]   (activity over time; `metrics-view.ts`)
 *   svc bucket info [ALIAS] [BUCKET]  (versioning, object lock, encryption, lifecycle)
 *   svc admin user|group|policy|accesskey ...   (identities; `iam-commands.ts`)
 *   svc admin bucket quota set|info|clear [ALIAS] BUCKET [--size SIZE]   (`quota-commands.ts`)
 *   svc admin notify list|set|remove [ALIAS] ...                         (`notify-commands.ts`)
 *
 * Every command takes `--json` (print the server's JSON). Exit codes: 0 ok,
 * 1 the server said no, 2 usage, 3 the server is unreachable. Errors say
 * what to do next.
 */
import type { Command } from 'commander';
import type {
  ClusterSnapshot,
  DecommissionStatusReport,
  HealResultItem,
  HealStartSuccess,
  HealTaskStatus,
  MetricsHistoryReport,
  PoolStatus,
  RebalanceStatus,
  ServerInfoMessage,
} from '../../object/admin/types.ts';
import type { ClientTlsOptions } from '../client-tls.ts';
import { AdminClient, DEFAULT_REGION, ServerError, UnreachableError } from './client.ts';
import { aliasTarget, envTarget, readAliases, removeAlias, setAlias, type Target, takeTarget, UsageError } from './config.ts';
import { table } from './format.ts';
import type { BucketGovernanceReport, KmsStatusReport } from '../../object/admin/governance-admin.ts';
import { bucketGovernanceView, kmsView } from './governance-views.ts';
import { registerQuotaCommands } from './quota-commands.ts';
import { notifyView, registerNotifyCommands, registerWatchCommand } from './notify-commands.ts';
import { registerReplicateCommands } from './replicate-commands.ts';
import type { NotifyTargetReport } from '../../object/admin/services.ts';
import { decommissionView, type DrainRates, healView, infoView, poolListView, poolStatusView, rebalanceView, snapshotView } from './views.ts';
import { registerIamCommands } from './iam-commands.ts';
import { defaultStep, metricsView } from './metrics-view.ts';
import { HISTORY_POINTS } from '../../telemetry/history.ts';
import { watch } from './watch.ts';
import { EXIT_USAGE } from '../exit.ts';

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_UNREACHABLE = 3;

export interface AdminIo {
  readonly env: NodeJS.ProcessEnv;
  readonly out: NodeJS.WritableStream & { isTTY?: boolean };
  readonly err: NodeJS.WritableStream;
  /** Receives the exit code of the command that ran. */
  setCode(code: number): void;
  /** How https servers are verified (`--insecure`, `SVC_CERTS_DIR`); read when a command runs. */
  tls?: () => ClientTlsOptions;
}

interface JsonOpt {
  json?: boolean;
}

/** What to do next, per error code. */
function nextStep(e: ServerError, alias: string): string | undefined {
  switch (e.code) {
    case 'AccessDenied':
      // The keys were accepted: the identity lacks the permission, and new keys would not help.
      return `the keys of ${alias === 'env' ? 'SVC_ACCESS_KEY' : `alias "${alias}"`} are valid but not allowed this: use the root credential, or attach a policy that allows it to the user (svc admin policy attach ALIAS POLICY --user USER)`;
    case 'SignatureDoesNotMatch':
    case 'InvalidAccessKeyId':
      return alias === 'env'
        ? 'check SVC_ACCESS_KEY and SVC_SECRET_KEY: the root credential, or a user\'s or access key\'s keys'
        : `check the keys of alias "${alias}": svc alias set ${alias} URL ACCESS_KEY SECRET_KEY`;
    case 'RequestTimeTooSkewed':
      return "this machine's clock differs from the server's by more than 15 minutes: synchronize the clocks (NTP)";
    case 'AuthorizationHeaderMalformed':
      return 'the server may use another region: set SVC_REGION to the server\'s region';
    case 'ServiceUnavailable':
      return 'the server is starting or degraded: check `svc ready`, then retry';
    case 'InvalidArgument':
      // The pool routes name their parameter as the API takes it; here it is a flag.
      return e.message.includes('by-id=true') ? 'name the pool as `svc pool list` shows it, or give its index with --by-id' : undefined;
    case 'IDPCommunicationError':
      // Only the idp add/update/enable commands meet it here: the server asked the provider before saving.
      return 'the identity provider configuration was left as it was: correct what the message names (address, TLS keys, lookup bind) and run the command again';
    case 'XSvcAdminNoSuchRoute':
      return 'the server may run an older svc; check `svc admin info` for its version';
    default:
      return undefined;
  }
}

/** Runs one command body and turns its outcome into output and an exit code. */
async function run(io: AdminIo, json: boolean, alias: () => string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    io.setCode(EXIT_OK);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`svc: ${err.message}\n`);
      io.setCode(EXIT_USAGE);
    } else if (err instanceof ServerError) {
      if (json) io.out.write(`${err.body || JSON.stringify({ Code: err.code, Message: err.message })}\n`);
      else {
        io.err.write(`svc: ${err.code}: ${err.message}\n`);
        const next = nextStep(err, alias());
        if (next !== undefined) io.err.write(`next: ${next}\n`);
      }
      io.setCode(EXIT_REFUSED);
    } else if (err instanceof UnreachableError) {
      io.err.write(`svc: ${err.message}\nnext: ${err.next ?? `check the URL (svc alias list) and that the server runs (svc ping ${alias() === 'env' ? '$SVC_ENDPOINT' : alias()})`}\n`);
      io.setCode(EXIT_UNREACHABLE);
    } else throw err;
  }
}

/**
 * Whether the server at `t` accepts its keys, before the alias is saved: one
 * signed ListBuckets. An answer of AccessDenied means the keys were accepted
 * (the identity may not list buckets); a signature, key, clock or region
 * problem and an unreachable server refuse the alias, which `--no-verify`
 * saves anyway.
 */
async function verifyAlias(t: Target, io: AdminIo): Promise<void> {
  try {
    await new AdminClient(t, io.env['SVC_REGION'] || DEFAULT_REGION, io.tls?.()).s3('GET', '/');
  } catch (err) {
    if (err instanceof ServerError && err.code === 'AccessDenied') return;
    if (err instanceof UnreachableError) {
      throw new UnreachableError(`alias "${t.name}" not saved: ${err.message}`, `${err.next ?? 'check the URL and that the server runs'}; --no-verify saves the alias without asking the server`);
    }
    if (err instanceof ServerError) throw new ServerError(err.status, err.code, `alias "${t.name}" not saved: ${err.message}`, err.body);
    throw err;
  }
}

function clientFor(args: readonly string[], io: AdminIo): { client: AdminClient; rest: string[] } {
  const { target, rest } = takeTarget(args, io.env);
  return { client: new AdminClient(target, io.env['SVC_REGION'] || DEFAULT_REGION, io.tls?.()), rest };
}

/** The SVC_ENDPOINT server, all arguments left as they are. */
function envClient(args: readonly string[], io: AdminIo): { client: AdminClient; rest: string[] } {
  const target = envTarget(io.env);
  if (target === undefined) throw new UsageError(`no alias "${args[0]}", and SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY are not set; add an alias with svc alias set NAME URL ACCESS_KEY SECRET_KEY`);
  return { client: new AdminClient(target, io.env['SVC_REGION'] || DEFAULT_REGION, io.tls?.()), rest: [...args] };
}

function poolQuery(pool: string | undefined, byId: boolean | undefined): Record<string, string> {
  if (pool === undefined) return {};
  return byId ? { pool, 'by-id': 'true' } : { pool };
}

function onePool(rest: readonly string[], what: string): string {
  if (rest.length !== 1) throw new UsageError(`${what} takes one pool: its expression exactly as configured, or its index with --by-id (svc pool list shows both)`);
  return rest[0]!;
}

/** The server argument of a follow-up command printed as a hint: the alias, or nothing for the environment's server. */
function targetArg(client: AdminClient): string {
  return client.target.name === 'env' ? '' : ` ${client.target.name}`;
}

function noArgs(rest: readonly string[]): void {
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
}

const TARGET_HELP = 'ALIAS names a server set up with `svc alias set`; without it, SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY are used.';

export function registerAdminCommands(program: Command, io: AdminIo): void {
  const print = (s: string) => io.out.write(`${s}\n`);
  let currentAlias = 'env';
  const aliasOf = () => currentAlias;
  const cli = (args: readonly string[]) => {
    const c = clientFor(args, io);
    currentAlias = c.client.target.name;
    return c;
  };
  const json = <T>(o: JsonOpt, raw: string, value: T, render: (v: T) => string) => print(o.json ? raw : render(value));
  const done = (o: JsonOpt, text: string, extra: Record<string, unknown> = {}) => print(o.json ? JSON.stringify({ status: 'success', ...extra }) : text);
  /** A command whose only argument is the optional alias (options are added by the caller). */
  const aliasCommand = <O extends JsonOpt>(cmd: Command, body: (client: AdminClient, o: O) => Promise<void>) =>
    cmd
      .argument('[alias]')
      .option('--json', "print the server's JSON")
      .action(async (a: string | undefined, o: O) =>
        run(io, !!o.json, aliasOf, async () => {
          const { client, rest } = cli(a === undefined ? [] : [a]);
          noArgs(rest);
          await body(client, o);
        }),
      );

  // ---- alias
  const alias = program.command('alias').description('manage the servers the admin commands talk to ($HOME/.svc/config.json)');
  alias
    .command('set')
    .description('add or replace an alias')
    .argument('<name>')
    .argument('<url>', 'e.g. http://127.0.0.1:9000')
    .argument('<access-key>')
    .argument('<secret-key>')
    .option('--no-verify', 'save it without asking the server whether it accepts the keys')
    .option('--json', 'print JSON')
    .action(async (name: string, url: string, ak: string, sk: string, o: JsonOpt & { verify: boolean }) =>
      run(io, !!o.json, () => name, async () => {
        if (o.verify) await verifyAlias(aliasTarget(name, url, ak, sk), io);
        setAlias(io.env, name, url, ak, sk);
        done(o, `Alias "${name}" set to ${readAliases(io.env).aliases[name]!.url}.`, { alias: name });
      }),
    );
  alias
    .command('list')
    .description('list the aliases (secret keys are not shown)')
    .option('--json', 'print JSON')
    .action(async (o: JsonOpt) =>
      run(io, !!o.json, aliasOf, async () => {
        const a = readAliases(io.env).aliases;
        const rows = Object.entries(a).map(([n, v]) => [n, v.url, v.accessKey] as const);
        print(o.json ? JSON.stringify(rows.map(([name, url, accessKey]) => ({ name, url, accessKey }))) : rows.length === 0 ? 'No aliases; add one with svc alias set NAME URL ACCESS_KEY SECRET_KEY.' : table(['ALIAS', 'URL', 'ACCESS KEY'], rows));
      }),
    );
  alias
    .command('remove')
    .description('remove an alias')
    .argument('<name>')
    .option('--json', 'print JSON')
    .action(async (name: string, o: JsonOpt) =>
      run(io, !!o.json, aliasOf, async () => {
        removeAlias(io.env, name);
        done(o, `Alias "${name}" removed.`, { alias: name });
      }),
    );

  // ---- pool
  const pool = program.command('pool').description('pools and their status');
  aliasCommand(pool.command('list').description('every pool: status, drives, capacity, leader').addHelpText('after', `\n${TARGET_HELP}`), async (client, o) => {
    const r = await client.json<PoolStatus[]>('GET', 'v3/pools/list');
    json(o, r.raw, r.value, poolListView);
  });
  pool
    .command('status')
    .description('one pool')
    .argument('<args...>', '[ALIAS] POOL')
    .option('--by-id', 'POOL is a zero-based index')
    .option('--json', "print the server's JSON")
    .addHelpText('after', `\n${TARGET_HELP}`)
    .action(async (args: string[], o: JsonOpt & { byId?: boolean }) =>
      run(io, !!o.json, aliasOf, async () => {
        const { client, rest } = cli(args);
        const r = await client.json<PoolStatus>('GET', 'v3/pools/status', poolQuery(onePool(rest, 'pool status'), o.byId));
        json(o, r.raw, r.value, poolStatusView);
      }),
    );

  // ---- decommission
  const decom = program.command('decommission').description('drain pools so they can be removed');
  decom
    .command('start')
    .description('queue the decommission of one or more pools (comma-separated)')
    .argument('<args...>', '[ALIAS] POOL[,POOL...]')
    .option('--by-id', 'pools are zero-based indices')
    .option('--json', "print the server's JSON")
    .action(async (args: string[], o: JsonOpt & { byId?: boolean }) =>
      run(io, !!o.json, aliasOf, async () => {
        const { client, rest } = cli(args);
        const pools = onePool(rest, 'decommission start');
        await client.request('POST', 'v3/pools/decommission', poolQuery(pools, o.byId));
        done(o, `Decommission of ${pools} queued; follow it with: svc decommission status${targetArg(client)} --watch`, { operation: 'decommission-start', pools });
      }),
    );
  for (const [name, path, verb] of [
    ['cancel', 'v3/pools/cancel', 'canceled (no data moves back)'],
    ['clear', 'v3/pools/clear', 'cleared'],
  ] as const) {
    decom
      .command(name)
      .description(name === 'cancel' ? 'cancel a queued or active decommission' : 'remove a failed or canceled decommission entry')
      .argument('<args...>', '[ALIAS] POOL')
      .option('--by-id', 'POOL is a zero-based index')
      .option('--json', "print the server's JSON")
      .action(async (args: string[], o: JsonOpt & { byId?: boolean }) =>
        run(io, !!o.json, aliasOf, async () => {
          const { client, rest } = cli(args);
          const p = onePool(rest, `decommission ${name}`);
          const r = await client.request('POST', path, poolQuery(p, o.byId));
          done(o, `Decommission of ${p} ${verb}${r.node !== undefined ? ` (by ${r.node}, the pool's leader)` : ''}.`, { operation: `decommission-${name}`, pool: p, node: r.node });
        }),
      );
  }
  decom
    .command('status')
    .description('decommission progress of every pool, or of one')
    .argument('[args...]', '[ALIAS] [POOL]')
    .option('--by-id', 'POOL is a zero-based index')
    .option('--watch', 'redraw until no decommission is queued or running')
    .option('--interval <seconds>', 'seconds between --watch refreshes', '2')
    .option('--json', "print the server's JSON")
    .action(async (args: string[], o: JsonOpt & { byId?: boolean; watch?: boolean; interval: string }) =>
      run(io, !!o.json, aliasOf, async () => {
        const { client, rest } = cli(args);
        if (rest.length > 1) throw new UsageError('decommission status takes at most one pool');
        const query = poolQuery(rest[0], o.byId);
        let last: { at: number; moved: Map<number, { bytes: number; objects: number }> } | undefined;
        const frame = async () => {
          const r = await client.json<DecommissionStatusReport>('GET', 'v3/decommission/status', query);
          const now = Date.now();
          const rates: Record<number, { bytes: number; objects: number }> = {};
          const moved = new Map(r.value.pools.map((p) => [p.id, { bytes: p.decommissionInfo.bytesDecommissioned, objects: p.decommissionInfo.objectsDecommissioned }]));
          if (last !== undefined && now > last.at) {
            for (const [id, m] of moved) {
              const prev = last.moved.get(id) ?? m;
              rates[id] = { bytes: ((m.bytes - prev.bytes) * 1000) / (now - last.at), objects: ((m.objects - prev.objects) * 1000) / (now - last.at) };
            }
          }
          last = { at: now, moved };
          return {
            text: o.json ? r.raw : decommissionView(r.value, rates as DrainRates),
            done: !r.value.pools.some((p) => p.status === 'queued' || p.status === 'running'),
          };
        };
        await watch(io.out, frame, { watch: !!o.watch, intervalMs: intervalMs(o.interval) });
      }),
    );

  // ---- rebalance (and its alias group `expand`)
  for (const group of ['rebalance', 'expand'] as const) {
    const g = program.command(group).description(group === 'rebalance' ? 'spread objects across pools after an expansion' : 'alias of `svc rebalance`');
    aliasCommand(g.command('start').description('start a rebalance'), async (client, o) => {
      const r = await client.json<{ id: string }>('POST', 'v3/rebalance/start');
      json(o, r.raw, r.value, (v) => `Rebalance ${v.id} started; follow it with: svc ${group} status${targetArg(client)} --watch`);
    });
    aliasCommand<JsonOpt & { watch?: boolean; interval: string }>(
      g
        .command('status')
        .description('per-pool rebalance progress')
        .option('--watch', 'redraw until the rebalance is no longer running')
        .option('--interval <seconds>', 'seconds between --watch refreshes', '2'),
      async (client, o) => {
        const frame = async () => {
          const r = await client.json<RebalanceStatus>('GET', 'v3/rebalance/status');
          return { text: o.json ? r.raw : rebalanceView(r.value), done: r.value.status !== 'running' && r.value.status !== 'stopping' };
        };
        await watch(io.out, frame, { watch: !!o.watch, intervalMs: intervalMs(o.interval) });
      },
    );
    aliasCommand(g.command('stop').description('stop a running rebalance (moves already made are kept)'), async (client, o) => {
      await client.request('POST', 'v3/rebalance/stop');
      done(o, 'Rebalance stopped (or none was running).', { operation: 'rebalance-stop' });
    });
  }

  // ---- heal
  const heal = program.command('heal').description('heal the cluster, a bucket or a prefix');
  const healPath = (o: { bucket?: string; prefix?: string }) => {
    if (o.prefix !== undefined && o.bucket === undefined) throw new UsageError('--prefix needs --bucket');
    return `v3/heal/${o.bucket ?? ''}${o.prefix !== undefined ? `/${o.prefix}` : ''}`;
  };
  type HealOpt = JsonOpt & {
    bucket?: string;
    prefix?: string;
    scanMode?: string;
    remove?: boolean;
    recreate?: boolean;
    dryRun?: boolean;
    clientToken?: string;
    watch?: boolean;
    interval: string;
  };
  const healCommand = (name: 'start' | 'status' | 'stop', description: string) =>
    heal
      .command(name)
      .description(description)
      .option('--bucket <bucket>', 'heal this bucket (default: the whole cluster)')
      .option('--prefix <prefix>', 'heal only objects under this prefix of --bucket');
  /** Follows a heal: each status call pops the new results; the view keeps them all. */
  const followHeal = async (client: AdminClient, o: HealOpt, token: string) => {
    const items: HealResultItem[] = [];
    const frame = async () => {
      const r = await client.json<HealTaskStatus>('POST', healPath(o), { clientToken: token });
      items.push(...(r.value.Items ?? []));
      return { text: o.json ? r.raw : healView(r.value, items), done: r.value.Summary !== 'running' };
    };
    await watch(io.out, frame, { watch: !!o.watch, intervalMs: intervalMs(o.interval) });
  };
  aliasCommand<HealOpt>(
    healCommand('start', 'start a heal (recursive)')
      .option('--scan-mode <mode>', 'normal, or deep (verifies every shard frame)', 'normal')
      .option('--remove', 'remove dangling objects (below read quorum on every version)')
      .option('--recreate', 'recreate missing buckets')
      .option('--dry-run', 'report only; change nothing')
      .option('--watch', 'follow the heal until it ends, with its progress and results')
      .option('--interval <seconds>', 'seconds between --watch refreshes', '1'),
    async (client, o) => {
      if (o.scanMode !== 'normal' && o.scanMode !== 'deep') throw new UsageError('--scan-mode is normal or deep');
      const body = JSON.stringify({ recursive: true, dryRun: !!o.dryRun, remove: !!o.remove, recreate: !!o.recreate, scanMode: o.scanMode === 'deep' ? 2 : 1 });
      const r = await client.json<HealStartSuccess>('POST', healPath(o), {}, body);
      if (o.watch) {
        if (!o.json) print(`Heal started: client token ${r.value.clientToken}`);
        await followHeal(client, o, r.value.clientToken);
        return;
      }
      json(o, r.raw, r.value, (v) => `Heal started: client token ${v.clientToken}\nFollow it with: svc heal status${targetArg(client)} --client-token ${v.clientToken}${o.bucket ? ` --bucket ${o.bucket}` : ''} --watch`);
    },
  );
  aliasCommand<HealOpt>(
    healCommand('status', 'progress and results of a heal (each call shows the results since the previous one)')
      .requiredOption('--client-token <token>', 'the token `svc heal start` printed')
      .option('--watch', 'redraw until the heal ends')
      .option('--interval <seconds>', 'seconds between --watch refreshes', '1'),
    (client, o) => followHeal(client, o, o.clientToken!),
  );
  aliasCommand<HealOpt>(healCommand('stop', 'stop a heal').requiredOption('--client-token <token>', 'the token `svc heal start` printed'), async (client, o) => {
    const r = await client.json<HealStartSuccess>('POST', healPath(o), { clientToken: o.clientToken!, forceStop: 'true' });
    json(o, r.raw, r.value, (v) => `Heal ${v.clientToken} stopped.`);
  });

  // ---- admin info / snapshot
  const admin = program.command('admin').description('cluster and drive information; users, groups, policies and access keys');
  const view = <T>(name: string, description: string, path: string, render: (v: T) => string) =>
    aliasCommand(admin.command(name).description(description), async (client, o) => {
      const r = await client.json<T>('GET', path);
      json(o, r.raw, r.value, render);
    });
  aliasCommand(admin.command('info').description('servers, drives online/offline, usage, notification targets'), async (client, o) => {
    const r = await client.json<ServerInfoMessage>('GET', 'v3/info');
    // The text view adds this node's notification targets (their own route: `svc admin notify list --json`).
    const targets = o.json ? undefined : await client.json<NotifyTargetReport[]>('GET', 'v3/notify/targets').catch(() => undefined);
    json(o, r.raw, r.value, (v) => (targets ? `${infoView(v)}\n\n${notifyView(targets.value)}` : infoView(v)));
  });
  view<ClusterSnapshot>('snapshot', 'nodes, pools, sets and every drive with its format slot', 'v4/cluster/snapshot', snapshotView);
  view<KmsStatusReport>('kms', 'the SSE key store: configured, ready, key ids', 'v3/kms/status', kmsView);
  aliasCommand<JsonOpt & { minutes: string; step?: string }>(
    admin
      .command('metrics')
      .description("the cluster's S3 requests, errors, bytes in and out, raw capacity, heal and scanner activity over the last minutes or hours (every node's own one-minute points, added up)")
      .option('--minutes <n>', `how far back, 1 to ${HISTORY_POINTS} (six hours)`, '60')
      .option('--step <minutes>', 'minutes per table row (default: 1, 2, 5, 10, 15, 30 or 60, whichever keeps the table within 24 rows)')
      .addHelpText('after', `\n${TARGET_HELP}\n--json prints the server's JSON: one point a minute per counter and gauge (docs/admin-api.md, GET /svc/admin/v4/metrics/history).`),
    async (client, o) => {
      const minutes = wholeNumber(o.minutes, '--minutes', HISTORY_POINTS);
      const step = o.step === undefined ? defaultStep(minutes) : wholeNumber(o.step, '--step', HISTORY_POINTS);
      const r = await client.json<MetricsHistoryReport>('GET', 'v4/metrics/history', { minutes: String(minutes) });
      json(o, r.raw, r.value, (v) => metricsView(v, step));
    },
  );
  const adminDeps = {
    env: io.env,
    print,
    ...(io.tls !== undefined ? { tls: io.tls } : {}),
    run: (json: boolean, body: (remember: (alias: string) => void) => Promise<void>) =>
      run(io, json, aliasOf, () =>
        body((name) => {
          currentAlias = name;
        }),
      ),
  };
  registerIamCommands(admin, adminDeps);
  registerQuotaCommands(admin, adminDeps);
  registerNotifyCommands(admin, adminDeps);
  registerWatchCommand(program, adminDeps);
  registerReplicateCommands(program, adminDeps);

  // ---- bucket governance
  const bucket = program.command('bucket').description('per-bucket data governance settings');
  bucket
    .command('info')
    .description('versioning, object lock (default retention), default encryption and lifecycle rules of every bucket, or of one')
    .argument('[args...]', '[ALIAS] [BUCKET]')
    .option('--json', "print the server's JSON")
    .addHelpText('after', `\n${TARGET_HELP}`)
    .action(async (args: string[], o: JsonOpt) =>
      run(io, !!o.json, aliasOf, async () => {
        // One argument: an alias when one has that name, else a bucket of the SVC_ENDPOINT server.
        const lone = args.length === 1 && readAliases(io.env).aliases[args[0]!] === undefined;
        const { client, rest } = lone ? envClient(args, io) : cli(args);
        if (rest.length > 1) throw new UsageError('bucket info takes at most one bucket');
        const r = await client.json<BucketGovernanceReport>('GET', 'v3/bucket/governance', rest[0] !== undefined ? { bucket: rest[0] } : {});
        json(o, r.raw, r.value, bucketGovernanceView);
      }),
    );
}

function wholeNumber(s: string, option: string, max: number): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || n > max) throw new UsageError(`${option} is a whole number from 1 to ${max}`);
  return n;
}

function intervalMs(s: string): number {
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0.2 || n > 3600) throw new UsageError('--interval is a number of seconds between 0.2 and 3600');
  return n * 1000;
}

/**
 * The identity groups of `svc admin`, shaped like `mc admin`'s:
 *
 *   svc admin user add|remove|enable|disable|info ALIAS USER ...   user add ALIAS ACCESSKEY SECRETKEY
 *   svc admin user list ALIAS
 *   svc admin group add ALIAS GROUP MEMBER...   group remove ALIAS GROUP [MEMBER...]   group list|info
 *   svc admin policy create ALIAS POLICY FILE | remove | list | info ALIAS POLICY
 *   svc admin policy attach|detach ALIAS POLICY [POLICY...] --user U | --group G
 *   svc admin accesskey create ALIAS [USER] [--access-key K --secret-key S --policy FILE --name N --description D --expiry 24h|DATE]
 *   svc admin accesskey list ALIAS [USER]   accesskey info|remove|enable|disable ALIAS ACCESSKEY
 *   svc admin idp openid|ldap add|update ALIAS [CFG_NAME] KEY=VALUE...   idp openid|ldap remove|info|enable|disable ALIAS [CFG_NAME]   idp openid|ldap list ALIAS
 *   svc admin idp ldap policy attach|detach ALIAS POLICY [POLICY...] --user DN | --group DN   idp ldap policy entities ALIAS
 *   svc admin idp ldap accesskey create ALIAS [--ldap-user NAME|DN] [--policy FILE --name N --description D --expiry 24h|DATE]
 *   svc admin idp ldap accesskey list ALIAS [--ldap-user NAME|DN]   (info|remove|enable|disable: svc admin accesskey ...)
 *
 * They call the identity routes with madmin's bodies (secrets encrypted
 * with the alias's secret key). ALIAS may be left out when SVC_ENDPOINT,
 * SVC_ACCESS_KEY and SVC_SECRET_KEY are set. Every command takes `--json`.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ClientTlsOptions } from '../client-tls.ts';
import { AdminClient, DEFAULT_REGION } from './client.ts';
import { envTarget, readAliases, UsageError } from './config.ts';
import { table } from './format.ts';
import { encryptData } from '../../iam/madmin-crypto.ts';

export interface IamCommandDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly print: (s: string) => void;
  /** Runs a command body with the shared error handling and exit codes. */
  readonly run: (json: boolean, body: (remember: (alias: string) => void) => Promise<void>) => Promise<void>;
  /** How https servers are verified (`--insecure`, `SVC_CERTS_DIR`); read when a command runs. */
  readonly tls?: () => ClientTlsOptions;
}

interface JsonOpt {
  json?: boolean;
}

/** ALIAS (an alias that exists) then the rest; or the SVC_ENDPOINT server and every argument. */
export function target(args: readonly string[], env: NodeJS.ProcessEnv, tls?: ClientTlsOptions): { client: AdminClient; rest: string[] } {
  const first = args[0];
  const region = env['SVC_REGION'] || DEFAULT_REGION;
  if (first !== undefined) {
    const a = readAliases(env).aliases[first];
    if (a !== undefined) return { client: new AdminClient({ name: first, ...a }, region, tls), rest: args.slice(1) };
  }
  const t = envTarget(env);
  if (t === undefined) throw new UsageError(`no alias "${first ?? ''}", and SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY are not set; add one with svc alias set NAME URL ACCESS_KEY SECRET_KEY`);
  return { client: new AdminClient(t, region, tls), rest: [...args] };
}

export function exactly(rest: readonly string[], n: number, usage: string): string[] {
  if (rest.length !== n) throw new UsageError(`usage: ${usage}`);
  return [...rest];
}

/** `24h`, `30d`, `90m` from now, or an RFC 3339 time. */
export function parseExpiry(s: string, now = Date.now()): string {
  const m = /^(\d+)(m|h|d)$/.exec(s);
  if (m) return new Date(now + Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd']).toISOString();
  const t = Date.parse(s);
  if (!Number.isFinite(t)) throw new UsageError(`--expiry takes a duration (90m, 24h, 30d) or an RFC 3339 time, not "${s}"`);
  return new Date(t).toISOString();
}

/** The options of the commands that create an access key (for a user, for an LDAP user). */
type CreateKeyOpt = JsonOpt & { accessKey?: string; secretKey?: string; policy?: string; name?: string; description?: string; expiry?: string };

function keyOptions(c: Command): void {
  c.option('--access-key <key>', 'choose the access key (default: generated)')
    .option('--secret-key <key>', 'choose the secret key (default: generated)')
    .option('--policy <file>', 'a policy narrowing the access key to less than its user may do')
    .option('--name <name>', 'a name for it')
    .option('--description <text>', 'a description')
    .option('--expiry <when>', 'expires after a duration (90m, 24h, 30d) or at an RFC 3339 time');
}

/** Creates an access key through `route` (madmin's encrypted add-service-account body) and prints it; the secret is shown this once. */
async function createAccessKey(c: AdminClient, json: (o: JsonOpt, value: unknown, text: string) => void, route: string, targetUser: string | undefined, o: CreateKeyOpt): Promise<void> {
  const body = {
    ...(targetUser !== undefined ? { targetUser } : {}),
    ...(o.accessKey !== undefined ? { accessKey: o.accessKey } : {}),
    ...(o.secretKey !== undefined ? { secretKey: o.secretKey } : {}),
    ...(o.policy !== undefined ? { policy: JSON.parse(readPolicyFile(o.policy)) as unknown } : {}),
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.expiry !== undefined ? { expiration: parseExpiry(o.expiry) } : {}),
  };
  const r = await c.encrypted('PUT', route, {}, body, true);
  const cred = (r.value as { credentials: { accessKey: string; secretKey: string; expiration: string } }).credentials;
  json(o, cred, `Access Key: ${cred.accessKey}\nSecret Key: ${cred.secretKey}\nExpiration: ${cred.expiration.startsWith('0001') ? 'no expiry' : cred.expiration}\n(the secret key is not shown again)`);
}

function readPolicyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the policy file ${path}: ${(err as Error).message}`);
  }
}

interface UserInfo {
  policyName?: string;
  status: string;
  memberOf?: string[];
}

interface AccessKeyInfo {
  parentUser: string;
  accountStatus: string;
  accessKey: string;
  name: string;
  description: string;
  expiration: string | null;
  impliedPolicy: boolean;
  policy?: string;
  /** Why the node disabled it (an LDAP user no longer found). */
  disabledReason?: string;
}

export function registerIamCommands(admin: Command, d: IamCommandDeps): void {
  const json = (o: JsonOpt, value: unknown, text: string) => d.print(o.json ? JSON.stringify(value) : text);
  const done = (o: JsonOpt, text: string, extra: Record<string, unknown>) => json(o, { status: 'success', ...extra }, text);
  const cmd = <O extends JsonOpt>(parent: Command, name: string, description: string, usage: string, body: (client: AdminClient, rest: string[], o: O) => Promise<void>) =>
    parent
      .command(name)
      .description(description)
      .argument('[args...]', usage)
      .option('--json', 'print JSON')
      .action(async (args: string[], o: O) =>
        d.run(!!o.json, async (remember) => {
          const { client, rest } = target(args, d.env, d.tls?.());
          remember(client.target.name);
          await body(client, rest, o);
        }),
      );

  // ---- user
  const user = admin.command('user').description('users: an access key and secret key, enabled or disabled, with policies');
  cmd(user, 'add', 'add a user, or change its secret key', 'ALIAS ACCESSKEY SECRETKEY', async (c, rest, o) => {
    const [ak, sk] = exactly(rest, 2, 'svc admin user add ALIAS ACCESSKEY SECRETKEY');
    await c.encrypted('PUT', 'v3/add-user', { accessKey: ak! }, { secretKey: sk, status: 'enabled' }, false);
    done(o, `Added user \`${ak}\` successfully.`, { accessKey: ak });
  });
  cmd(user, 'remove', 'remove a user and its access keys', 'ALIAS USER', async (c, rest, o) => {
    const [ak] = exactly(rest, 1, 'svc admin user remove ALIAS USER');
    await c.request('DELETE', 'v3/remove-user', { accessKey: ak! });
    done(o, `Removed user \`${ak}\` successfully.`, { accessKey: ak });
  });
  for (const [name, status] of [
    ['enable', 'enabled'],
    ['disable', 'disabled'],
  ] as const) {
    cmd(user, name, `${name} a user (a disabled user's requests, access keys and sessions are refused)`, 'ALIAS USER', async (c, rest, o) => {
      const [ak] = exactly(rest, 1, `svc admin user ${name} ALIAS USER`);
      await c.request('PUT', 'v3/set-user-status', { accessKey: ak!, status });
      done(o, `${name === 'enable' ? 'Enabled' : 'Disabled'} user \`${ak}\` successfully.`, { accessKey: ak, userStatus: status });
    });
  }
  cmd(user, 'list', 'every user with its status and policies', 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin user list ALIAS');
    const r = await c.encryptedAnswer<Record<string, UserInfo>>('v3/list-users');
    const rows = Object.entries(r.value).map(([n, u]) => [u.status, n, u.policyName ?? '', (u.memberOf ?? []).join(',')] as const);
    json(o, Object.entries(r.value).map(([accessKey, u]) => ({ accessKey, ...u })), rows.length === 0 ? 'No users.' : table(['STATUS', 'ACCESS KEY', 'POLICIES', 'GROUPS'], rows));
  });
  cmd(user, 'info', "a user's status, policies and groups", 'ALIAS USER', async (c, rest, o) => {
    const [ak] = exactly(rest, 1, 'svc admin user info ALIAS USER');
    const r = await c.json<UserInfo>('GET', 'v3/user-info', { accessKey: ak! });
    json(o, { accessKey: ak, ...r.value }, `AccessKey: ${ak}\nStatus: ${r.value.status}\nPolicyName: ${r.value.policyName ?? ''}\nMemberOf: ${(r.value.memberOf ?? []).join(', ')}`);
  });

  // ---- group
  const group = admin.command('group').description('groups of users; policies attached to a group apply to its members');
  cmd(group, 'add', 'add users to a group (creating it)', 'ALIAS GROUP MEMBER...', async (c, rest, o) => {
    if (rest.length < 2) throw new UsageError('usage: svc admin group add ALIAS GROUP MEMBER...');
    const [g, ...members] = rest;
    await c.request('PUT', 'v3/update-group-members', {}, JSON.stringify({ group: g, members, isRemove: false }));
    done(o, `Added members ${members.map((m) => `\`${m}\``).join(', ')} to group \`${g}\` successfully.`, { groupName: g, members });
  });
  cmd(group, 'remove', 'remove users from a group; without users, remove the (empty) group', 'ALIAS GROUP [MEMBER...]', async (c, rest, o) => {
    if (rest.length < 1) throw new UsageError('usage: svc admin group remove ALIAS GROUP [MEMBER...]');
    const [g, ...members] = rest;
    await c.request('PUT', 'v3/update-group-members', {}, JSON.stringify({ group: g, members, isRemove: true }));
    done(o, members.length === 0 ? `Removed group \`${g}\` successfully.` : `Removed members ${members.map((m) => `\`${m}\``).join(', ')} from group \`${g}\` successfully.`, { groupName: g, members });
  });
  cmd(group, 'list', 'every group', 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin group list ALIAS');
    const r = await c.json<string[]>('GET', 'v3/groups');
    json(o, r.value, r.value.length === 0 ? 'No groups.' : r.value.join('\n'));
  });
  cmd(group, 'info', "a group's members, status and policies", 'ALIAS GROUP', async (c, rest, o) => {
    const [g] = exactly(rest, 1, 'svc admin group info ALIAS GROUP');
    const r = await c.json<{ name: string; status: string; members: string[]; policy: string }>('GET', 'v3/group', { group: g! });
    json(o, r.value, `Group: ${r.value.name}\nStatus: ${r.value.status}\nPolicy: ${r.value.policy}\nMembers: ${r.value.members.join(', ')}`);
  });
  for (const [name, status] of [
    ['enable', 'enabled'],
    ['disable', 'disabled'],
  ] as const) {
    cmd(group, name, `${name} a group (a disabled group's policies stop applying)`, 'ALIAS GROUP', async (c, rest, o) => {
      const [g] = exactly(rest, 1, `svc admin group ${name} ALIAS GROUP`);
      await c.request('PUT', 'v3/set-group-status', { group: g!, status });
      done(o, `${name === 'enable' ? 'Enabled' : 'Disabled'} group \`${g}\` successfully.`, { groupName: g, groupStatus: status });
    });
  }

  // ---- policy
  const policy = admin.command('policy').description('IAM policies (canned: readonly, readwrite, writeonly, diagnostics, consoleAdmin)');
  cmd(policy, 'create', 'create or replace a policy from a JSON file', 'ALIAS POLICY FILE', async (c, rest, o) => {
    const [name, file] = exactly(rest, 2, 'svc admin policy create ALIAS POLICY FILE');
    await c.request('PUT', 'v3/add-canned-policy', { name: name! }, readPolicyFile(file!));
    done(o, `Created policy \`${name}\` successfully.`, { policy: name });
  });
  cmd(policy, 'remove', 'remove a policy (detach it everywhere first)', 'ALIAS POLICY', async (c, rest, o) => {
    const [name] = exactly(rest, 1, 'svc admin policy remove ALIAS POLICY');
    await c.request('DELETE', 'v3/remove-canned-policy', { name: name! });
    done(o, `Removed policy \`${name}\` successfully.`, { policy: name });
  });
  cmd(policy, 'list', 'every policy', 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin policy list ALIAS');
    const r = await c.json<Record<string, unknown>>('GET', 'v3/list-canned-policies');
    json(o, Object.keys(r.value).map((p) => ({ policy: p })), Object.keys(r.value).join('\n'));
  });
  cmd(policy, 'info', 'one policy document', 'ALIAS POLICY', async (c, rest, o) => {
    const [name] = exactly(rest, 1, 'svc admin policy info ALIAS POLICY');
    const r = await c.json<{ PolicyName: string; Policy: unknown }>('GET', 'v3/info-canned-policy', { name: name!, v: '2' });
    json(o, r.value, JSON.stringify(r.value.Policy, null, 2));
  });
  attachCommands(cmd, json, policy, { route: 'v3/idp/builtin/policy', usage: 'svc admin policy', user: 'USER', group: 'GROUP', what: '' });

  // ---- access keys
  const ak = admin.command('accesskey').description("access keys (service accounts) of a user: its rights, optionally narrowed by a policy, with an expiry");
  const akCreate = cmd<CreateKeyOpt>(ak, 'create', 'create an access key for USER (default: yourself); the secret key is shown once', 'ALIAS [USER]', async (c, rest, o) => {
    if (rest.length > 1) throw new UsageError('usage: svc admin accesskey create ALIAS [USER] [--policy FILE] [--expiry 24h]');
    await createAccessKey(c, json, 'v3/add-service-account', rest[0], o);
  });
  keyOptions(akCreate);
  cmd(ak, 'list', "a user's access keys (default: your own)", 'ALIAS [USER]', async (c, rest, o) => {
    if (rest.length > 1) throw new UsageError('usage: svc admin accesskey list ALIAS [USER]');
    const r = await c.encryptedAnswer<{ accounts: AccessKeyInfo[] }>('v3/list-service-accounts', rest[0] !== undefined ? { user: rest[0] } : {});
    const rows = r.value.accounts.map((a) => [a.accessKey, a.parentUser || '(root)', a.accountStatus, a.expiration ?? 'no expiry', a.name] as const);
    json(o, r.value.accounts, rows.length === 0 ? (rest[0] !== undefined ? `No access keys of ${rest[0]}.` : `No access keys of your own (${c.target.accessKey}); svc admin accesskey list ALIAS USER lists a user's.`) : table(['ACCESS KEY', 'USER', 'STATUS', 'EXPIRES', 'NAME'], rows));
  });
  cmd(ak, 'info', 'one access key', 'ALIAS ACCESSKEY', async (c, rest, o) => {
    const [key] = exactly(rest, 1, 'svc admin accesskey info ALIAS ACCESSKEY');
    const r = await c.encryptedAnswer<AccessKeyInfo>('v3/info-service-account', { accessKey: key! });
    json(o, r.value, `AccessKey: ${key}\nParentUser: ${r.value.parentUser || '(root)'}\nStatus: ${r.value.accountStatus}${r.value.disabledReason ? ` (${r.value.disabledReason})` : ''}\nExpiration: ${r.value.expiration ?? 'no expiry'}\nPolicy: ${r.value.impliedPolicy ? "implied (the user's)" : r.value.policy}`);
  });
  cmd(ak, 'remove', 'remove an access key (its next request is refused)', 'ALIAS ACCESSKEY', async (c, rest, o) => {
    const [key] = exactly(rest, 1, 'svc admin accesskey remove ALIAS ACCESSKEY');
    await c.request('DELETE', 'v3/delete-service-account', { accessKey: key! });
    done(o, `Removed access key \`${key}\` successfully.`, { accessKey: key });
  });
  for (const [name, status] of [
    ['enable', 'on'],
    ['disable', 'off'],
  ] as const) {
    cmd(ak, name, `${name} an access key`, 'ALIAS ACCESSKEY', async (c, rest, o) => {
      const [key] = exactly(rest, 1, `svc admin accesskey ${name} ALIAS ACCESSKEY`);
      await c.encrypted('POST', 'v3/update-service-account', { accessKey: key! }, { newStatus: status }, false);
      done(o, `${name === 'enable' ? 'Enabled' : 'Disabled'} access key \`${key}\` successfully.`, { accessKey: key, accountStatus: status });
    });
  }

  registerIdpCommands(admin, cmd, json, done);
}

type Cmd = <O extends JsonOpt>(parent: Command, name: string, description: string, usage: string, body: (client: AdminClient, rest: string[], o: O) => Promise<void>) => Command;

/** `key=value` arguments as madmin's configuration text (every value quoted, so spaces and quotes survive). */
export function configText(args: readonly string[]): string {
  return args
    .map((a) => {
      const m = /^([A-Za-z0-9_]+)=(.*)$/s.exec(a);
      if (m === null) throw new UsageError(`"${a}" is not KEY=VALUE`);
      return `${m[1]}="${m[2]!.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    })
    .join(' ');
}

/** [CFG_NAME] KEY=VALUE...: the name when the first argument is not a pair (default `_`, the one configuration). */
function nameAndPairs(rest: readonly string[]): { name: string; pairs: string[] } {
  const named = rest[0] !== undefined && !rest[0].includes('=');
  return { name: named ? rest[0]! : '_', pairs: rest.slice(named ? 1 : 0) };
}

interface IdpConfigInfo {
  type: string;
  name: string;
  info: { key: string; value: string }[];
}

function registerIdpCommands(admin: Command, cmd: Cmd, json: (o: JsonOpt, value: unknown, text: string) => void, done: (o: JsonOpt, text: string, extra: Record<string, unknown>) => void): void {
  const idp = admin.command('idp').description('external identity providers behind STS (AssumeRoleWithWebIdentity, AssumeRoleWithLDAPIdentity)');
  for (const [kind, title] of [
    ['openid', 'OpenID Connect'],
    ['ldap', 'LDAP'],
  ] as const) {
    const group = idp.command(kind).description(`the ${title} provider (one per deployment; its configuration is in force at once on every node)`);
    const path = (name: string) => `v3/idp-config/${kind}/${encodeURIComponent(name)}`;
    const keys = kind === 'openid' ? 'config_url=URL client_id=ID [client_secret=S] [claim_name=policy] [role_policy=P]' : 'server_addr=HOST:PORT lookup_bind_dn=DN lookup_bind_password=PW user_dn_search_base_dn=DN user_dn_search_filter=F [group_search_base_dn=DN group_search_filter=F] [server_starttls=on|server_insecure=on] [tls_skip_verify=on]';
    for (const [name, method, verb] of [
      ['add', 'PUT', 'Added'],
      ['update', 'POST', 'Updated'],
    ] as const) {
      cmd(group, name, name === 'add' ? `configure the ${title} provider` : `change keys of the ${title} provider (keys not given keep their values)`, `ALIAS [CFG_NAME] ${keys}`, async (c, rest, o) => {
        const { name: cfgName, pairs } = nameAndPairs(rest);
        if (pairs.length === 0) throw new UsageError(`usage: svc admin idp ${kind} ${name} ALIAS [CFG_NAME] KEY=VALUE...  (${keys})`);
        await c.request(method, path(cfgName), {}, await encryptData(c.target.secretKey, Buffer.from(configText(pairs))), 'application/octet-stream');
        done(o, `${verb} ${title} configuration \`${cfgName}\` successfully.`, { type: kind, name: cfgName });
      });
    }
    for (const [name, value] of [
      ['enable', 'on'],
      ['disable', 'off'],
    ] as const) {
      cmd(group, name, name === 'enable' ? `turn the ${title} provider back on` : `turn the ${title} provider off, keeping its configuration (its STS calls are refused)`, 'ALIAS [CFG_NAME]', async (c, rest, o) => {
        if (rest.length > 1) throw new UsageError(`usage: svc admin idp ${kind} ${name} ALIAS [CFG_NAME]`);
        const cfgName = rest[0] ?? '_';
        await c.request('POST', path(cfgName), {}, await encryptData(c.target.secretKey, Buffer.from(`enable=${value}`)), 'application/octet-stream');
        done(o, `${name === 'enable' ? 'Enabled' : 'Disabled'} ${title} configuration \`${cfgName}\` successfully.`, { type: kind, name: cfgName, enabled: value === 'on' });
      });
    }
    cmd(group, 'remove', `remove the ${title} provider (its STS calls are refused from then on)`, 'ALIAS [CFG_NAME]', async (c, rest, o) => {
      if (rest.length > 1) throw new UsageError(`usage: svc admin idp ${kind} remove ALIAS [CFG_NAME]`);
      const cfgName = rest[0] ?? '_';
      await c.request('DELETE', path(cfgName));
      done(o, `Removed ${title} configuration \`${cfgName}\` successfully.`, { type: kind, name: cfgName });
    });
    cmd(group, 'info', `the ${title} provider's configuration (secrets are never shown)`, 'ALIAS [CFG_NAME]', async (c, rest, o) => {
      if (rest.length > 1) throw new UsageError(`usage: svc admin idp ${kind} info ALIAS [CFG_NAME]`);
      const r = await c.encryptedAnswer<IdpConfigInfo>(path(rest[0] ?? '_'));
      json(o, r.value, table(['KEY', 'VALUE'], r.value.info.map((l) => [l.key, l.value] as const)));
    });
    cmd(group, 'list', `the ${title} configurations`, 'ALIAS', async (c, rest, o) => {
      exactly(rest, 0, `svc admin idp ${kind} list ALIAS`);
      const r = await c.encryptedAnswer<{ type: string; name: string; enabled: boolean }[]>(`v3/idp-config/${kind}`);
      json(o, r.value, r.value.length === 0 ? `No ${title} configuration.` : table(['NAME', 'TYPE', 'ENABLED'], r.value.map((l) => [l.name, l.type, l.enabled ? 'on' : 'off'] as const)));
    });
  }
  // policies of LDAP users and groups, by distinguished name
  const ldapPolicy = idp.commands.find((g) => g.name() === 'ldap')!.command('policy').description('policies attached to LDAP users and groups (by DN)');
  attachCommands(cmd, json, ldapPolicy, { route: 'v3/idp/ldap/policy', usage: 'svc admin idp ldap policy', user: 'DN', group: 'DN', what: 'LDAP ' });
  type EntitiesOpt = JsonOpt & { user?: string; group?: string; policy?: string };
  cmd<EntitiesOpt>(ldapPolicy, 'entities', 'which LDAP users and groups hold which policies', 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin idp ldap policy entities ALIAS [--user DN] [--group DN] [--policy POLICY]');
    const q = { ...(o.user !== undefined ? { user: o.user } : {}), ...(o.group !== undefined ? { group: o.group } : {}), ...(o.policy !== undefined ? { policy: o.policy } : {}) };
    const r = await c.encryptedAnswer<{ userMappings?: { user: string; policies: string[] }[]; groupMappings?: { group: string; policies: string[] }[] }>('v3/idp/ldap/policy-entities', q);
    const rows = [...(r.value.userMappings ?? []).map((m) => ['user', m.user, m.policies.join(',')] as const), ...(r.value.groupMappings ?? []).map((m) => ['group', m.group, m.policies.join(',')] as const)];
    json(o, r.value, rows.length === 0 ? 'No LDAP policy mappings.' : table(['KIND', 'DN', 'POLICIES'], rows));
  })
    .option('--user <dn>', "one LDAP user's mapping")
    .option('--group <dn>', "one LDAP group's mapping")
    .option('--policy <policy>', 'who holds one policy');

  // access keys of LDAP users (info, remove, enable, disable: `svc admin accesskey`, as for any access key)
  const ldapKeys = idp.commands.find((g) => g.name() === 'ldap')!.command('accesskey').description("access keys of LDAP users: the policies mapped to the user's DN and groups, optionally narrowed by a policy, with an expiry");
  type LdapCreateOpt = CreateKeyOpt & { ldapUser?: string };
  const ldapCreate = cmd<LdapCreateOpt>(ldapKeys, 'create', 'create an access key for an LDAP user; the secret key is shown once', 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin idp ldap accesskey create ALIAS [--ldap-user NAME|DN] [--policy FILE] [--expiry 24h]');
    await createAccessKey(c, json, 'v3/idp/ldap/add-service-account', o.ldapUser, o);
  }).option('--ldap-user <user>', "the LDAP user: a user name or DN (none: the caller's own, when it is an LDAP user's STS session: SVC_ACCESS_KEY, SVC_SECRET_KEY and SVC_SESSION_TOKEN from AssumeRoleWithLDAPIdentity)");
  keyOptions(ldapCreate);
  type LdapListOpt = JsonOpt & { ldapUser?: string };
  cmd<LdapListOpt>(ldapKeys, 'list', "an LDAP user's access keys (default: every LDAP user's; an LDAP user's STS session: its own)", 'ALIAS', async (c, rest, o) => {
    exactly(rest, 0, 'svc admin idp ldap accesskey list ALIAS [--ldap-user NAME|DN]');
    const r = await c.encryptedAnswer<{ serviceAccounts?: AccessKeyInfo[]; stsKeys?: AccessKeyInfo[] }>('v3/idp/ldap/list-access-keys', { listType: 'all', ...(o.ldapUser !== undefined ? { userDN: o.ldapUser } : {}) });
    const keys = r.value.serviceAccounts ?? [];
    const rows = keys.map((a) => [a.accessKey, a.parentUser, a.accountStatus, a.expiration ?? 'no expiry', a.name] as const);
    json(o, r.value, rows.length === 0 ? `No access keys${o.ldapUser !== undefined ? ` of ${o.ldapUser}` : ''}.` : table(['ACCESS KEY', 'LDAP USER', 'STATUS', 'EXPIRES', 'NAME'], rows));
  }).option('--ldap-user <user>', 'the LDAP user: a user name or DN');
}

/**
 * `attach|detach ALIAS POLICY... --user U | --group G`: madmin's policy
 * association (encrypted `{policies, user | group}` both ways), for the
 * built-in identities and for LDAP distinguished names alike.
 */
function attachCommands(cmd: Cmd, json: (o: JsonOpt, value: unknown, text: string) => void, parent: Command, t: { route: string; usage: string; user: string; group: string; what: string }): void {
  type AttachOpt = JsonOpt & { user?: string; group?: string };
  for (const name of ['attach', 'detach'] as const) {
    cmd<AttachOpt>(parent, name, `${name} policies ${name === 'attach' ? 'to' : 'from'} ${t.what === '' ? 'a user or a group' : `an ${t.what}user or group`}`, 'ALIAS POLICY [POLICY...]', async (c, rest, o) => {
      if (rest.length < 1) throw new UsageError(`usage: ${t.usage} ${name} ALIAS POLICY [POLICY...] --user ${t.user} | --group ${t.group}`);
      if ((o.user === undefined) === (o.group === undefined)) throw new UsageError(`name exactly one of --user ${t.user} or --group ${t.group}`);
      const r = await c.encrypted('POST', `${t.route}/${name}`, {}, { policies: rest, ...(o.user !== undefined ? { user: o.user } : { group: o.group }) }, true);
      const v = r.value as { policiesAttached?: string[]; policiesDetached?: string[] };
      const changed = (name === 'attach' ? v.policiesAttached : v.policiesDetached) ?? [];
      json(o, v, `${name === 'attach' ? 'Attached' : 'Detached'} ${changed.length === 0 ? 'nothing' : changed.join(', ')} ${name === 'attach' ? 'to' : 'from'} ${o.user !== undefined ? `${t.what}user \`${o.user}\`` : `${t.what}group \`${o.group}\``}.`);
    })
      .option(`--user <${t.user.toLowerCase()}>`, `the ${t.what}user${t.user === 'DN' ? ' (its distinguished name)' : ''}`)
      .option(`--group <${t.group.toLowerCase()}>`, `the ${t.what}group${t.group === 'DN' ? ' (its distinguished name)' : ''}`);
  }
}

/**
 * The admin client's targets: aliases in `~/.svc/config.json` (directory
 * 0700, file 0600, written atomically), or the environment (`SVC_ENDPOINT`,
 * `SVC_ACCESS_KEY`, `SVC_SECRET_KEY`, and `SVC_SESSION_TOKEN` for an STS
 * session's keys).
 *
 * How a command finds its server: when its first argument looks like an
 * alias name (a letter, then letters, digits, `_` or `-`) it names an
 * alias; otherwise the environment gives the server. Pool expressions
 * (`/mnt/d{1...4}`, `http://node{1...4}/d{1...2}`) and pool indices never
 * look like alias names, so the two never mix.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ALIAS_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export interface Target {
  /** Alias name, or `env` for the environment. */
  readonly name: string;
  readonly url: string;
  readonly accessKey: string;
  readonly secretKey: string;
  /** Temporary credentials (an STS session's keys): their session token (`SVC_SESSION_TOKEN`). */
  readonly sessionToken?: string;
}

export interface AliasConfig {
  version: 1;
  aliases: Record<string, { url: string; accessKey: string; secretKey: string }>;
}

/** A usage problem: exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function configDir(env: NodeJS.ProcessEnv): string {
  const home = env['HOME'];
  if (home === undefined || home === '') throw new UsageError('HOME is not set: the alias file lives in $HOME/.svc/config.json');
  return join(home, '.svc');
}

export function configPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

export function readAliases(env: NodeJS.ProcessEnv): AliasConfig {
  let text: string;
  try {
    text = readFileSync(configPath(env), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, aliases: {} };
    throw new UsageError(`cannot read ${configPath(env)}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as AliasConfig;
    if (parsed.version !== 1 || typeof parsed.aliases !== 'object' || parsed.aliases === null) throw new Error('unknown layout');
    return parsed;
  } catch (err) {
    throw new UsageError(`${configPath(env)} is not a valid svc config (${(err as Error).message}); fix or remove it and run svc alias set again`);
  }
}

export function writeAliases(env: NodeJS.ProcessEnv, cfg: AliasConfig): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = configPath(env);
  const tmp = `${path}.tmp-${process.pid}`;
  // The file holds secret keys: owner-only from its first byte.
  writeFileSync(tmp, `${JSON.stringify(cfg, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Normalises a server URL (`host:port` → `http://host:port`), refusing anything else. */
export function normaliseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    throw new UsageError(`invalid server URL "${raw}"; expected e.g. http://127.0.0.1:9000`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`server URL "${raw}" must be http:// or https://`);
  if (u.pathname !== '/' || u.search !== '') throw new UsageError(`server URL "${raw}" must not carry a path or query; give only scheme, host and port`);
  return u.origin;
}

/** The alias `name` would be, its name, URL and keys checked (nothing saved). */
export function aliasTarget(name: string, url: string, accessKey: string, secretKey: string): Target {
  if (!ALIAS_NAME.test(name)) throw new UsageError(`alias name "${name}" must start with a letter and hold only letters, digits, "_" and "-"`);
  if (accessKey === '' || secretKey === '') throw new UsageError('the access key and secret key must not be empty');
  return { name, url: normaliseUrl(url), accessKey, secretKey };
}

export function setAlias(env: NodeJS.ProcessEnv, name: string, url: string, accessKey: string, secretKey: string): void {
  const t = aliasTarget(name, url, accessKey, secretKey);
  const cfg = readAliases(env);
  cfg.aliases[name] = { url: t.url, accessKey: t.accessKey, secretKey: t.secretKey };
  writeAliases(env, cfg);
}

export function removeAlias(env: NodeJS.ProcessEnv, name: string): void {
  const cfg = readAliases(env);
  if (cfg.aliases[name] === undefined) throw new UsageError(`no alias "${name}"; svc alias list shows the aliases`);
  delete cfg.aliases[name];
  writeAliases(env, cfg);
}

/** The target from the environment, or undefined when `SVC_ENDPOINT` is unset. */
export function envTarget(env: NodeJS.ProcessEnv): Target | undefined {
  const url = env['SVC_ENDPOINT'];
  if (url === undefined || url === '') return undefined;
  const accessKey = env['SVC_ACCESS_KEY'];
  const secretKey = env['SVC_SECRET_KEY'];
  if (!accessKey || !secretKey) throw new UsageError('SVC_ENDPOINT is set but SVC_ACCESS_KEY or SVC_SECRET_KEY is missing; set all three, or use an alias');
  // an STS session's keys sign with their token (as AWS_SESSION_TOKEN does for the AWS CLI)
  const sessionToken = env['SVC_SESSION_TOKEN'];
  return { name: 'env', url: normaliseUrl(url), accessKey, secretKey, ...(sessionToken ? { sessionToken } : {}) };
}

const NO_TARGET =
  'no server given: name an alias (add one with `svc alias set NAME URL ACCESS_KEY SECRET_KEY`) or set SVC_ENDPOINT, SVC_ACCESS_KEY and SVC_SECRET_KEY';

/**
 * Splits a command's arguments into its target and the rest: a first
 * argument that looks like an alias name is one; otherwise the environment.
 */
export function takeTarget(args: readonly string[], env: NodeJS.ProcessEnv): { target: Target; rest: string[] } {
  const first = args[0];
  if (first !== undefined && ALIAS_NAME.test(first)) {
    const a = readAliases(env).aliases[first];
    if (a === undefined) throw new UsageError(`no alias "${first}"; svc alias list shows the aliases, svc alias set ${first} URL ACCESS_KEY SECRET_KEY adds it`);
    return { target: { name: first, ...a }, rest: args.slice(1) };
  }
  const t = envTarget(env);
  if (t === undefined) throw new UsageError(NO_TARGET);
  return { target: t, rest: [...args] };
}

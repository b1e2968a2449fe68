/**
 * The one parameter validator of the admin API (SPEC Admin API, parameter
 * rules), shared by every route. Pure.
 *
 *  1. `pool` is a pool's command-line expression exactly as configured or,
 *     with `by-id=true`, a zero-based pool index.
 *  2. Status (GET) queries ignore unknown parameters. A known parameter given
 *     twice is ambiguous and refused.
 *  3. Mutation queries refuse unknown and duplicate parameters; `by-id` is
 *     `true` or `false`, nothing else (on every route).
 *  5. Heal: query keys `clientToken`, `forceStart`, `forceStop` only; the
 *     body's `readRepair=true` is refused, `nolock` is forced false; a root
 *     heal needs `recursive=true` or both `pool` and `set`; a bucket heal
 *     without prefix is recursive.
 *  Rebalance start and stop take no query string at all.
 *
 * Rules 4 and 6 depend on persisted state and live in
 * `object/admin/data-movement-rules.ts`.
 */
import { SvcError } from '../../util/errors.ts';
import type { HealOpts } from '../../object/admin/types.ts';
import { validateBucketName } from '../s3/validate.ts';

/** How a route treats its query string. */
export type QueryRule =
  | { readonly kind: 'status'; readonly keys: readonly string[] }
  | { readonly kind: 'mutation'; readonly keys: readonly string[] }
  | { readonly kind: 'none' };

function invalid(message: string): SvcError {
  return new SvcError('InvalidArgument', message);
}

/** Applies rules 2 and 3 (and "no query at all"); returns the known parameters. */
export function validateQuery(pairs: readonly (readonly [string, string])[], rule: QueryRule): Map<string, string> {
  const out = new Map<string, string>();
  if (rule.kind === 'none') {
    if (pairs.length > 0) throw invalid(`this operation takes no query parameters; remove "${pairs.map(([k]) => k).join('", "')}"`);
    return out;
  }
  for (const [k, v] of pairs) {
    const known = rule.keys.includes(k);
    if (!known) {
      if (rule.kind === 'mutation') throw invalid(`unknown query parameter "${k}"; this operation accepts ${rule.keys.length > 0 ? rule.keys.map((x) => `"${x}"`).join(', ') : 'none'}`);
      continue;
    }
    if (out.has(k)) throw invalid(`query parameter "${k}" is given more than once`);
    out.set(k, v);
  }
  return out;
}

/** Rule 3 for `by-id` (absent = false). */
export function parseById(v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw invalid(`by-id must be "true" or "false", not "${v}"`);
}

function poolList(cmdlines: readonly string[]): string {
  return cmdlines.map((c, i) => `${i} = ${c}`).join(', ');
}

/** Rule 1: one pool expression → its zero-based index. */
export function resolvePool(expr: string, byId: boolean, cmdlines: readonly string[]): number {
  if (expr === '') throw invalid('the pool parameter is empty; name a pool by its command-line expression, or by index with by-id=true');
  if (byId) {
    const n = /^\d{1,9}$/.test(expr) ? Number(expr) : Number.NaN;
    if (!(n < cmdlines.length)) throw invalid(`specified pool index "${expr}" not found; valid indices are 0 to ${cmdlines.length - 1} (${poolList(cmdlines)})`);
    return n;
  }
  const i = cmdlines.indexOf(expr);
  if (i < 0) throw invalid(`specified pool "${expr}" not found; give the pool's expression exactly as configured (${poolList(cmdlines)}), or its index with by-id=true`);
  return i;
}

/** A required `pool` resolved under rules 1 and 3. */
export function requiredPool(q: Map<string, string>, cmdlines: readonly string[]): number {
  const expr = q.get('pool');
  if (expr === undefined) throw invalid('the pool parameter is required');
  return resolvePool(expr, parseById(q.get('by-id')), cmdlines);
}

/** A `pool=a[,b...]` list (decommission start): each resolved; the batch rules come after. */
export function poolBatch(q: Map<string, string>, cmdlines: readonly string[]): number[] {
  const expr = q.get('pool');
  if (expr === undefined) throw invalid('the pool parameter is required');
  const byId = parseById(q.get('by-id'));
  return expr.split(',').map((e) => resolvePool(e, byId, cmdlines));
}

// ---- heal (rule 5)

export const HEAL_QUERY_KEYS = ['clientToken', 'forceStart', 'forceStop'] as const;

/** What one heal request asks for, after rule 5. */
export type HealRequest =
  | { readonly kind: 'start'; readonly bucket: string; readonly prefix: string; readonly opts: HealOpts; readonly forceStart: boolean }
  | { readonly kind: 'status'; readonly clientToken: string; readonly bucket: string; readonly prefix: string }
  | { readonly kind: 'stop'; readonly clientToken: string; readonly bucket: string; readonly prefix: string };

/** `forceStart` / `forceStop`: present without a value, `true` or `false`. */
function flag(name: string, v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === '' || v === 'true') return true;
  throw invalid(`${name} must be "true" or "false", not "${v}"`);
}

function bodyBool(o: Record<string, unknown>, key: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(`heal body field "${key}" must be a boolean`);
  return v;
}

function bodyIndex(o: Record<string, unknown>, key: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(`heal body field "${key}" must be a non-negative integer`);
  return v;
}

/** `scanMode`: madmin's integers (0 unknown → normal, 1 normal, 2 deep) or RustFS's strings. */
function scanMode(v: unknown): 1 | 2 {
  if (v === undefined || v === null || v === 0 || v === 1 || v === 'normal') return 1;
  if (v === 2 || v === 'deep') return 2;
  throw invalid('heal body field "scanMode" must be 1 or "normal", or 2 or "deep"');
}

export interface HealLayout {
  readonly pools: number;
  readonly setsOf: (pool: number) => number;
}

/**
 * Parses a heal request: `path` is what follows `/heal/` (bucket, then
 * prefix), `q` the validated query, `body` the raw JSON body.
 */
export function parseHealRequest(path: string, q: Map<string, string>, body: Buffer, layout: HealLayout): HealRequest {
  const slash = path.indexOf('/');
  const bucket = slash < 0 ? path : path.slice(0, slash);
  const prefix = slash < 0 ? '' : path.slice(slash + 1);
  if (bucket === '' && prefix !== '') throw invalid('a heal prefix needs a bucket');
  if (bucket !== '') validateBucketName(bucket);
  const token = q.get('clientToken');
  const forceStart = flag('forceStart', q.get('forceStart'));
  const forceStop = flag('forceStop', q.get('forceStop'));
  if (forceStart && forceStop) throw new SvcError('InvalidRequest', 'forceStart and forceStop cannot be used together');
  if (token !== undefined) {
    if (token === '') throw invalid('clientToken is empty');
    if (forceStart) throw new SvcError('InvalidRequest', 'forceStart starts a new heal and takes no clientToken');
    return { kind: forceStop ? 'stop' : 'status', clientToken: token, bucket, prefix };
  }
  if (forceStop) throw new SvcError('InvalidRequest', 'forceStop needs the clientToken of the heal to stop');

  let o: Record<string, unknown> = {};
  const text = body.toString('utf8').trim();
  if (text !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalid('the heal body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('the heal body must be a JSON object');
    o = parsed as Record<string, unknown>;
  }
  if (bodyBool(o, 'readRepair')) throw invalid('readRepair=true is not accepted by the admin heal; read-repair runs by itself on reads');
  const pool = bodyIndex(o, 'pool');
  const set = bodyIndex(o, 'set');
  if (pool !== undefined && pool >= layout.pools) throw invalid(`heal pool ${pool} not found; valid pools are 0 to ${layout.pools - 1}`);
  if (set !== undefined) {
    if (pool === undefined) throw invalid('heal set needs pool');
    if (set >= layout.setsOf(pool)) throw invalid(`heal set ${set} not found in pool ${pool}; valid sets are 0 to ${layout.setsOf(pool) - 1}`);
  }
  let recursive = bodyBool(o, 'recursive');
  if (bucket === '') {
    if (!recursive && (pool === undefined || set === undefined)) {
      throw invalid('a root heal needs recursive=true, or both pool and set to heal one erasure set');
    }
  } else if (prefix === '') {
    recursive = true;
  }
  const opts: HealOpts = {
    recursive,
    dryRun: bodyBool(o, 'dryRun'),
    remove: bodyBool(o, 'remove'),
    recreate: bodyBool(o, 'recreate'),
    scanMode: scanMode(o['scanMode']),
    updateParity: bodyBool(o, 'updateParity'),
    // Accepted, always forced off: admin heals take the namespace lock.
    nolock: false,
    ...(pool !== undefined ? { pool } : {}),
    ...(set !== undefined ? { set } : {}),
  };
  if (o['nolock'] !== undefined && o['nolock'] !== null && typeof o['nolock'] !== 'boolean') throw invalid('heal body field "nolock" must be a boolean');
  return { kind: 'start', bucket, prefix, opts, forceStart };
}

/**
 * The condition operators of the AWS policy language, over a request's
 * context keys. Pure. A condition block holds operators (all must hold); an
 * operator holds keys (all must hold); a key holds values (any may match).
 *
 * Decisions where AWS documents little:
 * - a key absent from the request makes a positive operator false and a
 *   negated one (`StringNotEquals`, `NotIpAddress`, …) true; `…IfExists`
 *   makes any operator true for an absent key; `Null` tests presence;
 * - `ForAnyValue:` / `ForAllValues:` apply to multi-valued keys; without a
 *   qualifier a multi-valued key matches when any of its values does.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { SvcError } from '../util/errors.ts';
import { cidrParts, plainIp } from '../util/ip-set.ts';

/** Context keys of one request, names lower-cased, each with its values. */
export type ConditionContext = ReadonlyMap<string, readonly string[]>;

type Matcher = (actual: string, expected: string) => boolean;

interface OperatorDef {
  match: Matcher;
  negated: boolean;
  /** Validates a policy value at PutBucketPolicy time. */
  valid?: (v: string) => boolean;
}

/**
 * Literal `*` and `?` inside a pattern (from `${*}`, `${?}` or a substituted
 * variable's value): private-use characters no policy text contains, so a
 * user named `a*` matches only itself.
 */
const LIT_STAR = '\uE000';
const LIT_QMARK = '\uE001';

/** A pattern with its escaped literals turned back into plain text. */
export function unescapePattern(s: string): string {
  return s.includes(LIT_STAR) || s.includes(LIT_QMARK) ? s.replaceAll(LIT_STAR, '*').replaceAll(LIT_QMARK, '?') : s;
}

const escapeLiteral = (s: string) => s.replaceAll('*', LIT_STAR).replaceAll('?', LIT_QMARK);

/** `*` any run, `?` one character; everything else literal (escaped literals included). */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const p = ignoreCase ? pattern.toLowerCase() : pattern;
  const v = ignoreCase ? value.toLowerCase() : value;
  const same = (pc: string | undefined, vc: string | undefined) => pc === vc || (pc === LIT_STAR && vc === '*') || (pc === LIT_QMARK && vc === '?');
  // iterative glob with backtracking on the last '*'
  let pi = 0;
  let vi = 0;
  let star = -1;
  let mark = 0;
  while (vi < v.length) {
    if (pi < p.length && (p[pi] === '?' || same(p[pi], v[vi]))) {
      pi++;
      vi++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      mark = vi;
    } else if (star >= 0) {
      pi = star + 1;
      vi = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

function num(s: string): number | undefined {
  if (!/^\s*-?\d+(\.\d+)?\s*$/.test(s)) return undefined;
  return Number(s);
}

function date(s: string): number | undefined {
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

const numeric = (f: (a: number, b: number) => boolean): Matcher => (a, b) => {
  const x = num(a);
  const y = num(b);
  return x !== undefined && y !== undefined && f(x, y);
};
const dated = (f: (a: number, b: number) => boolean): Matcher => (a, b) => {
  const x = date(a);
  const y = date(b);
  return x !== undefined && y !== undefined && f(x, y);
};

function parseCidr(c: string): { net: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [net, bits] = c.trim().split('/');
  if (net === undefined) return undefined;
  const parts = cidrParts(net, bits);
  return parts === undefined ? undefined : { net, ...parts };
}

function ipMatch(actual: string, cidr: string): boolean {
  const c = parseCidr(cidr);
  const ip = plainIp(actual);
  if (!c) return false;
  const fam = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
  if (fam !== c.family) return false;
  const list = new BlockList();
  list.addSubnet(c.net, c.prefix, c.family);
  return list.check(ip, fam);
}

const BASE: Record<string, OperatorDef> = {
  StringEquals: { match: (a, b) => a === b, negated: false },
  StringNotEquals: { match: (a, b) => a === b, negated: true },
  StringEqualsIgnoreCase: { match: (a, b) => a.toLowerCase() === b.toLowerCase(), negated: false },
  StringNotEqualsIgnoreCase: { match: (a, b) => a.toLowerCase() === b.toLowerCase(), negated: true },
  StringLike: { match: (a, b) => wildcardMatch(b, a), negated: false },
  StringNotLike: { match: (a, b) => wildcardMatch(b, a), negated: true },
  NumericEquals: { match: numeric((a, b) => a === b), negated: false, valid: (v) => num(v) !== undefined },
  NumericNotEquals: { match: numeric((a, b) => a === b), negated: true, valid: (v) => num(v) !== undefined },
  NumericLessThan: { match: numeric((a, b) => a < b), negated: false, valid: (v) => num(v) !== undefined },
  NumericLessThanEquals: { match: numeric((a, b) => a <= b), negated: false, valid: (v) => num(v) !== undefined },
  NumericGreaterThan: { match: numeric((a, b) => a > b), negated: false, valid: (v) => num(v) !== undefined },
  NumericGreaterThanEquals: { match: numeric((a, b) => a >= b), negated: false, valid: (v) => num(v) !== undefined },
  DateEquals: { match: dated((a, b) => a === b), negated: false, valid: (v) => date(v) !== undefined },
  DateNotEquals: { match: dated((a, b) => a === b), negated: true, valid: (v) => date(v) !== undefined },
  DateLessThan: { match: dated((a, b) => a < b), negated: false, valid: (v) => date(v) !== undefined },
  DateLessThanEquals: { match: dated((a, b) => a <= b), negated: false, valid: (v) => date(v) !== undefined },
  DateGreaterThan: { match: dated((a, b) => a > b), negated: false, valid: (v) => date(v) !== undefined },
  DateGreaterThanEquals: { match: dated((a, b) => a >= b), negated: false, valid: (v) => date(v) !== undefined },
  Bool: { match: (a, b) => a.toLowerCase() === b.toLowerCase(), negated: false, valid: (v) => /^(true|false)$/i.test(v) },
  IpAddress: { match: ipMatch, negated: false, valid: (v) => parseCidr(v) !== undefined },
  NotIpAddress: { match: ipMatch, negated: true, valid: (v) => parseCidr(v) !== undefined },
  ArnEquals: { match: (a, b) => a === b, negated: false },
  ArnNotEquals: { match: (a, b) => a === b, negated: true },
  ArnLike: { match: (a, b) => wildcardMatch(b, a), negated: false },
  ArnNotLike: { match: (a, b) => wildcardMatch(b, a), negated: true },
};

/** A parsed operator name: `ForAnyValue:StringLikeIfExists` → set qualifier, base, ifExists. */
export interface OperatorName {
  set: 'any' | 'all' | undefined;
  base: string;
  ifExists: boolean;
}

export function parseOperator(name: string): OperatorName | undefined {
  let rest = name;
  let set: OperatorName['set'];
  if (rest.startsWith('ForAnyValue:')) {
    set = 'any';
    rest = rest.slice('ForAnyValue:'.length);
  } else if (rest.startsWith('ForAllValues:')) {
    set = 'all';
    rest = rest.slice('ForAllValues:'.length);
  }
  if (rest === 'Null') return set ? undefined : { set, base: 'Null', ifExists: false };
  const ifExists = rest.endsWith('IfExists');
  if (ifExists) rest = rest.slice(0, -'IfExists'.length);
  return BASE[rest] ? { set, base: rest, ifExists } : undefined;
}

/** A condition block as stored: operator → key → values. */
export type ConditionBlock = Record<string, Record<string, string[]>>;

/** Validates a condition block from a policy document (MalformedPolicy on anything unknown or ill-typed). */
export function validateConditions(raw: unknown): ConditionBlock {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SvcError('MalformedPolicy', 'Condition must be an object.');
  const out: ConditionBlock = {};
  for (const [op, keys] of Object.entries(raw as Record<string, unknown>)) {
    const parsed = parseOperator(op);
    if (!parsed) throw new SvcError('MalformedPolicy', `Invalid Condition type : ${op}`);
    if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) throw new SvcError('MalformedPolicy', `Condition ${op} must map keys to values.`);
    const block: Record<string, string[]> = {};
    for (const [key, v] of Object.entries(keys as Record<string, unknown>)) {
      const values = (Array.isArray(v) ? v : [v]).map((x) => {
        if (typeof x === 'string') return x;
        if (typeof x === 'number' || typeof x === 'boolean') return String(x);
        throw new SvcError('MalformedPolicy', `Condition ${op} on ${key} must hold strings.`);
      });
      if (values.length === 0) throw new SvcError('MalformedPolicy', `Condition ${op} on ${key} has no value.`);
      const def = BASE[parsed.base];
      if (parsed.base === 'Null') {
        if (!values.every((x) => /^(true|false)$/i.test(x))) throw new SvcError('MalformedPolicy', `Null condition on ${key} must be true or false.`);
      } else if (def?.valid && !values.every(def.valid)) {
        throw new SvcError('MalformedPolicy', `Invalid value for ${op} condition on ${key}.`);
      }
      block[key] = values;
    }
    out[op] = block;
  }
  return out;
}

/**
 * Substitutes policy variables (`${aws:username}`, `${*}`, `${?}`, `${$}`)
 * in a policy string. What a substitution inserts is literal (a value's own
 * `*` or `?` never acts as a wildcard); an unknown variable stays as written.
 */
export function substituteVariables(s: string, ctx: ConditionContext): string {
  if (!s.includes('${')) return s;
  return s.replace(/\$\{([^}]*)\}/g, (all, name: string) => {
    if (name === '*' || name === '?' || name === '$') return escapeLiteral(name);
    const v = ctx.get(name.toLowerCase());
    return v && v.length > 0 ? escapeLiteral(v[0]!) : all;
  });
}

/** Operators whose values are patterns (the others compare the plain text). */
const PATTERN_OPERATORS = new Set(['StringLike', 'StringNotLike', 'ArnLike', 'ArnNotLike']);

function keyHolds(opName: OperatorName, expected: readonly string[], actual: readonly string[] | undefined): boolean {
  if (opName.base === 'Null') {
    const wantAbsent = expected.some((e) => e.toLowerCase() === 'true');
    return (actual === undefined || actual.length === 0) === wantAbsent;
  }
  const def = BASE[opName.base]!;
  if (actual === undefined || actual.length === 0) {
    if (opName.ifExists) return true;
    if (opName.set === 'all') return true;
    return def.negated;
  }
  const one = (a: string) => expected.some((e) => def.match(a, e));
  if (opName.set === 'all') return actual.every((a) => (def.negated ? !one(a) : one(a)));
  if (def.negated) return opName.set === 'any' ? actual.some((a) => !one(a)) : !actual.some(one);
  return actual.some(one);
}

/**
 * True when every operator of the block holds for the request context.
 * `variables`: policy variables in values are substituted (policies of
 * version 2012-10-17; older ones read `${...}` literally, as AWS does).
 */
export function conditionsHold(block: ConditionBlock | undefined, ctx: ConditionContext, variables = true): boolean {
  if (!block) return true;
  for (const [op, keys] of Object.entries(block)) {
    const parsed = parseOperator(op)!;
    for (const [key, values] of Object.entries(keys)) {
      const substituted = variables ? values.map((v) => substituteVariables(v, ctx)) : values;
      const expected = PATTERN_OPERATORS.has(parsed.base) ? substituted : substituted.map(unescapePattern);
      if (!keyHolds(parsed, expected, ctx.get(key.toLowerCase()))) return false;
    }
  }
  return true;
}

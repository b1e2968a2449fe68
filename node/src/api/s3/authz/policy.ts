/**
 * Bucket policies: the AWS policy language's document (parsed and validated
 * at PutBucketPolicy), statement matching and the "is it public" test that
 * GetBucketPolicyStatus and Public Access Block use. Pure.
 */
import { SvcError } from '../../../util/errors.ts';
import { type ConditionBlock, type ConditionContext, conditionsHold, substituteVariables, validateConditions, wildcardMatch } from './conditions.ts';
import { type Principal, principalIds } from './principal.ts';

/** Largest bucket policy S3 accepts. */
export const MAX_POLICY_BYTES = 20 * 1024;

export interface PrincipalSpec {
  /** `"*"` or `{"AWS": "*"}`: everyone, anonymous included. */
  any: boolean;
  ids: string[];
}

export interface Statement {
  sid?: string;
  effect: 'Allow' | 'Deny';
  principal?: PrincipalSpec;
  notPrincipal?: PrincipalSpec;
  action?: string[];
  notAction?: string[];
  resource?: string[];
  notResource?: string[];
  condition?: ConditionBlock;
}

export interface PolicyDocument {
  version: string;
  id?: string;
  statements: Statement[];
}

function bad(msg: string): SvcError {
  return new SvcError('MalformedPolicy', msg);
}

function strings(v: unknown, what: string): string[] {
  const arr = Array.isArray(v) ? v : [v];
  if (arr.length === 0 || !arr.every((x) => typeof x === 'string' && x !== '')) throw bad(`${what} must be a string or a list of strings.`);
  return arr as string[];
}

function principalSpec(v: unknown): PrincipalSpec {
  if (v === '*') return { any: true, ids: [] };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('Invalid principal in policy');
  const ids: string[] = [];
  let any = false;
  for (const [kind, val] of Object.entries(v as Record<string, unknown>)) {
    if (!['AWS', 'CanonicalUser', 'Service', 'Federated'].includes(kind)) throw bad('Invalid principal in policy');
    for (const id of strings(val, 'Principal')) {
      if (id === '*' && kind === 'AWS') any = true;
      else ids.push(id);
    }
  }
  return { any, ids };
}

const ACTION_RE = /^(\*|s3:[A-Za-z*?]+)$/;

function actions(v: unknown): string[] {
  const list = strings(v, 'Action');
  for (const a of list) if (!ACTION_RE.test(a)) throw bad('Policy has invalid action');
  return list;
}

function resources(v: unknown, bucket: string): string[] {
  const list = strings(v, 'Resource');
  for (const r of list) {
    const m = /^arn:aws:s3:::([^/]+)(\/.*)?$/.exec(r);
    // every resource must name this bucket (wildcards may stand for it)
    if (!m || !wildcardMatch(m[1]!, bucket)) throw bad('Policy has invalid resource');
  }
  return list;
}

/** Parses and validates a bucket policy for `bucket`; MalformedPolicy on anything wrong, never a 500. */
export function parsePolicy(text: string | Uint8Array, bucket: string): PolicyDocument {
  const raw = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  if (Buffer.byteLength(raw) > MAX_POLICY_BYTES) throw new SvcError('MalformedPolicy', 'Policy exceeds the maximum allowed document size.');
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw bad('Policies must be valid JSON and the first byte must be \'{\'');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('Policies must be valid JSON and the first byte must be \'{\'');
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!['Version', 'Id', 'Statement'].includes(k)) throw bad(`Unknown field ${k}`);
  const version = d.Version === undefined ? '2008-10-17' : d.Version;
  if (version !== '2012-10-17' && version !== '2008-10-17') throw bad('The policy must contain a valid version string');
  if (d.Id !== undefined && typeof d.Id !== 'string') throw bad('Id must be a string.');
  const rawStatements = Array.isArray(d.Statement) ? d.Statement : d.Statement === undefined ? [] : [d.Statement];
  if (rawStatements.length === 0) throw bad('Missing required field Statement');
  const statements = rawStatements.map((st: unknown): Statement => {
    if (typeof st !== 'object' || st === null || Array.isArray(st)) throw bad('Statement must be an object.');
    const s = st as Record<string, unknown>;
    for (const k of Object.keys(s)) {
      if (!['Sid', 'Effect', 'Principal', 'NotPrincipal', 'Action', 'NotAction', 'Resource', 'NotResource', 'Condition'].includes(k)) throw bad(`Unknown field ${k}`);
    }
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') throw bad('Invalid effect');
    if ((s.Principal === undefined) === (s.NotPrincipal === undefined)) throw bad('Statement must name exactly one of Principal or NotPrincipal');
    if ((s.Action === undefined) === (s.NotAction === undefined)) throw bad('Missing required field Action');
    if ((s.Resource === undefined) === (s.NotResource === undefined)) throw bad('Missing required field Resource');
    if (s.Sid !== undefined && typeof s.Sid !== 'string') throw bad('Sid must be a string.');
    const out: Statement = { effect: s.Effect };
    if (typeof s.Sid === 'string') out.sid = s.Sid;
    if (s.Principal !== undefined) out.principal = principalSpec(s.Principal);
    if (s.NotPrincipal !== undefined) out.notPrincipal = principalSpec(s.NotPrincipal);
    if (s.Action !== undefined) out.action = actions(s.Action);
    if (s.NotAction !== undefined) out.notAction = actions(s.NotAction);
    if (s.Resource !== undefined) out.resource = resources(s.Resource, bucket);
    if (s.NotResource !== undefined) out.notResource = resources(s.NotResource, bucket);
    if (s.Condition !== undefined) out.condition = validateConditions(s.Condition);
    return out;
  });
  return { version: version as string, ...(typeof d.Id === 'string' ? { id: d.Id } : {}), statements };
}

/** One request as policies see it. */
export interface PolicyRequest {
  principal: Principal;
  /** `s3:GetObject` … */
  action: string;
  /** `arn:aws:s3:::bucket` or `arn:aws:s3:::bucket/key`. */
  resource: string;
  context: ConditionContext;
}

function principalMatches(spec: PrincipalSpec, p: Principal): boolean {
  if (spec.any) return true;
  const ids = principalIds(p);
  return spec.ids.some((pat) => ids.some((id) => wildcardMatch(pat, id)));
}

function actionMatches(patterns: string[], action: string): boolean {
  return patterns.some((pat) => wildcardMatch(pat, action, true));
}

function resourceMatches(patterns: string[], resource: string, ctx: ConditionContext): boolean {
  return patterns.some((pat) => wildcardMatch(substituteVariables(pat, ctx), resource));
}

/** True when the statement applies to the request (principal, action, resource and conditions). */
export function statementApplies(s: Statement, r: PolicyRequest): boolean {
  if (s.principal && !principalMatches(s.principal, r.principal)) return false;
  if (s.notPrincipal && principalMatches(s.notPrincipal, r.principal)) return false;
  if (s.action && !actionMatches(s.action, r.action)) return false;
  if (s.notAction && actionMatches(s.notAction, r.action)) return false;
  if (s.resource && !resourceMatches(s.resource, r.resource, r.context)) return false;
  if (s.notResource && resourceMatches(s.notResource, r.resource, r.context)) return false;
  return conditionsHold(s.condition, r.context);
}

/** The effect of a policy on a request: `Deny` beats `Allow`; undefined when no statement applies. */
export function evaluatePolicy(doc: PolicyDocument | undefined, r: PolicyRequest, filter: (s: Statement) => boolean = () => true): 'Allow' | 'Deny' | undefined {
  if (!doc) return undefined;
  let allowed = false;
  for (const s of doc.statements) {
    if (!filter(s) || !statementApplies(s, r)) continue;
    if (s.effect === 'Deny') return 'Deny';
    allowed = true;
  }
  return allowed ? 'Allow' : undefined;
}

/** Condition keys that tie a statement to specific callers, so a wildcard principal is not public. */
const RESTRICTING_KEYS = new Set([
  'aws:sourcevpc',
  'aws:sourcevpce',
  'aws:sourcearn',
  'aws:sourceaccount',
  'aws:sourceowner',
  'aws:principalorgid',
  'aws:principalaccount',
  'aws:principalarn',
  'aws:userid',
  'aws:username',
  's3:dataaccesspointarn',
  's3:dataaccesspointaccount',
]);

/**
 * A statement is public when it allows a wildcard principal without a
 * condition that restricts who can use it (a fixed source address, a source
 * account or ARN, a user id). S3's rule, simplified to the keys svc knows.
 */
export function isPublicStatement(s: Statement): boolean {
  if (s.effect !== 'Allow') return false;
  if (!(s.principal?.any || s.principal?.ids.includes('*') || s.notPrincipal)) return false;
  for (const [op, keys] of Object.entries(s.condition ?? {})) {
    // negated, optional and all-values operators let callers without the key through
    if (/Not|IfExists|^ForAllValues/.test(op)) continue;
    for (const [key, values] of Object.entries(keys)) {
      const k = key.toLowerCase();
      if (RESTRICTING_KEYS.has(k) && values.every((v) => !v.includes('*'))) return false;
      if (k === 'aws:sourceip' && op.startsWith('IpAddress') && values.every((v) => !/\/0$/.test(v.trim()))) return false;
    }
  }
  return true;
}

export function isPublicPolicy(doc: PolicyDocument | undefined): boolean {
  return doc?.statements.some(isPublicStatement) ?? false;
}

/**
 * The AWS policy language: documents (bucket policies, attached at
 * PutBucketPolicy, and identity policies, attached to users and groups or
 * carried by an access key or a session), parsed and validated once, and
 * statement matching. Also the "is it public" test that
 * GetBucketPolicyStatus and Public Access Block use. Pure.
 *
 * The two kinds differ only where AWS makes them differ: a bucket policy
 * names a `Principal` and only resources of its own bucket; an identity
 * policy names no principal (it is the identity's own) and may also grant
 * `admin:`, `sts:` and `kms:` actions, whose statements may leave out
 * `Resource` (svc's admin actions apply to the whole deployment, as MinIO's
 * do). Policy variables (`${aws:username}`) are substituted only in
 * documents of version 2012-10-17; older documents read them literally.
 *
 * Every `Action` / `NotAction` entry must name at least one action of its
 * service (`policy-actions.ts`), so a misspelled action is refused when the
 * document is written; a document read back from storage is not refused
 * for it (`ParseOptions.stored`).
 */
import { SvcError } from '../util/errors.ts';
import { type ConditionContext, conditionsHold, substituteVariables, validateConditions, wildcardMatch } from './conditions.ts';
import { actionProblem, describeActionProblem, type PolicyService } from './policy-actions.ts';
import type { PolicyDocument, PrincipalSpec, Statement } from './policy-document.ts';
import { type Principal, principalIds } from './principal.ts';

/** Largest bucket policy S3 accepts. */
export const MAX_POLICY_BYTES = 20 * 1024;
/** Largest identity policy svc accepts (AWS allows 6 KiB for a managed policy; MinIO has no fixed limit). */
export const MAX_IDENTITY_POLICY_BYTES = 20 * 1024;

export const POLICY_VERSION = '2012-10-17';

export type { PolicyDocument, PrincipalSpec, Statement };

/** What a document is for: a bucket's policy, or an identity's. */
export type PolicyKind = { kind: 'bucket'; bucket: string } | { kind: 'identity' };

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

/** The services whose actions each kind of document may name. */
const SERVICES: { readonly [K in PolicyKind['kind']]: readonly PolicyService[] } = {
  bucket: ['s3'],
  identity: ['s3', 'admin', 'kms', 'sts'],
};

/**
 * An `Action` / `NotAction` list: each entry must name at least one action
 * of a service the document may name. With `unknownActions` (a stored document),
 * an entry of a known service that names no action is collected there
 * instead of refused.
 */
function actions(v: unknown, k: PolicyKind, unknownActions: string[] | undefined): string[] {
  const list = strings(v, 'Action');
  const services = SERVICES[k.kind];
  for (const a of list) {
    const problem = actionProblem(a, services);
    if (problem === undefined) continue;
    if (unknownActions !== undefined && problem.kind === 'unknown') unknownActions.push(a);
    else throw bad(`Policy has invalid action '${a}': ${describeActionProblem(problem, services)}`);
  }
  return list;
}

function resources(v: unknown, k: PolicyKind): string[] {
  const list = strings(v, 'Resource');
  for (const r of list) {
    if (k.kind === 'identity') {
      if (r !== '*' && !/^arn:aws:s3:::.+$/.test(r)) throw bad(`Policy has invalid resource '${r}'; expecting "*" or arn:aws:s3:::<bucket>[/<key>]`);
      continue;
    }
    const m = /^arn:aws:s3:::([^/]+)(\/.*)?$/.exec(r);
    // every resource must name this bucket (wildcards may stand for it)
    if (!m || !wildcardMatch(m[1]!, k.bucket)) throw bad('Policy has invalid resource');
  }
  return list;
}

/** True when every action pattern names a service that has no S3 resources (admin, sts, kms). */
function deploymentWide(list: readonly string[] | undefined): boolean {
  return list !== undefined && list.every((a) => /^(admin|sts|kms):/i.test(a));
}

export interface ParseOptions {
  /**
   * The document was stored earlier and is being read back (a bucket's
   * policy, a named or inline identity policy, a session's policy):
   * validation happens when a document is written, and a document stored
   * before svc checked action names must not stop working. An action entry
   * that names no action is kept (it matches nothing) and listed in
   * `unknownActions` for the caller to report; anything else still refuses.
   */
  readonly stored?: boolean;
}

/**
 * Parses and validates a policy document; MalformedPolicy on anything wrong,
 * never a 500. `bucket` (a string) is the old form of `{kind: 'bucket', bucket}`.
 */
export function parsePolicy(text: string | Uint8Array, kind: string | PolicyKind, opts: ParseOptions = {}): PolicyDocument {
  const k: PolicyKind = typeof kind === 'string' ? { kind: 'bucket', bucket: kind } : kind;
  const raw = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  const limit = k.kind === 'bucket' ? MAX_POLICY_BYTES : MAX_IDENTITY_POLICY_BYTES;
  if (Buffer.byteLength(raw) > limit) throw new SvcError('MalformedPolicy', `Policy exceeds the maximum allowed document size (${limit} bytes).`);
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw bad('Policies must be valid JSON and the first byte must be \'{\'');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('Policies must be valid JSON and the first byte must be \'{\'');
  const d = doc as Record<string, unknown>;
  for (const key of Object.keys(d)) if (!['Version', 'Id', 'Statement'].includes(key)) throw bad(`Unknown field ${key}`);
  const version = d.Version === undefined ? '2008-10-17' : d.Version;
  if (version !== POLICY_VERSION && version !== '2008-10-17') throw bad('The policy must contain a valid version string');
  if (d.Id !== undefined && typeof d.Id !== 'string') throw bad('Id must be a string.');
  const rawStatements = Array.isArray(d.Statement) ? d.Statement : d.Statement === undefined ? [] : [d.Statement];
  if (rawStatements.length === 0) throw bad('Missing required field Statement');
  const unknownActions: string[] | undefined = opts.stored ? [] : undefined;
  const statements = rawStatements.map((st: unknown): Statement => {
    if (typeof st !== 'object' || st === null || Array.isArray(st)) throw bad('Statement must be an object.');
    const s = st as Record<string, unknown>;
    for (const key of Object.keys(s)) {
      if (!['Sid', 'Effect', 'Principal', 'NotPrincipal', 'Action', 'NotAction', 'Resource', 'NotResource', 'Condition'].includes(key)) throw bad(`Unknown field ${key}`);
    }
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') throw bad('Invalid effect');
    if (k.kind === 'bucket') {
      if ((s.Principal === undefined) === (s.NotPrincipal === undefined)) throw bad('Statement must name exactly one of Principal or NotPrincipal');
    } else if (s.Principal !== undefined || s.NotPrincipal !== undefined) {
      throw bad('Policy document should not specify a principal (an identity policy applies to the identity it is attached to)');
    }
    if ((s.Action === undefined) === (s.NotAction === undefined)) throw bad('Missing required field Action');
    if (s.Sid !== undefined && typeof s.Sid !== 'string') throw bad('Sid must be a string.');
    const out: Statement = { effect: s.Effect };
    if (typeof s.Sid === 'string') out.sid = s.Sid;
    if (s.Principal !== undefined) out.principal = principalSpec(s.Principal);
    if (s.NotPrincipal !== undefined) out.notPrincipal = principalSpec(s.NotPrincipal);
    if (s.Action !== undefined) out.action = actions(s.Action, k, unknownActions);
    if (s.NotAction !== undefined) out.notAction = actions(s.NotAction, k, unknownActions);
    if (s.Resource !== undefined && s.NotResource !== undefined) throw bad('A statement names either Resource or NotResource, not both');
    if (s.Resource === undefined && s.NotResource === undefined) {
      if (!(k.kind === 'identity' && deploymentWide(out.action))) throw bad('Missing required field Resource');
      out.resource = ['*'];
    }
    if (s.Resource !== undefined) out.resource = resources(s.Resource, k);
    if (s.NotResource !== undefined) out.notResource = resources(s.NotResource, k);
    if (s.Condition !== undefined) out.condition = validateConditions(s.Condition);
    return out;
  });
  return {
    version: version as string,
    ...(typeof d.Id === 'string' ? { id: d.Id } : {}),
    statements,
    ...(unknownActions !== undefined && unknownActions.length > 0 ? { unknownActions: [...new Set(unknownActions)] } : {}),
  };
}

/** Parses an identity policy (users, groups, access keys, sessions). */
export function parseIdentityPolicy(text: string | Uint8Array, opts: ParseOptions = {}): PolicyDocument {
  return parsePolicy(text, { kind: 'identity' }, opts);
}

/** The document as JSON again (AWS's field names; a single value stays a list). */
export function policyToJson(doc: PolicyDocument): Record<string, unknown> {
  const spec = (p: PrincipalSpec) => (p.any && p.ids.length === 0 ? '*' : { AWS: [...(p.any ? ['*'] : []), ...p.ids] });
  return {
    Version: doc.version,
    ...(doc.id !== undefined ? { Id: doc.id } : {}),
    Statement: doc.statements.map((s) => ({
      ...(s.sid !== undefined ? { Sid: s.sid } : {}),
      Effect: s.effect,
      ...(s.principal ? { Principal: spec(s.principal) } : {}),
      ...(s.notPrincipal ? { NotPrincipal: spec(s.notPrincipal) } : {}),
      ...(s.action ? { Action: s.action } : {}),
      ...(s.notAction ? { NotAction: s.notAction } : {}),
      ...(s.resource ? { Resource: s.resource } : {}),
      ...(s.notResource ? { NotResource: s.notResource } : {}),
      ...(s.condition ? { Condition: s.condition } : {}),
    })),
  };
}

/** One request as policies see it. */
export interface PolicyRequest {
  principal: Principal;
  /** `s3:GetObject`, `admin:ServerInfo` … */
  action: string;
  /** `arn:aws:s3:::bucket`, `arn:aws:s3:::bucket/key`, or `arn:aws:s3:::*` for deployment-wide actions. */
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

function resourceMatches(patterns: string[], resource: string, ctx: ConditionContext, variables: boolean): boolean {
  return patterns.some((pat) => pat === '*' || wildcardMatch(variables ? substituteVariables(pat, ctx) : pat, resource));
}

/** Actions of services without S3 resources (the admin API, STS, KMS): deployment-wide. */
export function isDeploymentAction(action: string): boolean {
  return /^(admin|sts|kms):/i.test(action);
}

/**
 * Whether a statement's resources cover a deployment-wide action. A
 * statement that names the action explicitly applies whatever S3 resources
 * it lists (MinIO's admin policies carry `arn:aws:s3:::*`, and that is what
 * users paste); a `NotAction` statement reaches such actions only when its
 * Resource is `*`, the way AWS scopes `NotAction` by the resources named:
 * `{"NotAction": "s3:DeleteBucket", "Resource": "arn:aws:s3:::*"}` grants
 * S3 actions, not the admin API. `NotResource` never excludes them.
 */
function deploymentResourceMatches(s: Statement): boolean {
  if (s.notResource) return true;
  if (!s.resource) return false;
  return s.action !== undefined ? true : s.resource.includes('*');
}

/** True when the statement applies to the request (principal, action, resource and conditions). */
export function statementApplies(s: Statement, r: PolicyRequest, variables = true): boolean {
  if (s.principal && !principalMatches(s.principal, r.principal)) return false;
  if (s.notPrincipal && principalMatches(s.notPrincipal, r.principal)) return false;
  if (s.action && !actionMatches(s.action, r.action)) return false;
  if (s.notAction && actionMatches(s.notAction, r.action)) return false;
  if (isDeploymentAction(r.action)) {
    if (!deploymentResourceMatches(s)) return false;
  } else {
    if (s.resource && !resourceMatches(s.resource, r.resource, r.context, variables)) return false;
    if (s.notResource && resourceMatches(s.notResource, r.resource, r.context, variables)) return false;
  }
  return conditionsHold(s.condition, r.context, variables);
}

/** The effect of a policy on a request: `Deny` beats `Allow`; undefined when no statement applies. */
export function evaluatePolicy(doc: PolicyDocument | undefined, r: PolicyRequest, filter: (s: Statement) => boolean = () => true): 'Allow' | 'Deny' | undefined {
  if (!doc) return undefined;
  const variables = doc.version === POLICY_VERSION;
  let allowed = false;
  for (const s of doc.statements) {
    if (!filter(s) || !statementApplies(s, r, variables)) continue;
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

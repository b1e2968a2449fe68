/**
 * The policy engine against the cases of AWS's policy-evaluation
 * documentation (IAM User Guide: policy evaluation logic, the NotAction,
 * NotResource, Condition and policy-variable element pages, and the S3
 * user-guide examples), as a table: each row is a policy set, a request and
 * the decision AWS documents for it. Plus a property test that an explicit
 * deny always wins, whatever else applies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { code } from '../../test/helpers/error-code.ts';
import { cannedPolicy, CANNED_POLICY_NAMES } from './canned.ts';
import type { ConditionContext } from './conditions.ts';
import { type AuthzInput, decide, type Decision, NO_PUBLIC_ACCESS_SWITCHES } from './decide.ts';
import { parseIdentityPolicy, parsePolicy, type PolicyDocument, policyToJson } from './policy.ts';
import { ANONYMOUS, type Principal } from './principal.ts';

const alice: Principal = { kind: 'user', accessKey: 'AKALICE', canonicalId: 'alice', root: false, userName: 'alice', credential: 'user' };
const bob: Principal = { kind: 'user', accessKey: 'AKBOB', canonicalId: 'bob', root: false, userName: 'bob', credential: 'user' };

const id = (statements: object | object[], version = '2012-10-17') => parseIdentityPolicy(JSON.stringify({ Version: version, Statement: statements }));
const bucketPol = (bucket: string, statements: object[]) => parsePolicy(JSON.stringify({ Version: '2012-10-17', Statement: statements }), bucket);
const ctx = (o: Record<string, string | string[]> = {}): ConditionContext => new Map(Object.entries(o).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v : [v]]));

interface Row {
  name: string;
  principal?: Principal;
  policies?: PolicyDocument[];
  restrictions?: PolicyDocument[];
  bucketPolicy?: PolicyDocument;
  bucketOwner?: string;
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
  expect: Decision['by'];
}

const s3All = id({ Effect: 'Allow', Action: 's3:*', Resource: '*' });
const home = id([
  { Sid: 'ListOwnHome', Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::corp', Condition: { StringLike: { 's3:prefix': ['', 'home/', 'home/${aws:username}/*'] } } },
  { Sid: 'OwnHome', Effect: 'Allow', Action: 's3:*', Resource: ['arn:aws:s3:::corp/home/${aws:username}', 'arn:aws:s3:::corp/home/${aws:username}/*'] },
]);
const notDeleteBucket = id({ Effect: 'Allow', NotAction: 's3:DeleteBucket', Resource: 'arn:aws:s3:::*' });
const denyOutsidePayroll = id({ Effect: 'Deny', Action: 's3:*', NotResource: ['arn:aws:s3:::HRBucket/Payroll', 'arn:aws:s3:::HRBucket/Payroll/*'] });
const denyInsecure = id({ Effect: 'Deny', Action: 's3:*', Resource: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
const officeOnly = id({ Effect: 'Deny', Action: '*', Resource: '*', Condition: { NotIpAddress: { 'aws:SourceIp': ['192.0.2.0/24', '203.0.113.0/24'] } } });
const window = id({ Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: { DateGreaterThan: { 'aws:CurrentTime': '2026-01-01T00:00:00Z' }, DateLessThan: { 'aws:CurrentTime': '2026-12-31T23:59:59Z' } } });
const maxKeys = id({ Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::b', Condition: { NumericLessThanEquals: { 's3:max-keys': '10' } } });
const tempOnly = id({ Effect: 'Deny', Action: 's3:*', Resource: '*', Condition: { Null: { 'aws:TokenIssueTime': 'true' } } });
const oldVersion = id({ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${aws:username}/*' }, '2008-10-17');
const wildcards = id({ Effect: 'Allow', Action: 's3:Get*', Resource: ['arn:aws:s3:::logs-20??/*', 'arn:aws:s3:::*/public/*'] });
const aclOrTls = id({ Effect: 'Allow', Action: 's3:PutObject', Resource: '*', Condition: { StringEquals: { 's3:x-amz-acl': ['private', 'bucket-owner-full-control'] }, Bool: { 'aws:SecureTransport': 'true' } } });
const adminInfo = id({ Effect: 'Allow', Action: ['admin:ServerInfo'] });
const escaped = id({ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${*}literal' });

const ROWS: Row[] = [
  // Evaluation logic: an implicit deny by default, an allow when a statement allows, an explicit deny over any allow
  { name: 'no policy: implicit deny', principal: alice, action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  { name: 'identity allow', principal: alice, policies: [s3All], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'identity-policy' },
  { name: 'explicit deny in another identity policy wins', principal: alice, policies: [s3All, denyOutsidePayroll], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'explicit-deny' },
  { name: 'explicit deny in the bucket policy beats an identity allow', principal: alice, policies: [s3All], bucketPolicy: bucketPol('b', [{ Effect: 'Deny', Principal: { AWS: 'arn:aws:iam:::user/alice' }, Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]), action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'explicit-deny' },
  { name: 'resource-based allow alone is enough within one deployment', principal: bob, bucketPolicy: bucketPol('b', [{ Effect: 'Allow', Principal: { AWS: ['bob'] }, Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]), action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'bucket-policy' },
  { name: 'a bucket policy naming another principal grants nothing', principal: alice, bucketPolicy: bucketPol('b', [{ Effect: 'Allow', Principal: { AWS: ['bob'] }, Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]), action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  // NotAction with Allow: all S3 actions except DeleteBucket
  { name: 'NotAction allow: other actions allowed', principal: alice, policies: [notDeleteBucket], action: 's3:PutObject', resource: 'arn:aws:s3:::b/k', expect: 'identity-policy' },
  { name: 'NotAction allow: the listed action is not', principal: alice, policies: [notDeleteBucket], action: 's3:DeleteBucket', resource: 'arn:aws:s3:::b', expect: 'implicit-deny' },
  { name: 'NotAction allow scoped to S3 resources does not reach admin actions', principal: alice, policies: [notDeleteBucket], action: 'admin:ServerInfo', resource: 'arn:aws:s3:::*', expect: 'implicit-deny' },
  { name: 'NotAction allow on Resource * does', principal: alice, policies: [id({ Effect: 'Allow', NotAction: 's3:DeleteBucket', Resource: '*' })], action: 'admin:ServerInfo', resource: 'arn:aws:s3:::*', expect: 'identity-policy' },
  { name: 'an explicit admin action applies whatever S3 resource it lists', principal: alice, policies: [id({ Effect: 'Allow', Action: 'admin:*', Resource: 'arn:aws:s3:::*' })], action: 'admin:Heal', resource: 'arn:aws:s3:::*', expect: 'identity-policy' },
  // NotResource with Deny: everything outside the payroll folder is denied, and nothing is granted by it
  { name: 'NotResource deny: outside is denied', principal: alice, policies: [s3All, denyOutsidePayroll], action: 's3:GetObject', resource: 'arn:aws:s3:::HRBucket/Other/x', expect: 'explicit-deny' },
  { name: 'NotResource deny: inside is allowed by the other policy', principal: alice, policies: [s3All, denyOutsidePayroll], action: 's3:GetObject', resource: 'arn:aws:s3:::HRBucket/Payroll/x', expect: 'identity-policy' },
  { name: 'NotResource deny grants nothing by itself', principal: alice, policies: [denyOutsidePayroll], action: 's3:GetObject', resource: 'arn:aws:s3:::HRBucket/Payroll/x', expect: 'implicit-deny' },
  // Policy variables: a home folder per user
  { name: 'variable: own home folder', principal: alice, policies: [home], action: 's3:PutObject', resource: 'arn:aws:s3:::corp/home/alice/notes.txt', context: { 'aws:username': 'alice' }, expect: 'identity-policy' },
  { name: "variable: someone else's home folder", principal: alice, policies: [home], action: 's3:GetObject', resource: 'arn:aws:s3:::corp/home/bob/notes.txt', context: { 'aws:username': 'alice' }, expect: 'implicit-deny' },
  { name: 'variable in a condition: list own prefix', principal: alice, policies: [home], action: 's3:ListBucket', resource: 'arn:aws:s3:::corp', context: { 'aws:username': 'alice', 's3:prefix': 'home/alice/docs' }, expect: 'identity-policy' },
  { name: "variable in a condition: list another's prefix", principal: alice, policies: [home], action: 's3:ListBucket', resource: 'arn:aws:s3:::corp', context: { 'aws:username': 'alice', 's3:prefix': 'home/bob/' }, expect: 'implicit-deny' },
  { name: 'variable in a condition: list the root (empty prefix)', principal: alice, policies: [home], action: 's3:ListBucket', resource: 'arn:aws:s3:::corp', context: { 'aws:username': 'alice', 's3:prefix': '' }, expect: 'identity-policy' },
  { name: 'version 2008-10-17 reads ${...} literally', principal: alice, policies: [oldVersion], action: 's3:GetObject', resource: 'arn:aws:s3:::b/alice/x', context: { 'aws:username': 'alice' }, expect: 'implicit-deny' },
  { name: 'version 2008-10-17: the literal text matches', principal: alice, policies: [oldVersion], action: 's3:GetObject', resource: 'arn:aws:s3:::b/${aws:username}/x', context: { 'aws:username': 'alice' }, expect: 'identity-policy' },
  { name: "a variable's value is literal: a user named a* gets only its own folder", principal: { ...alice, userName: 'a*' }, policies: [home], action: 's3:GetObject', resource: 'arn:aws:s3:::corp/home/abc/x', context: { 'aws:username': 'a*' }, expect: 'implicit-deny' },
  { name: '${*} is a literal asterisk', principal: alice, policies: [escaped], action: 's3:GetObject', resource: 'arn:aws:s3:::b/*literal', expect: 'identity-policy' },
  { name: '${*} does not match anything else', principal: alice, policies: [escaped], action: 's3:GetObject', resource: 'arn:aws:s3:::b/xliteral', expect: 'implicit-deny' },
  // Wildcards: * any run, ? one character, actions case-insensitive
  { name: 'wildcard ? matches one character', principal: alice, policies: [wildcards], action: 's3:GetObject', resource: 'arn:aws:s3:::logs-2026/x', expect: 'identity-policy' },
  { name: 'wildcard ? does not match two', principal: alice, policies: [wildcards], action: 's3:GetObject', resource: 'arn:aws:s3:::logs-20267/x', expect: 'implicit-deny' },
  { name: 'wildcard * across segments', principal: alice, policies: [wildcards], action: 's3:GetObjectTagging', resource: 'arn:aws:s3:::any/public/a/b', expect: 'identity-policy' },
  { name: 'action names are case-insensitive', principal: alice, policies: [wildcards], action: 'S3:GETOBJECT', resource: 'arn:aws:s3:::any/public/a', expect: 'identity-policy' },
  { name: 'wildcard action does not cross services', principal: alice, policies: [wildcards], action: 's3:PutObject', resource: 'arn:aws:s3:::any/public/a', expect: 'implicit-deny' },
  // Conditions: Bool, IP, dates, numbers, Null, several keys (AND), several values (OR)
  { name: 'aws:SecureTransport false is denied', principal: alice, policies: [s3All, denyInsecure], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:SecureTransport': 'false' }, expect: 'explicit-deny' },
  { name: 'aws:SecureTransport true passes', principal: alice, policies: [s3All, denyInsecure], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:SecureTransport': 'true' }, expect: 'identity-policy' },
  { name: 'NotIpAddress: outside the office ranges is denied', principal: alice, policies: [s3All, officeOnly], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:SourceIp': '198.51.100.7' }, expect: 'explicit-deny' },
  { name: 'NotIpAddress: inside one of the ranges passes', principal: alice, policies: [s3All, officeOnly], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:SourceIp': '203.0.113.9' }, expect: 'identity-policy' },
  { name: 'date window: inside', principal: alice, policies: [window], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:CurrentTime': '2026-06-01T12:00:00Z' }, expect: 'identity-policy' },
  { name: 'date window: after', principal: alice, policies: [window], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:CurrentTime': '2027-01-02T00:00:00Z' }, expect: 'implicit-deny' },
  { name: 'numeric: max-keys within the limit', principal: alice, policies: [maxKeys], action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:max-keys': '10' }, expect: 'identity-policy' },
  { name: 'numeric: max-keys above the limit', principal: alice, policies: [maxKeys], action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:max-keys': '11' }, expect: 'implicit-deny' },
  { name: 'numeric: key absent fails a positive operator', principal: alice, policies: [maxKeys], action: 's3:ListBucket', resource: 'arn:aws:s3:::b', expect: 'implicit-deny' },
  { name: 'Null: long-term credentials (no aws:TokenIssueTime) are denied', principal: alice, policies: [s3All, tempOnly], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'explicit-deny' },
  { name: 'Null: temporary credentials pass', principal: alice, policies: [s3All, tempOnly], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 'aws:TokenIssueTime': '2026-06-01T12:00:00Z' }, expect: 'identity-policy' },
  { name: 'two operators must both hold', principal: alice, policies: [aclOrTls], action: 's3:PutObject', resource: 'arn:aws:s3:::b/k', context: { 's3:x-amz-acl': 'private', 'aws:SecureTransport': 'false' }, expect: 'implicit-deny' },
  { name: 'any value of a key may match', principal: alice, policies: [aclOrTls], action: 's3:PutObject', resource: 'arn:aws:s3:::b/k', context: { 's3:x-amz-acl': 'bucket-owner-full-control', 'aws:SecureTransport': 'true' }, expect: 'identity-policy' },
  // Session policies and access-key policies narrow: the intersection
  { name: 'session policy narrows: allowed by both', principal: alice, policies: [s3All], restrictions: [id({ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' })], action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'identity-policy' },
  { name: 'session policy narrows: not in the session policy', principal: alice, policies: [s3All], restrictions: [id({ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' })], action: 's3:PutObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  { name: 'session policy cannot widen the identity', principal: alice, policies: [id({ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' })], restrictions: [s3All], action: 's3:PutObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  { name: 'a deny in a session policy is an explicit deny', principal: alice, policies: [s3All], restrictions: [s3All, id({ Effect: 'Deny', Action: 's3:DeleteObject', Resource: '*' })], action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/k', expect: 'explicit-deny' },
  // Bucket owners
  { name: 'the bucket owner is allowed without an identity policy', principal: alice, bucketOwner: 'alice', action: 's3:PutBucketTagging', resource: 'arn:aws:s3:::b', expect: 'owner' },
  { name: "the owner's access key is still narrowed by its policy", principal: alice, bucketOwner: 'alice', restrictions: [id({ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' })], action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  { name: 'another user is not the owner', principal: bob, bucketOwner: 'alice', action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  { name: 'anonymous gets nothing from identity policies', principal: ANONYMOUS, action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', expect: 'implicit-deny' },
  // Admin actions: deployment-wide, named like MinIO's
  { name: 'admin action allowed without a Resource', principal: alice, policies: [adminInfo], action: 'admin:ServerInfo', resource: 'arn:aws:s3:::*', expect: 'identity-policy' },
  { name: 'another admin action is not', principal: alice, policies: [adminInfo], action: 'admin:Heal', resource: 'arn:aws:s3:::*', expect: 'implicit-deny' },
];

describe('policy evaluation (AWS documentation cases)', () => {
  it.each(ROWS)('$name', (row) => {
    const base = row.principal ?? alice;
    const principal: Principal = base.kind === 'user' ? { ...base, policies: row.policies ?? [], restrictions: row.restrictions ?? [] } : base;
    const input: AuthzInput = {
      principal,
      action: row.action,
      resource: row.resource,
      context: ctx(row.context),
      ...(row.bucketOwner !== undefined ? { bucketOwner: row.bucketOwner } : { bucketOwner: 'root' }),
      ...(row.bucketPolicy ? { bucketPolicy: row.bucketPolicy } : {}),
      aclsEnabled: true,
      publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES,
    };
    expect(decide(input).by).toBe(row.expect);
  });
});

describe('identity policy documents', () => {
  it('refuse principals, unknown services, bad resources, missing resources for S3 actions', () => {
    const bad = [
      { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: '*' },
      { Effect: 'Allow', Action: 'iam:CreateUser', Resource: '*' },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:ec2:::instance/x' },
      { Effect: 'Allow', Action: 's3:GetObject' },
      { Effect: 'Permit', Action: 's3:GetObject', Resource: '*' },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: '*', NotResource: 'arn:aws:s3:::b' },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: { StringLikeish: { 's3:prefix': 'a' } } },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/33' } } },
    ];
    for (const st of bad) expect(code(() => id(st)), JSON.stringify(st)).toBe('MalformedPolicy');
    expect(code(() => parseIdentityPolicy('{"Version":"2012-10-17","Statement":[]}'))).toBe('MalformedPolicy');
    expect(code(() => parseIdentityPolicy('not json'))).toBe('MalformedPolicy');
    expect(code(() => parseIdentityPolicy(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::' + 'x'.repeat(21 * 1024) }] })))).toBe('MalformedPolicy');
  });

  it('round-trips through policyToJson', () => {
    const d = id([{ Sid: 'a', Effect: 'Deny', NotAction: ['s3:GetObject'], NotResource: 'arn:aws:s3:::b/*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }]);
    expect(parseIdentityPolicy(JSON.stringify(policyToJson(d)))).toEqual(d);
  });

  it('canned policies parse and mean what their names say', () => {
    expect(CANNED_POLICY_NAMES).toEqual(['readwrite', 'readonly', 'writeonly', 'diagnostics', 'consoleAdmin']);
    const can = (name: string, action: string, resource = 'arn:aws:s3:::b/k') =>
      decide({ principal: { ...alice, policies: [cannedPolicy(name)!.doc] } as Principal, action, resource, context: ctx(), aclsEnabled: true, publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES }).allow;
    expect([can('readonly', 's3:GetObject'), can('readonly', 's3:ListBucket', 'arn:aws:s3:::b'), can('readonly', 's3:PutObject'), can('readonly', 's3:DeleteObject')]).toEqual([true, true, false, false]);
    expect([can('writeonly', 's3:PutObject'), can('writeonly', 's3:GetObject')]).toEqual([true, false]);
    expect([can('readwrite', 's3:DeleteObject'), can('readwrite', 'admin:ServerInfo', 'arn:aws:s3:::*')]).toEqual([true, false]);
    expect([can('diagnostics', 'admin:ServerInfo', 'arn:aws:s3:::*'), can('diagnostics', 'admin:Heal', 'arn:aws:s3:::*'), can('diagnostics', 's3:GetObject')]).toEqual([true, false, false]);
    expect([can('consoleAdmin', 'admin:CreateUser', 'arn:aws:s3:::*'), can('consoleAdmin', 's3:DeleteBucket', 'arn:aws:s3:::b')]).toEqual([true, true]);
  });
});

describe('property: an explicit deny always wins', () => {
  const ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket', 'admin:ServerInfo'];
  const RESOURCES = ['arn:aws:s3:::b', 'arn:aws:s3:::b/k', 'arn:aws:s3:::b/home/alice/x', 'arn:aws:s3:::other/k'];
  const actionPat = fc.constantFrom('*', 's3:*', 's3:Get*', 's3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket', 'admin:*', 'admin:ServerInfo');
  const resourcePat = fc.constantFrom('*', 'arn:aws:s3:::*', 'arn:aws:s3:::b', 'arn:aws:s3:::b/*', 'arn:aws:s3:::b/home/${aws:username}/*', 'arn:aws:s3:::other/*');
  const statement = fc.record({
    Effect: fc.constantFrom('Allow', 'Deny'),
    Action: fc.array(actionPat, { minLength: 1, maxLength: 3 }),
    Resource: fc.array(resourcePat, { minLength: 1, maxLength: 2 }),
  });
  const doc = fc.array(statement, { minLength: 1, maxLength: 4 }).map((st) => id(st));
  const bucketStatement = fc.record({
    Effect: fc.constantFrom('Allow', 'Deny'),
    Principal: fc.constantFrom<unknown>('*', { AWS: ['alice'] }, { AWS: ['bob'] }),
    Action: fc.array(fc.constantFrom('s3:*', 's3:GetObject', 's3:PutObject', 's3:ListBucket'), { minLength: 1, maxLength: 2 }),
    Resource: fc.array(fc.constantFrom('arn:aws:s3:::b', 'arn:aws:s3:::b/*'), { minLength: 1, maxLength: 2 }),
  });

  it('whatever identity, session and bucket policies, owner or ACL allow, a matching Deny refuses', () => {
    fc.assert(
      fc.property(
        fc.array(doc, { maxLength: 3 }),
        fc.array(doc, { maxLength: 2 }),
        fc.option(fc.array(bucketStatement, { minLength: 1, maxLength: 3 }).map((st) => bucketPol('b', st)), { nil: undefined }),
        fc.constantFrom(...ACTIONS),
        fc.constantFrom(...RESOURCES),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<'identity' | 'session' | 'bucket'>('identity', 'session', 'bucket'),
        (policies, restrictions, bucketPolicy, action, resource, owner, aclGrants, where) => {
          const denyAction = id({ Effect: 'Deny', Action: action, Resource: resource });
          const denyBucket = bucketPol('b', [{ Effect: 'Deny', Principal: '*', Action: 's3:*', Resource: ['arn:aws:s3:::b', 'arn:aws:s3:::b/*'] }]);
          if (where === 'bucket' && (!action.startsWith('s3:') || !resource.startsWith('arn:aws:s3:::b'))) return;
          const principal: Principal = {
            ...alice,
            policies: where === 'identity' ? [...policies, denyAction] : policies,
            restrictions: where === 'session' ? [...restrictions, denyAction] : restrictions,
          };
          const base: AuthzInput = {
            principal,
            action,
            resource,
            context: ctx({ 'aws:username': 'alice' }),
            bucketOwner: owner ? 'alice' : 'root',
            aclsEnabled: true,
            acl: () => aclGrants,
            publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES,
          };
          const bp = where === 'bucket' ? denyBucket : bucketPolicy;
          const d = decide({ ...base, ...(bp ? { bucketPolicy: bp } : {}) });
          // the owner keeps managing its bucket policy (no lock-out); everything else is refused
          const lockout = owner && /bucketpolicy$/i.test(action);
          if (!lockout) expect(d).toEqual({ allow: false, by: 'explicit-deny' });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('without any Deny, adding an Allow never turns an allow into a refusal (monotone)', () => {
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 3 }), fc.constantFrom(...ACTIONS), fc.constantFrom(...RESOURCES), (policies, action, resource) => {
        const allowOnly = policies.map((p) => ({ ...p, statements: p.statements.filter((s) => s.effect === 'Allow') })).filter((p) => p.statements.length > 0);
        const before = decide({ principal: { ...alice, policies: allowOnly }, action, resource, context: ctx({ 'aws:username': 'alice' }), aclsEnabled: true, publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES });
        const after = decide({ principal: { ...alice, policies: [...allowOnly, s3All] }, action, resource, context: ctx({ 'aws:username': 'alice' }), aclsEnabled: true, publicAccessBlock: NO_PUBLIC_ACCESS_SWITCHES });
        if (before.allow) expect(after.allow).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

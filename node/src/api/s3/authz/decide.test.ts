import { describe, expect, it } from 'vitest';
import { code } from '../../../../test/helpers/error-code.ts';
import { ALL_USERS, aclAllows, cannedAcl, decodeAcl, encodeAcl } from './acl.ts';
import { NO_PUBLIC_ACCESS_BLOCK } from './bucket-settings.ts';
import { type ConditionContext, conditionsHold, validateConditions, wildcardMatch } from '../../../iam/conditions.ts';
import { type AuthzInput, decide } from '../../../iam/decide.ts';
import { isPublicPolicy, parsePolicy } from '../../../iam/policy.ts';
import { ANONYMOUS, type Principal, rootPrincipal } from '../../../iam/principal.ts';
import type { Acl, Permission } from './acl.ts';

const owner = { id: 'root', displayName: 'root' };
const root = rootPrincipal('root');
const user: Principal = { kind: 'user', accessKey: 'alice', canonicalId: 'alice', root: false };
const ctx = (o: Record<string, string | string[]>): ConditionContext => new Map(Object.entries(o).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v : [v]]));

const grants = (acl: Acl, permission: Permission) => (ig: boolean) => aclAllows(acl, ANONYMOUS, permission, ig);

function input(over: Partial<AuthzInput>): AuthzInput {
  return {
    principal: ANONYMOUS,
    action: 's3:GetObject',
    resource: 'arn:aws:s3:::b/k',
    context: ctx({}),
    bucketOwner: 'root',
    aclsEnabled: true,
    publicAccessBlock: NO_PUBLIC_ACCESS_BLOCK,
    ...over,
  };
}

const pol = (statements: object[]) => parsePolicy(JSON.stringify({ Version: '2012-10-17', Statement: statements }), 'b');

describe('decide', () => {
  it('explicit deny first, then owner, policy, ACL, implicit deny', () => {
    const allowAll = pol([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]);
    const denyAll = pol([{ Effect: 'Deny', Principal: '*', Action: 's3:*', Resource: ['arn:aws:s3:::b', 'arn:aws:s3:::b/*'] }]);
    expect(decide(input({}))).toEqual({ allow: false, by: 'implicit-deny' });
    expect(decide(input({ bucketPolicy: allowAll }))).toEqual({ allow: true, by: 'bucket-policy' });
    expect(decide(input({ principal: root }))).toEqual({ allow: true, by: 'owner' });
    expect(decide(input({ principal: root, bucketPolicy: denyAll }))).toEqual({ allow: false, by: 'explicit-deny' });
    // the owner can always manage the policy that locks it out
    expect(decide(input({ principal: root, bucketPolicy: denyAll, action: 's3:DeleteBucketPolicy', resource: 'arn:aws:s3:::b' }))).toEqual({ allow: true, by: 'owner' });
    expect(decide(input({ principal: user, bucketPolicy: denyAll, action: 's3:DeleteBucketPolicy', resource: 'arn:aws:s3:::b' })).allow).toBe(false);
    const publicRead = cannedAcl('public-read', owner);
    expect(decide(input({ acl: grants(publicRead, 'READ') }))).toEqual({ allow: true, by: 'acl' });
    expect(decide(input({ acl: grants(publicRead, 'READ'), aclsEnabled: false })).allow).toBe(false);
    expect(decide(input({ acl: grants(publicRead, 'READ'), publicAccessBlock: { ...NO_PUBLIC_ACCESS_BLOCK, ignorePublicAcls: true } })).allow).toBe(false);
    expect(decide(input({ acl: grants(publicRead, 'WRITE') })).allow).toBe(false);
    // identity policies (IAM) plug in with the same language
    expect(decide(input({ principal: user, identityPolicies: [allowAll] }))).toEqual({ allow: true, by: 'identity-policy' });
    expect(decide(input({ principal: user, identityPolicies: [allowAll, denyAll] })).by).toBe('explicit-deny');
    // RestrictPublicBuckets: a public policy grants outsiders nothing
    const restricted = { ...NO_PUBLIC_ACCESS_BLOCK, restrictPublicBuckets: true };
    expect(decide(input({ bucketPolicy: allowAll, publicAccessBlock: restricted })).allow).toBe(false);
    expect(decide(input({ bucketPolicy: allowAll, publicAccessBlock: restricted, acl: grants(publicRead, 'READ') })).allow).toBe(false);
  });

  it('principals, NotPrincipal, NotAction, NotResource, wildcards and policy variables', () => {
    const p = pol([
      { Effect: 'Allow', Principal: { AWS: ['alice'] }, Action: 's3:Get*', Resource: 'arn:aws:s3:::b/home/${aws:username}/*' },
      { Effect: 'Deny', NotPrincipal: { AWS: 'alice' }, NotAction: 's3:GetObject', NotResource: 'arn:aws:s3:::b/public/*' },
    ]);
    expect(decide(input({ principal: user, resource: 'arn:aws:s3:::b/home/alice/x', context: ctx({ 'aws:username': 'alice' }), bucketPolicy: p })).allow).toBe(true);
    expect(decide(input({ principal: user, resource: 'arn:aws:s3:::b/home/bob/x', context: ctx({ 'aws:username': 'alice' }), bucketPolicy: p })).allow).toBe(false);
    expect(decide(input({ action: 's3:PutObject', resource: 'arn:aws:s3:::b/private/x', bucketPolicy: p })).by).toBe('explicit-deny');
    expect(decide(input({ action: 's3:PutObject', resource: 'arn:aws:s3:::b/public/x', bucketPolicy: p })).by).toBe('implicit-deny');
  });
});

describe('conditions', () => {
  const holds = (block: object, c: Record<string, string | string[]>) => conditionsHold(validateConditions(block), ctx(c));
  it('string, numeric, date, bool, ip, null and arn operators, IfExists and set qualifiers', () => {
    expect(holds({ StringEquals: { 's3:x-amz-acl': ['private', 'public-read'] } }, { 's3:x-amz-acl': 'public-read' })).toBe(true);
    expect(holds({ StringNotEquals: { 's3:x-amz-acl': 'public-read' } }, { 's3:x-amz-acl': 'public-read' })).toBe(false);
    expect(holds({ StringNotEquals: { 's3:x-amz-acl': 'public-read' } }, {})).toBe(true);
    expect(holds({ StringEqualsIgnoreCase: { 's3:x-amz-storage-class': 'standard' } }, { 's3:x-amz-storage-class': 'STANDARD' })).toBe(true);
    expect(holds({ StringLike: { 's3:prefix': 'home/*/docs' } }, { 's3:prefix': 'home/alice/docs' })).toBe(true);
    expect(holds({ StringLike: { 's3:prefix': 'home/?' } }, { 's3:prefix': 'home/ab' })).toBe(false);
    expect(holds({ NumericLessThanEquals: { 's3:max-keys': '10' } }, { 's3:max-keys': '10' })).toBe(true);
    expect(holds({ NumericGreaterThan: { 's3:max-keys': 10 } }, { 's3:max-keys': '10' })).toBe(false);
    expect(holds({ DateLessThan: { 'aws:CurrentTime': '2030-01-01T00:00:00Z' } }, { 'aws:currenttime': '2026-01-01T00:00:00Z' })).toBe(true);
    expect(holds({ DateGreaterThan: { 'aws:EpochTime': '1700000000' } }, { 'aws:epochtime': '1600000000' })).toBe(false);
    expect(holds({ Bool: { 'aws:SecureTransport': 'false' } }, { 'aws:securetransport': 'false' })).toBe(true);
    expect(holds({ IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '127.0.0.1/32'] } }, { 'aws:sourceip': '127.0.0.1' })).toBe(true);
    expect(holds({ IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, { 'aws:sourceip': '::ffff:10.1.2.3' })).toBe(true);
    expect(holds({ NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, { 'aws:sourceip': '192.168.1.1' })).toBe(true);
    expect(holds({ IpAddress: { 'aws:SourceIp': '2001:db8::/32' } }, { 'aws:sourceip': '2001:db8::1' })).toBe(true);
    expect(holds({ Null: { 's3:x-amz-server-side-encryption': 'true' } }, {})).toBe(true);
    expect(holds({ Null: { 's3:x-amz-server-side-encryption': 'false' } }, {})).toBe(false);
    expect(holds({ ArnLike: { 'aws:SourceArn': 'arn:aws:s3:::b*' } }, { 'aws:sourcearn': 'arn:aws:s3:::bucket' })).toBe(true);
    expect(holds({ StringEqualsIfExists: { 's3:x-amz-acl': 'private' } }, {})).toBe(true);
    expect(holds({ StringEquals: { 's3:x-amz-acl': 'private' } }, {})).toBe(false);
    expect(holds({ 'ForAllValues:StringEquals': { 's3:requestobjecttagkeys': ['a', 'b'] } }, { 's3:requestobjecttagkeys': ['a'] })).toBe(true);
    expect(holds({ 'ForAllValues:StringEquals': { 's3:requestobjecttagkeys': ['a'] } }, { 's3:requestobjecttagkeys': ['a', 'c'] })).toBe(false);
    expect(holds({ 'ForAnyValue:StringEquals': { 's3:requestobjecttagkeys': ['c'] } }, { 's3:requestobjecttagkeys': ['a', 'c'] })).toBe(true);
    // every operator must hold (AND), any value of a key may match (OR)
    expect(holds({ StringEquals: { 's3:x-amz-acl': 'private' }, Bool: { 'aws:SecureTransport': 'true' } }, { 's3:x-amz-acl': 'private', 'aws:securetransport': 'false' })).toBe(false);
  });

  it('wildcards: * and ? with backtracking', () => {
    expect(wildcardMatch('a*b*c', 'axxbyyc')).toBe(true);
    expect(wildcardMatch('a*b*c', 'axxbyy')).toBe(false);
    expect(wildcardMatch('*', '')).toBe(true);
    expect(wildcardMatch('S3:GET*', 's3:getobject', true)).toBe(true);
  });
});

describe('policy documents', () => {
  it('validates and classifies public policies', () => {
    expect(isPublicPolicy(pol([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]))).toBe(true);
    expect(isPublicPolicy(pol([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*', Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } }]))).toBe(false);
    expect(isPublicPolicy(pol([{ Effect: 'Allow', Principal: { AWS: 'alice' }, Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]))).toBe(false);
    expect(isPublicPolicy(pol([{ Effect: 'Deny', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }]))).toBe(false);
    for (const bad of ['', '{', '"x"', '{"Statement":{}}', '{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Extra":1}]}']) {
      expect(code(() => parsePolicy(bad, 'b')), bad).toBe('MalformedPolicy');
    }
  });
});

describe('ACLs', () => {
  it('canned ACLs, stored form round trip, owner keeps ACP rights', () => {
    const a = cannedAcl('public-read-write', owner);
    expect(a.grants.map((g) => [g.grantee.type === 'Group' ? g.grantee.uri : g.grantee.id, g.permission])).toEqual([
      ['root', 'FULL_CONTROL'],
      [ALL_USERS, 'READ'],
      [ALL_USERS, 'WRITE'],
    ]);
    expect(decodeAcl(encodeAcl(a))).toEqual(a);
    const authRead = cannedAcl('authenticated-read', owner);
    expect(aclAllows(authRead, ANONYMOUS, 'READ')).toBe(false);
    expect(aclAllows(authRead, rootPrincipal('someone'), 'READ')).toBe(true);
    expect(aclAllows({ owner, grants: [] }, root, 'WRITE_ACP')).toBe(true);
    expect(code(() => cannedAcl('public', owner))).toBe('InvalidArgument');
  });
});

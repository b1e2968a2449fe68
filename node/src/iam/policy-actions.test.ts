/**
 * The action-name check: exact names and wildcard patterns of each service,
 * any case; misspellings, unknown services and ill-formed entries refused
 * with what is wrong; documents read back from storage still load. Every
 * action of svc's canned policies passes.
 */
import { describe, expect, it } from 'vitest';
import { code } from '../../test/helpers/error-code.ts';
import { cannedPolicy, CANNED_POLICY_NAMES } from './canned.ts';
import { parseIdentityPolicy, parsePolicy } from './policy.ts';
import { actionProblem, describeActionProblem, type PolicyService, SERVICE_ACTIONS } from './policy-actions.ts';

const IDENTITY: PolicyService[] = ['s3', 'admin', 'kms', 'sts'];
const BUCKET: PolicyService[] = ['s3'];
const known = (a: string, services = IDENTITY) => actionProblem(a, services) === undefined;

describe('action names', () => {
  it('accepts every listed action of each service, in any case', () => {
    for (const [service, names] of Object.entries(SERVICE_ACTIONS)) {
      for (const n of names) {
        expect(known(`${service}:${n}`), `${service}:${n}`).toBe(true);
        expect(known(`${service.toUpperCase()}:${n.toLowerCase()}`), `${service}:${n} any case`).toBe(true);
      }
    }
    expect(known('*')).toBe(true);
  });

  it('lists each name once per service (case-insensitively)', () => {
    for (const names of Object.values(SERVICE_ACTIONS)) expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
  });

  it('accepts AWS actions svc does not implement, and MinIO extensions', () => {
    for (const a of ['s3:GetStorageLensConfiguration', 's3:PutAccessPointPolicy', 's3:ObjectOwnerOverrideToBucketOwner', 's3:PauseReplication', 's3:InitiateReplication', 's3:GetAccelerateConfiguration', 's3:ReplicateTags']) {
      expect(known(a, BUCKET), a).toBe(true);
    }
    for (const a of ['s3:ListenBucketNotification', 's3:ListenNotification', 's3:ForceDeleteBucket', 's3:GetBucketCors', 's3:PutBucketCors']) expect(known(a, BUCKET), a).toBe(true);
    for (const a of ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:KeyStatus', 'sts:AssumeRole', 'sts:AssumeRoleWithWebIdentity', 'sts:TagSession', 'admin:SiteReplicationInfo']) expect(known(a), a).toBe(true);
  });

  it('wildcards match when they cover at least one action', () => {
    for (const a of ['s3:*', 's3:Get*', 's3:*Object*', 's3:List?ucket', 's3:get*tagging', 'admin:*', 'admin:*User*', 'kms:*', 'sts:Assume*', 's3:?*', 's3:PutObject?cl']) expect(known(a), a).toBe(true);
    for (const a of ['s3:Get*Objekt', 's3:Zap*', 's3:GetObject?', 'admin:Serv?rInfos', 'sts:Assume*X']) {
      expect(actionProblem(a, IDENTITY), a).toMatchObject({ kind: 'unknown' });
    }
  });

  it('refuses a misspelled action and suggests the close name', () => {
    expect(actionProblem('s3:GetObjcet', BUCKET)).toEqual({ kind: 'unknown', service: 's3', suggestion: 's3:GetObject' });
    expect(actionProblem('s3:ListBuckets', BUCKET)).toEqual({ kind: 'unknown', service: 's3', suggestion: 's3:ListBucket' });
    expect(actionProblem('admin:ServerInfos', IDENTITY)).toEqual({ kind: 'unknown', service: 'admin', suggestion: 'admin:ServerInfo' });
    // nothing close: no suggestion
    expect(actionProblem('s3:DoEverything', BUCKET)).toEqual({ kind: 'unknown', service: 's3' });
    expect(describeActionProblem(actionProblem('s3:GetObjcet', BUCKET)!, BUCKET)).toBe('no s3 action has that name (did you mean s3:GetObject?)');
  });

  it('refuses services the document may not name, and ill-formed entries', () => {
    expect(actionProblem('ec2:RunInstances', IDENTITY)).toEqual({ kind: 'service', service: 'ec2' });
    expect(actionProblem('s3express:CreateSession', IDENTITY)).toEqual({ kind: 'service', service: 's3express' });
    expect(actionProblem('admin:ServerInfo', BUCKET)).toEqual({ kind: 'service', service: 'admin' });
    expect(describeActionProblem({ kind: 'service', service: 'admin' }, BUCKET)).toBe('this policy names s3 actions only');
    expect(describeActionProblem({ kind: 'service', service: 'ec2' }, IDENTITY)).toBe('the services are s3, admin, kms, sts');
    for (const a of ['s3:', 's3', ':GetObject', 's3:Get Object', 's3:GetObject:x', '*:*', 's3:Get-Object', '']) expect(actionProblem(a, IDENTITY), a).toEqual({ kind: 'shape' });
  });

  it('every action of the canned policies passes', () => {
    for (const name of CANNED_POLICY_NAMES) {
      for (const s of cannedPolicy(name)!.doc.statements) for (const a of [...(s.action ?? []), ...(s.notAction ?? [])]) expect(known(a), `${name}: ${a}`).toBe(true);
    }
  });
});

describe('policy documents and action names', () => {
  const doc = (action: string | string[], key: 'Action' | 'NotAction' = 'Action') => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', [key]: action, Resource: 'arn:aws:s3:::b/*' }] });
  const idDoc = (action: string) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: action, Resource: 'arn:aws:s3:::*' }] });
  const message = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  };

  it('a written document naming an unknown action is refused, naming it (Action and NotAction)', () => {
    expect(code(() => parsePolicy(doc('s3:GetObjcet'), 'b'))).toBe('MalformedPolicy');
    expect(message(() => parsePolicy(doc(['s3:GetObject', 's3:GetObjcet']), 'b'))).toBe("Policy has invalid action 's3:GetObjcet': no s3 action has that name (did you mean s3:GetObject?)");
    expect(message(() => parsePolicy(doc('s3:Get*Objekt', 'NotAction'), 'b'))).toBe("Policy has invalid action 's3:Get*Objekt': no s3 action has that name");
    expect(message(() => parseIdentityPolicy(idDoc('admin:ServerInfos')))).toContain("Policy has invalid action 'admin:ServerInfos'");
    expect(code(() => parseIdentityPolicy(idDoc('ec2:RunInstances')))).toBe('MalformedPolicy');
    expect(parsePolicy(doc('S3:GETOBJECT'), 'b').statements[0]!.action).toEqual(['S3:GETOBJECT']);
  });

  it('a stored document naming an unknown action still loads and lists it; the action matches nothing', () => {
    const stored = parsePolicy(doc(['s3:GetObject', 's3:GetObjcet', 's3:GetObjcet']), 'b', { stored: true });
    expect(stored.unknownActions).toEqual(['s3:GetObjcet']);
    expect(stored.statements[0]!.action).toEqual(['s3:GetObject', 's3:GetObjcet', 's3:GetObjcet']);
    expect(parseIdentityPolicy(idDoc('s3:ListBuckets'), { stored: true }).unknownActions).toEqual(['s3:ListBuckets']);
    expect(parsePolicy(doc('s3:GetObject'), 'b', { stored: true }).unknownActions).toBeUndefined();
    // anything else wrong is still refused when read back
    expect(code(() => parsePolicy(doc('ec2:RunInstances'), 'b', { stored: true }))).toBe('MalformedPolicy');
  });
});

/**
 * Bucket policies and action names, against the real server with
 * `@aws-sdk/client-s3`: a misspelled action is refused with MalformedPolicy
 * naming it, and nothing is stored (the previous policy stays, and keeps
 * working); a real AWS policy naming actions svc does not implement is
 * accepted as written; a policy stored before svc checked action names
 * still loads and its valid statements still apply.
 */
import { CreateBucketCommand, DeleteBucketPolicyCommand, GetBucketPolicyCommand, PutBucketPolicyCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, s3Error } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let s3: S3Client;

beforeAll(async () => {
  srv = await start();
  s3 = clientOf(srv);
  await s3.send(new CreateBucketCommand({ Bucket: 'pol-actions' }));
  await s3.send(new PutObjectCommand({ Bucket: 'pol-actions', Key: 'public/a.txt', Body: 'public a' }));
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

const publicRead = (...actions: string[]) =>
  JSON.stringify({ Version: '2012-10-17', Statement: [{ Sid: 'PublicRead', Effect: 'Allow', Principal: '*', Action: actions, Resource: 'arn:aws:s3:::pol-actions/public/*' }] });

const anonGet = async (key: string) => (await fetch(`${srv.endpoint}/pol-actions/${key}`)).status;

describe('PutBucketPolicy and action names', () => {
  it('a misspelled action is refused with MalformedPolicy naming it; no policy is stored', async () => {
    await s3.send(new DeleteBucketPolicyCommand({ Bucket: 'pol-actions' }));
    const e = await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: publicRead('s3:GetObjcet') })));
    expect(e).toEqual({ code: 'MalformedPolicy', status: 400, message: "Policy has invalid action 's3:GetObjcet': no s3 action has that name (did you mean s3:GetObject?)" });
    expect((await s3Error(s3.send(new GetBucketPolicyCommand({ Bucket: 'pol-actions' })))).code).toBe('NoSuchBucketPolicy');
    expect(await anonGet('public/a.txt')).toBe(403);
  });

  it('over an existing policy: the misspelled one is refused, the previous one stays and keeps working', async () => {
    const good = publicRead('s3:GetObject');
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: good }));
    expect(await anonGet('public/a.txt')).toBe(200);
    for (const [bad, named] of [
      [publicRead('s3:GetObject', 's3:ListBuckets'), 's3:ListBuckets'],
      [publicRead('s3:Get*Objekt'), 's3:Get*Objekt'],
      [publicRead('admin:ServerInfo'), 'admin:ServerInfo'],
      [publicRead('ec2:DescribeInstances'), 'ec2:DescribeInstances'],
    ] as const) {
      const e = await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: bad })));
      expect([named, e.code, e.status]).toEqual([named, 'MalformedPolicy', 400]);
      expect(e.message).toContain(`Policy has invalid action '${named}'`);
    }
    // NotAction is checked the same way
    const notAction = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: '*', NotAction: 's3:GetObjectt', Resource: 'arn:aws:s3:::pol-actions/*' }] });
    expect((await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: notAction })))).code).toBe('MalformedPolicy');
    expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'pol-actions' }))).Policy).toBe(good);
    expect(await anonGet('public/a.txt')).toBe(200);
  });

  it('a real AWS policy naming actions svc does not implement is accepted as written, action names in any case', async () => {
    const aws = JSON.stringify({
      Version: '2012-10-17',
      Id: 'ReplicationAndLens',
      Statement: [
        { Sid: 'PublicRead', Effect: 'Allow', Principal: '*', Action: 'S3:getobject', Resource: 'arn:aws:s3:::pol-actions/public/*' },
        {
          Sid: 'ReplicaFromSource',
          Effect: 'Allow',
          Principal: { AWS: 'arn:aws:iam::123456789012:role/replication' },
          Action: ['s3:ReplicateObject', 's3:ReplicateDelete', 's3:ReplicateTags', 's3:ObjectOwnerOverrideToBucketOwner', 's3:GetObjectVersionForReplication'],
          Resource: 'arn:aws:s3:::pol-actions/*',
        },
        { Sid: 'Ops', Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::123456789012:root' }, Action: ['s3:GetStorageLensConfiguration', 's3:PutAccessPointPolicy', 's3:GetAccelerateConfiguration', 's3:PutInventoryConfiguration', 's3:Get*Configuration'], Resource: 'arn:aws:s3:::pol-actions' },
        { Sid: 'DenyInsecure', Effect: 'Deny', Principal: '*', Action: 's3:*', Resource: ['arn:aws:s3:::pol-actions', 'arn:aws:s3:::pol-actions/*'], Condition: { Bool: { 'aws:SecureTransport': 'false' }, StringEquals: { 'aws:PrincipalAccount': '999999999999' } } },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: aws }));
    expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'pol-actions' }))).Policy).toBe(aws);
    expect(await anonGet('public/a.txt')).toBe(200);
  });

  it('a policy stored before action names were checked still loads: its valid statements apply, the unknown action grants nothing', async () => {
    // written past the API, as an older version accepted it
    const old = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::pol-actions/public/*' },
        { Effect: 'Allow', Principal: '*', Action: 's3:ListBuckets', Resource: 'arn:aws:s3:::pol-actions' },
      ],
    });
    await srv.objectLayer.setBucketConfig('pol-actions', 'policy', Buffer.from(old));
    expect(await anonGet('public/a.txt')).toBe(200);
    expect((await fetch(`${srv.endpoint}/pol-actions?list-type=2`)).status).toBe(403);
    expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'pol-actions' }))).Policy).toBe(old);
    // putting it back as it is is refused: it must be corrected
    expect((await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'pol-actions', Policy: old })))).code).toBe('MalformedPolicy');
  });
});

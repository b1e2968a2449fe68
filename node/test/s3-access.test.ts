/**
 * Access control against the real server: canned ACLs and grants, bucket
 * policies, Object Ownership and Public Access Block. Signed calls use
 * `@aws-sdk/client-s3`; anonymous calls are plain HTTP with no credentials.
 * Every refusal is checked to store nothing.
 */
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectsCommand,
  DeletePublicAccessBlockCommand,
  GetBucketAclCommand,
  GetBucketPolicyCommand,
  GetBucketPolicyStatusCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketAclCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, start } from './helpers/s3-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

let srv: S3Server;
let s3: S3Client;

beforeAll(async () => {
  srv = await start();
  s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: srv.endpoint, region: srv.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: srv.accessKey, secretAccessKey: srv.secretKey } });
});

afterAll(async () => {
  s3?.destroy();
  await srv?.stop();
});

async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode };
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** An anonymous request: no Authorization header, no presigned query. */
async function anon(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; code: string; text: string }> {
  const r = await fetch(`${srv.endpoint}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await r.text();
  return { status: r.status, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? '', text };
}

async function exists(bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return false;
    throw err;
  }
}

const policy = (bucket: string, statements: object[]) => JSON.stringify({ Version: '2012-10-17', Statement: statements.map((s) => ({ Resource: [`arn:aws:s3:::${bucket}/*`], ...s })) });

describe('anonymous requests on a private bucket', () => {
  it('are refused for every operation class, and nothing is stored or changed', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-private' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-private', Key: 'obj', Body: 'secret' }));
    const refused: [string, string, string?][] = [
      ['GET', '/'],
      ['PUT', '/acc-anon-new'],
      ['GET', '/acc-private'],
      ['GET', '/acc-private?list-type=2'],
      ['GET', '/acc-private?versions'],
      ['GET', '/acc-private?uploads'],
      ['HEAD', '/acc-private'],
      ['GET', '/acc-private/obj'],
      ['HEAD', '/acc-private/obj'],
      ['GET', '/acc-private/obj?acl'],
      ['GET', '/acc-private/obj?tagging'],
      ['PUT', '/acc-private/new', 'data'],
      ['PUT', '/acc-private/obj', 'overwrite'],
      ['DELETE', '/acc-private/obj'],
      ['POST', '/acc-private/mp?uploads'],
      ['PUT', '/acc-private?acl', '', ],
      ['PUT', '/acc-private/obj?acl'],
      ['GET', '/acc-private?acl'],
      ['GET', '/acc-private?policy'],
      ['PUT', '/acc-private?policy', policy('acc-private', [{ Effect: 'Allow', Principal: '*', Action: 's3:*' }])],
      ['DELETE', '/acc-private'],
      ['GET', '/acc-private?cors'],
      ['PUT', '/acc-private?versioning', '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>'],
      ['PUT', '/acc-private?publicAccessBlock', '<PublicAccessBlockConfiguration/>'],
    ];
    for (const [method, path, body] of refused) {
      const r = await anon(method, path, body, method === 'PUT' && path.endsWith('?acl') ? { 'x-amz-acl': 'public-read-write' } : {});
      expect([method, path, r.status, method === 'HEAD' ? 'AccessDenied' : r.code]).toEqual([method, path, 403, 'AccessDenied']);
    }
    const del = await anon('POST', '/acc-private?delete', '<Delete><Object><Key>obj</Key></Object></Delete>');
    expect(del.text).toContain('<Code>AccessDenied</Code>');
    // nothing changed
    expect(await exists('acc-private', 'new')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'acc-private', Key: 'obj' }));
    expect(await got.Body!.transformToString()).toBe('secret');
    expect((await s3.send(new GetBucketAclCommand({ Bucket: 'acc-private' }))).Grants).toHaveLength(1);
    expect((await s3Error(s3.send(new GetBucketPolicyCommand({ Bucket: 'acc-private' })))).code).toBe('NoSuchBucketPolicy');
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: 'acc-anon-new', Key: 'x' })))).status).toBe(404);
  });

  it('differently-authorised requests: unknown key, a presigned URL used for another operation', async () => {
    const other = new S3Client({ requestHandler: keepAliveHandler(), endpoint: srv.endpoint, region: srv.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: 'nobody', secretAccessKey: 'nothing' } });
    try {
      expect(await s3Error(other.send(new PutObjectCommand({ Bucket: 'acc-private', Key: 'x', Body: 'x' })))).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
    } finally {
      other.destroy();
    }
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'acc-private', Key: 'x' }));
    expect((await fetch(getUrl, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect(await exists('acc-private', 'x')).toBe(false);
  });
});

describe('canned ACLs and grants', () => {
  it('public-read on an object lets anyone read it (and only it); public-read on a bucket lets anyone list', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-acl' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-acl', Key: 'pub', Body: 'public', ACL: 'public-read' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-acl', Key: 'priv', Body: 'private' }));
    const r = await anon('GET', '/acc-acl/pub');
    expect([r.status, r.text]).toEqual([200, 'public']);
    expect((await anon('HEAD', '/acc-acl/pub')).status).toBe(200);
    expect((await anon('GET', '/acc-acl/priv')).status).toBe(403);
    expect((await anon('GET', '/acc-acl/pub?acl')).status).toBe(403);
    expect((await anon('GET', '/acc-acl?list-type=2')).status).toBe(403);
    const acl = await s3.send(new GetObjectAclCommand({ Bucket: 'acc-acl', Key: 'pub' }));
    expect(acl.Grants?.map((g) => [g.Grantee?.Type, g.Permission])).toEqual([
      ['CanonicalUser', 'FULL_CONTROL'],
      ['Group', 'READ'],
    ]);
    await s3.send(new PutBucketAclCommand({ Bucket: 'acc-acl', ACL: 'public-read' }));
    const list = await anon('GET', '/acc-acl?list-type=2');
    expect(list.status).toBe(200);
    expect(list.text).toContain('<Key>priv</Key>');
    expect((await anon('GET', '/acc-acl/priv')).status).toBe(403);
    expect((await anon('PUT', '/acc-acl/anon', 'x')).status).toBe(403);
    // PutObjectAcl takes it back
    await s3.send(new PutObjectAclCommand({ Bucket: 'acc-acl', Key: 'pub', ACL: 'private' }));
    expect((await anon('GET', '/acc-acl/pub')).status).toBe(403);
    // explicit grants by header and by document
    await s3.send(new PutObjectAclCommand({ Bucket: 'acc-acl', Key: 'priv', GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }));
    expect((await anon('GET', '/acc-acl/priv')).status).toBe(200);
    await s3.send(
      new PutObjectAclCommand({
        Bucket: 'acc-acl',
        Key: 'priv',
        AccessControlPolicy: { Owner: { ID: srv.accessKey }, Grants: [{ Grantee: { Type: 'CanonicalUser', ID: srv.accessKey }, Permission: 'FULL_CONTROL' }] },
      }),
    );
    expect((await anon('GET', '/acc-acl/priv')).status).toBe(403);
    expect((await s3Error(s3.send(new PutObjectAclCommand({ Bucket: 'acc-acl', Key: 'priv', GrantRead: 'id="someone-else"' })))).code).toBe('InvalidArgument');
    expect((await s3Error(s3.send(new PutObjectAclCommand({ Bucket: 'acc-acl', Key: 'priv', GrantRead: 'emailAddress="a@b.c"' })))).code).toBe('UnresolvableGrantByEmailAddress');
    expect((await s3Error(s3.send(new PutObjectAclCommand({ Bucket: 'acc-acl', Key: 'priv', ACL: 'public-read', GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' })))).code).toBe(
      'InvalidRequest',
    );
  });

  it('public-read-write on a bucket lets anyone write; CreateBucket takes a canned ACL', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-rw', ACL: 'public-read-write' }));
    expect((await anon('PUT', '/acc-rw/dropped', 'anon data')).status).toBe(200);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'acc-rw', Key: 'dropped' }));
    expect(await got.Body!.transformToString()).toBe('anon data');
    // the object an anonymous writer stored is private to the bucket owner
    expect((await anon('GET', '/acc-rw/dropped')).status).toBe(403);
    expect((await anon('DELETE', '/acc-rw/dropped')).status).toBe(204);
    expect(await exists('acc-rw', 'dropped')).toBe(false);
  });
});

describe('bucket policies', () => {
  it('allow anonymous reads of a prefix, deny explicitly even the owner, conditions on prefix and source address', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-pol' }));
    for (const k of ['public/a', 'private/b']) await s3.send(new PutObjectCommand({ Bucket: 'acc-pol', Key: k, Body: k }));
    const doc = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Sid: 'read', Effect: 'Allow', Principal: '*', Action: ['s3:GetObject'], Resource: 'arn:aws:s3:::acc-pol/public/*' },
        { Sid: 'list', Effect: 'Allow', Principal: { AWS: ['*'] }, Action: 's3:ListBucket', Resource: 'arn:aws:s3:::acc-pol', Condition: { StringLike: { 's3:prefix': ['public/*', 'public/'] } } },
        { Sid: 'lock', Effect: 'Deny', Principal: '*', Action: 's3:PutObject', Resource: 'arn:aws:s3:::acc-pol/locked/*', Condition: { IpAddress: { 'aws:SourceIp': '127.0.0.0/8' } } },
        { Sid: 'tls', Effect: 'Deny', Principal: '*', NotAction: ['s3:Get*', 's3:List*', 's3:PutObject', 's3:*Policy*'], Resource: 'arn:aws:s3:::acc-pol/*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'acc-pol', Policy: doc }));
    expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'acc-pol' }))).Policy).toBe(doc);
    expect((await s3.send(new GetBucketPolicyStatusCommand({ Bucket: 'acc-pol' }))).PolicyStatus?.IsPublic).toBe(true);
    expect((await anon('GET', '/acc-pol/public/a')).text).toBe('public/a');
    expect((await anon('GET', '/acc-pol/private/b')).status).toBe(403);
    expect((await anon('GET', '/acc-pol?list-type=2&prefix=public/')).status).toBe(200);
    expect((await anon('GET', '/acc-pol?list-type=2&prefix=private/')).status).toBe(403);
    expect((await anon('GET', '/acc-pol?list-type=2')).status).toBe(403);
    expect((await anon('PUT', '/acc-pol/public/new', 'x')).status).toBe(403);
    // explicit deny beats the owner: no write under locked/ from this address, no delete over plain HTTP
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'acc-pol', Key: 'locked/x', Body: 'x' })))).code).toBe('AccessDenied');
    expect(await exists('acc-pol', 'locked/x')).toBe(false);
    const del = await s3.send(new DeleteObjectsCommand({ Bucket: 'acc-pol', Delete: { Objects: [{ Key: 'private/b' }] } }));
    expect(del.Errors?.map((e) => [e.Key, e.Code])).toEqual([['private/b', 'AccessDenied']]);
    expect(await exists('acc-pol', 'private/b')).toBe(true);
    // the owner can always manage the policy, and removing it restores the owner's writes
    await s3.send(new DeleteBucketPolicyCommand({ Bucket: 'acc-pol' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-pol', Key: 'locked/x', Body: 'x' }));
    expect((await anon('GET', '/acc-pol/public/a')).status).toBe(403);
    expect((await s3.send(new GetBucketPolicyStatusCommand({ Bucket: 'acc-pol' }))).PolicyStatus?.IsPublic).toBe(false);
  });

  it('malformed policies are MalformedPolicy (400), never a 500, and change nothing', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-bad' }));
    const bad = [
      'not json',
      '[]',
      '{"Version":"2012-10-17"}',
      '{"Version":"1999-01-01","Statement":[]}',
      JSON.stringify({ Statement: [{ Effect: 'Maybe', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::acc-bad/*' }] }),
      JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 'ec2:RunInstances', Resource: 'arn:aws:s3:::acc-bad/*' }] }),
      JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::other-bucket/*' }] }),
      JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::acc-bad/*', Condition: { StringSorta: { 's3:prefix': 'x' } } }] }),
      JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::acc-bad/*', Condition: { IpAddress: { 'aws:SourceIp': 'not-an-ip' } } }] }),
      JSON.stringify({ Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::acc-bad/*' }] }),
      `{"Statement":[${'{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::acc-bad/*"},'.repeat(300)}{}]}`,
    ];
    for (const p of bad) {
      const e = await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'acc-bad', Policy: p })));
      expect([p.slice(0, 40), e.code, e.status]).toEqual([p.slice(0, 40), 'MalformedPolicy', 400]);
    }
    expect((await s3Error(s3.send(new GetBucketPolicyCommand({ Bucket: 'acc-bad' })))).code).toBe('NoSuchBucketPolicy');
  });
});

describe('Object Ownership and Public Access Block', () => {
  it('BucketOwnerEnforced disables ACLs', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-own' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-own', Key: 'was-public', Body: 'x', ACL: 'public-read' }));
    expect((await anon('GET', '/acc-own/was-public')).status).toBe(200);
    await s3.send(new PutBucketOwnershipControlsCommand({ Bucket: 'acc-own', OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } }));
    expect((await anon('GET', '/acc-own/was-public')).status).toBe(403);
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'acc-own', Key: 'n', Body: 'x', ACL: 'public-read' })))).code).toBe('AccessControlListNotSupported');
    expect(await exists('acc-own', 'n')).toBe(false);
    await s3.send(new PutObjectCommand({ Bucket: 'acc-own', Key: 'n', Body: 'x', ACL: 'bucket-owner-full-control' }));
    expect((await s3Error(s3.send(new PutBucketAclCommand({ Bucket: 'acc-own', ACL: 'public-read' })))).code).toBe('AccessControlListNotSupported');
    expect((await s3.send(new GetObjectAclCommand({ Bucket: 'acc-own', Key: 'was-public' }))).Grants).toHaveLength(1);
    expect((await s3Error(s3.send(new CreateBucketCommand({ Bucket: 'acc-own2', ObjectOwnership: 'BucketOwnerEnforced', ACL: 'public-read' })))).code).toBe(
      'InvalidBucketAclWithObjectOwnership',
    );
  });

  it('Public Access Block: BlockPublicAcls, IgnorePublicAcls, BlockPublicPolicy, RestrictPublicBuckets', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acc-pab' }));
    await s3.send(new PutObjectCommand({ Bucket: 'acc-pab', Key: 'pub', Body: 'x', ACL: 'public-read' }));
    const publicPolicy = policy('acc-pab', [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject' }]);
    await s3.send(new PutPublicAccessBlockCommand({ Bucket: 'acc-pab', PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true } }));
    expect((await s3Error(s3.send(new PutObjectCommand({ Bucket: 'acc-pab', Key: 'p2', Body: 'x', ACL: 'public-read' })))).code).toBe('AccessDenied');
    expect(await exists('acc-pab', 'p2')).toBe(false);
    expect((await s3Error(s3.send(new PutBucketPolicyCommand({ Bucket: 'acc-pab', Policy: publicPolicy })))).code).toBe('AccessDenied');
    // an existing public ACL still works until IgnorePublicAcls
    expect((await anon('GET', '/acc-pab/pub')).status).toBe(200);
    await s3.send(new PutPublicAccessBlockCommand({ Bucket: 'acc-pab', PublicAccessBlockConfiguration: { IgnorePublicAcls: true } }));
    expect((await anon('GET', '/acc-pab/pub')).status).toBe(403);
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'acc-pab', Policy: publicPolicy }));
    await s3.send(new PutPublicAccessBlockCommand({ Bucket: 'acc-pab', PublicAccessBlockConfiguration: { RestrictPublicBuckets: true } }));
    expect((await anon('GET', '/acc-pab/pub')).status).toBe(403);
    await s3.send(new DeletePublicAccessBlockCommand({ Bucket: 'acc-pab' }));
    expect((await anon('GET', '/acc-pab/pub')).status).toBe(200);
    const mp = await anon('POST', '/acc-pab/up?uploads');
    expect(mp.status).toBe(403);
    await s3.send(new CreateMultipartUploadCommand({ Bucket: 'acc-pab', Key: 'up' }));
    expect((await s3.send(new ListObjectsV2Command({ Bucket: 'acc-pab' }))).KeyCount).toBe(1);
  });
});

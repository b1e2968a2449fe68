/**
 * The console with three identities (the root, a user with a read-only
 * policy on one bucket, an access key with an inline upload-only policy):
 * each signs in with its own keys; the session says what its policies allow
 * (the pages hide or disable the rest); the actions it may take succeed
 * and every other is AccessDenied. The root manages users, policies (the
 * editor's documents are validated), groups and access keys (the secret is
 * shown once) from the console's Identity API.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, type ConsoleNode, startConsoleNode } from './helpers/console.ts';

let node: ConsoleNode;
let root: string;
beforeAll(async () => {
  node = await startConsoleNode(1);
  root = `${node.console}/svc/console/`;
  await node.s3.send(new CreateBucketCommand({ Bucket: 'pics' }));
  await node.s3.send(new CreateBucketCommand({ Bucket: 'ledger' }));
  await node.s3.send(new PutObjectCommand({ Bucket: 'pics', Key: 'a.jpg', Body: 'a' }));
}, 60_000);
afterAll(async () => {
  await node?.stop();
});

describe('console identities', () => {
  let uploader: { accessKey: string; secretKey: string };

  it('the root creates a policy (validated), a user, a group and an access key from the console; the secret is shown once', async () => {
    const c = new ConsoleClient(root);
    const s = await c.signIn();
    expect(s.status).toBe(200);
    const perms = s.json<{ permissions: Record<string, boolean> }>().permissions;
    expect([perms['admin:CreateUser'], perms['s3:DeleteObject'], perms['admin:ServerInfo']]).toEqual([true, true, true]);
    // the editor's document is validated by the server: a bad one is refused with what is wrong
    const bad = await c.call('PUT', 'api/iam/policies/read-pics', { body: { document: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject"}]}' } });
    expect([bad.status, bad.json<{ code: string }>().code]).toEqual([400, 'MalformedPolicy']);
    const doc = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBucket', 's3:GetBucketLocation'], Resource: ['arn:aws:s3:::pics', 'arn:aws:s3:::pics/*'] }] });
    expect((await c.call('PUT', 'api/iam/policies/read-pics', { body: { document: doc } })).status).toBe(200);
    expect((await c.call('POST', 'api/iam/users', { body: { accessKey: 'viewer', secretKey: 'viewer-secret-1' } })).status).toBe(200);
    expect((await c.call('POST', 'api/iam/groups', { body: { group: 'viewers', members: ['viewer'] } })).status).toBe(204);
    expect((await c.call('POST', 'api/iam/policies/attach', { body: { policies: ['read-pics'], group: 'viewers' } })).json()).toMatchObject({ policiesAttached: ['read-pics'] });
    expect((await c.call('POST', 'api/iam/users', { body: { accessKey: 'writer', secretKey: 'writer-secret-1' } })).status).toBe(200);
    await c.call('POST', 'api/iam/policies/attach', { body: { policies: ['readwrite'], user: 'writer' } });
    const key = await c.call('POST', 'api/iam/accesskeys', {
      body: { user: 'writer', policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::pics/in/*'] }] }), expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    uploader = key.json<{ accessKey: string; secretKey: string }>();
    expect(uploader.secretKey.length).toBe(40);
    const listed = (await c.call('GET', 'api/iam/accesskeys?user=writer')).json<{ accounts: { accessKey: string; expiration: string | null }[] }>().accounts;
    expect(listed.map((a) => a.accessKey)).toEqual([uploader.accessKey]);
    expect(listed[0]!.expiration).not.toBeNull();
    // shown once: no listing carries the secret
    expect((await c.call('GET', 'api/iam/accesskeys?user=writer')).text).not.toContain(uploader.secretKey);
    const users = (await c.call('GET', 'api/iam/users')).json<Record<string, { status: string; memberOf: string[] }>>();
    expect(users['viewer']).toMatchObject({ status: 'enabled', memberOf: ['viewers'] });
    const groups = (await c.call('GET', 'api/iam/groups')).json<{ name: string; policy: string; members: string[] }[]>();
    expect(groups).toEqual([expect.objectContaining({ name: 'viewers', policy: 'read-pics', members: ['viewer'] })]);
  });

  it('the read-only user browses its bucket; deleting, uploading, the cluster and the Identity pages are refused and marked so', async () => {
    const c = new ConsoleClient(root);
    const s = await c.signIn('viewer', 'viewer-secret-1');
    expect(s.status).toBe(200);
    const info = s.json<{ admin: boolean; permissions: Record<string, boolean> }>();
    expect(info.admin).toBe(false);
    expect([info.permissions['s3:DeleteObject'], info.permissions['admin:ListUsers'], info.permissions['s3:CreateBucket']]).toEqual([false, false, false]);
    const onPics = (await c.call('GET', 'api/permissions?bucket=pics')).json<{ permissions: Record<string, boolean> }>().permissions;
    expect([onPics['s3:GetObject'], onPics['s3:ListBucket'], onPics['s3:DeleteObject'], onPics['s3:PutObject']]).toEqual([true, true, false, false]);
    expect((await c.call('GET', 'api/buckets')).json()).toEqual(expect.objectContaining({}));
    const objects = await c.call('GET', 'api/buckets/pics/objects');
    expect(objects.status).toBe(200);
    expect(objects.text).toContain('a.jpg');
    expect((await c.call('GET', 'api/buckets/pics/download?key=a.jpg')).status).toBe(200);
    for (const [method, path, body] of [
      ['DELETE', 'api/buckets/pics/object?key=a.jpg'],
      ['GET', 'api/buckets/ledger/objects'],
      ['POST', 'api/buckets', { name: 'mine' }],
      ['GET', 'api/iam/users'],
      ['POST', 'api/iam/users', { accessKey: 'sneaky', secretKey: 'sneaky-secret' }],
      ['GET', 'api/overview'],
    ] as [string, string, unknown?][]) {
      const r = await c.call(method, path, body !== undefined ? { body } : {});
      expect([method, path, r.status, r.json<{ code: string }>().code]).toEqual([method, path, 403, 'AccessDenied']);
    }
  });

  it('the access key with an upload-only policy signs in and may upload there only', async () => {
    const c = new ConsoleClient(root);
    const s = await c.signIn(uploader.accessKey, uploader.secretKey);
    expect(s.status).toBe(200);
    const up = await c.call('PUT', 'api/buckets/pics/upload?key=in%2Fnew.txt', { raw: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(up.status).toBe(200);
    const elsewhere = await c.call('PUT', 'api/buckets/pics/upload?key=out.txt', { raw: 'x', headers: { 'content-type': 'text/plain' } });
    expect([elsewhere.status, elsewhere.json<{ code: string }>().code]).toEqual([403, 'AccessDenied']);
    expect((await c.call('GET', 'api/buckets/pics/objects')).status).toBe(403);
    expect((await c.call('GET', 'api/iam/users')).status).toBe(403);
  });
});

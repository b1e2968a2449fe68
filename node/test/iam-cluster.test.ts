/**
 * The identity store on a 4-node cluster of real `svc` processes on
 * 127.0.0.N: a user created on node 1 works on node 4 within a second; a
 * node that was down during a change catches up when it returns; two policy
 * edits made at once on different nodes both survive; disabling a user or
 * removing an access key refuses its next request on every node.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/cli/admin/client.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const supported = canUseMountNamespaces();
const NODES = [1, 2, 3, 4];

describe.skipIf(!supported)('identity store on a 4-node cluster', () => {
  let cluster: TestCluster;
  const clients: S3Client[] = [];
  const s3 = (k: number, ak: string, sk: string) => {
    const c = new S3Client({ requestHandler: keepAliveHandler(), endpoint: cluster.url(k), region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: ak, secretAccessKey: sk } });
    clients.push(c);
    return c;
  };
  const adminOn = (k: number) => new AdminClient({ name: `node${k}`, url: cluster.url(k), accessKey: cluster.accessKey, secretKey: cluster.secretKey });
  const read = (k: number, ak: string, sk: string) =>
    s3(k, ak, sk)
      .send(new GetObjectCommand({ Bucket: 'iamc', Key: 'obj' }))
      .then(
        () => 'ok',
        (e: { name?: string }) => e.name ?? 'error',
      );
  const addUser = (k: number, name: string, secret: string) => adminOn(k).encrypted('PUT', 'v3/add-user', { accessKey: name }, { secretKey: secret, status: 'enabled' }, false);
  const attach = (k: number, user: string, policies: string[]) => adminOn(k).encrypted('POST', 'v3/idp/builtin/policy/attach', {}, { policies, user }, true);
  const policyDoc = (bucket: string) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] });

  beforeAll(async () => {
    cluster = await TestCluster.create({ nodes: 4, drivesPerNode: 2 });
    await Promise.all(NODES.map((k) => cluster.start(k)));
    await Promise.all(NODES.map((k) => cluster.waitReady(k, 40_000)));
    const root = s3(1, cluster.accessKey, cluster.secretKey);
    await root.send(new CreateBucketCommand({ Bucket: 'iamc' }));
    await root.send(new PutObjectCommand({ Bucket: 'iamc', Key: 'obj', Body: 'data' }));
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await cluster?.close();
  });

  it('a user created on node 1 works on node 4 within a second', async () => {
    await addUser(1, 'quick', 'quick-secret-1');
    await attach(1, 'quick', ['readonly']);
    const done = Date.now();
    let first: number | undefined;
    while (Date.now() - done < 1_000) {
      if ((await read(4, 'quick', 'quick-secret-1')) === 'ok') {
        first = Date.now() - done;
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(first, 'node 4 did not take the new user within a second').toBeDefined();
    for (const k of NODES) expect(await read(k, 'quick', 'quick-secret-1')).toBe('ok');
  });

  it('a node that was down during a change catches up when it returns', async () => {
    await cluster.stop(3);
    await addUser(1, 'late', 'late-secret-1');
    await attach(2, 'late', ['readonly']);
    expect(await read(4, 'late', 'late-secret-1')).toBe('ok');
    await cluster.start(3);
    await cluster.waitReady(3, 40_000);
    // ready means the identity store was loaded: the change is there at once
    expect(await read(3, 'late', 'late-secret-1')).toBe('ok');
  }, 90_000);

  it('two policy edits made at once on different nodes both survive', async () => {
    await addUser(1, 'both', 'both-secret-1');
    await Promise.all([adminOn(1).request('PUT', 'v3/add-canned-policy', { name: 'edit-a' }, policyDoc('a')), adminOn(2).request('PUT', 'v3/add-canned-policy', { name: 'edit-b' }, policyDoc('b'))]);
    await Promise.all([attach(3, 'both', ['edit-a']), attach(4, 'both', ['edit-b']), attach(1, 'both', ['readonly'])]);
    for (const k of NODES) {
      // madmin-go's current /v4 paths reach the same routes
      const policies = await adminOn(k).json<Record<string, unknown>>('GET', k % 2 === 0 ? 'v4/list-canned-policies' : 'v3/list-canned-policies');
      expect(Object.keys(policies.value)).toEqual(expect.arrayContaining(['edit-a', 'edit-b']));
      const info = await adminOn(k).json<{ policyName: string }>('GET', 'v3/user-info', { accessKey: 'both' });
      expect(info.value.policyName.split(',').sort()).toEqual(['edit-a', 'edit-b', 'readonly']);
    }
  });

  it('disabling a user and removing an access key refuse the next request on every node', async () => {
    await addUser(2, 'gone', 'gone-secret-1');
    await attach(2, 'gone', ['readonly']);
    const key = (await adminOn(3).encrypted('PUT', 'v3/add-service-account', {}, { targetUser: 'gone' }, true)).value as { credentials: { accessKey: string; secretKey: string } };
    const ak = key.credentials;
    for (const k of NODES) {
      expect(await read(k, 'gone', 'gone-secret-1')).toBe('ok');
      expect(await read(k, ak.accessKey, ak.secretKey)).toBe('ok');
    }
    await adminOn(4).request('DELETE', 'v3/delete-service-account', { accessKey: ak.accessKey });
    for (const k of NODES) expect(await read(k, ak.accessKey, ak.secretKey)).toBe('InvalidAccessKeyId');
    await adminOn(1).request('PUT', 'v3/set-user-status', { accessKey: 'gone', status: 'disabled' });
    for (const k of NODES) expect(await read(k, 'gone', 'gone-secret-1')).toBe('InvalidAccessKeyId');
  });
});

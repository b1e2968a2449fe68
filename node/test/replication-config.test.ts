/**
 * Bucket replication configuration through @aws-sdk/client-s3 against the
 * real server (engine over real drives, real HTTP): Put/Get/Delete with
 * S3's answers and errors, the remote targets they name, and versioning
 * that cannot be suspended under a configuration.
 */
import {
  CreateBucketCommand,
  DeleteBucketReplicationCommand,
  GetBucketReplicationCommand,
  PutBucketReplicationCommand,
  PutBucketVersioningCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTargets } from '../src/replication/targets.ts';
import { clientOf, s3Error } from './helpers/governance.ts';
import { type S3Server, start } from './helpers/s3-server.ts';

let srv: S3Server;
let s3: S3Client;
const ARN = 'arn:svc:replication::0123456789abcdef:dst';

beforeAll(async () => {
  srv = await start();
  s3 = clientOf(srv);
  await s3.send(new CreateBucketCommand({ Bucket: 'src' }));
  await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
  const target = { arn: ARN, sourceBucket: 'src', endpoint: '127.0.0.1:1', secure: false, targetBucket: 'dst', accessKey: 'a', secretKey: 'b', region: 'us-east-1', bandwidthLimit: 0, healthCheckSeconds: 5, created: 0 };
  await srv.objectLayer.setBucketConfig('src', 'replication-targets', encodeTargets({ targets: [target] }));
});

afterAll(async () => {
  await srv?.stop();
});

const rules = (bucket = ARN) => ({
  Role: '',
  Rules: [
    {
      ID: 'docs',
      Priority: 2,
      Status: 'Enabled' as const,
      Filter: { And: { Prefix: 'docs/', Tags: [{ Key: 'dr', Value: 'yes' }] } },
      DeleteMarkerReplication: { Status: 'Disabled' as const },
      Destination: { Bucket: bucket, StorageClass: 'STANDARD' as const },
      ExistingObjectReplication: { Status: 'Enabled' as const },
    },
    { ID: 'all', Priority: 1, Status: 'Enabled' as const, Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' as const }, Destination: { Bucket: 'arn:aws:s3:::dst' } },
  ],
});

describe('PutBucketReplication / Get / Delete', () => {
  it('answers as S3 before and after a configuration exists', async () => {
    expect(await s3Error(s3.send(new GetBucketReplicationCommand({ Bucket: 'src' })))).toMatchObject({ code: 'ReplicationConfigurationNotFoundError', status: 404 });
    // Versioning must be on first.
    expect(await s3Error(s3.send(new PutBucketReplicationCommand({ Bucket: 'src', ReplicationConfiguration: rules() })))).toMatchObject({ code: 'InvalidRequest', status: 400, message: "Versioning must be 'Enabled' on the bucket to apply a replication configuration" });
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'src', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutBucketReplicationCommand({ Bucket: 'src', ReplicationConfiguration: rules() }));
    const got = await s3.send(new GetBucketReplicationCommand({ Bucket: 'src' }));
    expect(got.ReplicationConfiguration?.Rules).toEqual([
      {
        ID: 'docs',
        Priority: 2,
        Status: 'Enabled',
        Filter: { And: { Prefix: 'docs/', Tags: [{ Key: 'dr', Value: 'yes' }] } },
        DeleteMarkerReplication: { Status: 'Disabled' },
        Destination: { Bucket: ARN, StorageClass: 'STANDARD' },
        ExistingObjectReplication: { Status: 'Enabled' },
      },
      // arn:aws:s3:::dst was resolved to the target replicating to dst.
      { ID: 'all', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' }, Destination: { Bucket: ARN } },
    ]);
    // Suspending versioning under a configuration is refused; nothing changes.
    expect(await s3Error(s3.send(new PutBucketVersioningCommand({ Bucket: 'src', VersioningConfiguration: { Status: 'Suspended' } })))).toMatchObject({ code: 'InvalidBucketState', status: 409 });
    expect((await srv.objectLayer.getBucketInfo('src')).versioning).toBe('Enabled');
  });

  it('refuses a bad document and keeps the one in place', async () => {
    const before = (await s3.send(new GetBucketReplicationCommand({ Bucket: 'src' }))).ReplicationConfiguration;
    expect(await s3Error(s3.send(new PutBucketReplicationCommand({ Bucket: 'src', ReplicationConfiguration: rules('arn:svc:replication::ffff:nope') })))).toMatchObject({ code: 'InvalidRequest', status: 400 });
    const noDm = rules();
    delete (noDm.Rules[1] as { DeleteMarkerReplication?: unknown }).DeleteMarkerReplication;
    expect(await s3Error(s3.send(new PutBucketReplicationCommand({ Bucket: 'src', ReplicationConfiguration: noDm })))).toMatchObject({
      code: 'InvalidRequest',
      message: 'DeleteMarkerReplication must be specified for this version of Cross Region Replication configuration schema.',
    });
    expect(await s3Error(s3.send(new PutBucketReplicationCommand({ Bucket: 'nosuch', ReplicationConfiguration: rules() })))).toMatchObject({ code: 'NoSuchBucket', status: 404 });
    // A bucket without targets has nothing to replicate to.
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'plain', VersioningConfiguration: { Status: 'Enabled' } }));
    expect(await s3Error(s3.send(new PutBucketReplicationCommand({ Bucket: 'plain', ReplicationConfiguration: rules() })))).toMatchObject({ code: 'InvalidRequest', status: 400 });
    expect((await s3.send(new GetBucketReplicationCommand({ Bucket: 'src' }))).ReplicationConfiguration).toEqual(before);
  });

  it('deletes the configuration; versioning can then be suspended', async () => {
    await s3.send(new DeleteBucketReplicationCommand({ Bucket: 'src' }));
    expect(await s3Error(s3.send(new GetBucketReplicationCommand({ Bucket: 'src' })))).toMatchObject({ code: 'ReplicationConfigurationNotFoundError', status: 404 });
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'src', VersioningConfiguration: { Status: 'Suspended' } }));
    expect((await srv.objectLayer.getBucketInfo('src')).versioning).toBe('Suspended');
  });
});

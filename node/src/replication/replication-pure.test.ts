import { describe, expect, it } from 'vitest';
import { parseXml } from '../api/s3/xml.ts';
import { SvcError } from '../util/errors.ts';
import { decodeReplicationConfig, encodeReplicationConfig, parseReplicationConfig, type ReplicationConfig, replicationConfigXml, selectRules } from './config.ts';
import { pendingMeta, remoteVersionId, replicaMeta, replicationStatus, withTargetStatus } from '../object/replication-status.ts';
import { decodeTargets, encodeTargets, parseBucketTarget, parseRemoteUrl, toWire } from './targets.ts';
import { toXml } from '../api/s3/xml.ts';

const A = 'arn:svc:replication::aaaa:dst';
const B = 'arn:svc:replication::bbbb:other';
const ctx = { targets: [{ arn: A, targetBucket: 'dst' }, { arn: B, targetBucket: 'other' }] };

function parse(xml: string, versioning = 'Enabled'): ReplicationConfig {
  return parseReplicationConfig(parseXml(`<ReplicationConfiguration>${xml}</ReplicationConfiguration>`, 'ReplicationConfiguration'), ctx, versioning);
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof SvcError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'no error';
}

const rule = (inner: string) => `<Rule>${inner}</Rule>`;
const dest = (bucket = A, sc = '') => `<Destination><Bucket>${bucket}</Bucket>${sc ? `<StorageClass>${sc}</StorageClass>` : ''}</Destination>`;
const dm = (s = 'Disabled') => `<DeleteMarkerReplication><Status>${s}</Status></DeleteMarkerReplication>`;

describe('replication configuration', () => {
  it('parses a V2 rule with every element and returns it as S3 does', () => {
    const c = parse(
      `<Role>arn:aws:iam::1:role/r</Role>${rule(
        `<ID>r1</ID><Priority>3</Priority><Status>Enabled</Status><Filter><And><Prefix>img/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k2</Key><Value></Value></Tag></And></Filter>${dm()}<DeleteReplication><Status>Enabled</Status></DeleteReplication>${dest(A, 'REDUCED_REDUNDANCY')}<ExistingObjectReplication><Status>Enabled</Status></ExistingObjectReplication><SourceSelectionCriteria><ReplicaModifications><Status>Enabled</Status></ReplicaModifications></SourceSelectionCriteria>`,
      )}`,
    );
    expect(c.rules[0]).toEqual({
      id: 'r1',
      priority: 3,
      status: 'Enabled',
      prefix: 'img/',
      tags: [
        { key: 'k', value: 'v' },
        { key: 'k2', value: '' },
      ],
      schema: 'v2',
      deleteMarkers: false,
      deletes: true,
      existingObjects: true,
      replicaModifications: true,
      destination: A,
      storageClass: 'REDUCED_REDUNDANCY',
    });
    expect(decodeReplicationConfig(encodeReplicationConfig(c))).toEqual(c);
    const xml = toXml('ReplicationConfiguration', replicationConfigXml(c) as never);
    expect(xml).toContain('<Filter><And><Prefix>img/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag>');
    expect(xml).toContain('<DeleteReplication><Status>Enabled</Status></DeleteReplication>');
    // What GET returns parses back to the same rules.
    expect(parseReplicationConfig(parseXml(xml, 'ReplicationConfiguration'), ctx, 'Enabled')).toEqual(c);
  });

  it('resolves arn:aws:s3:::bucket and MinIO ARNs to the target, gives rules an ID', () => {
    const c = parse(rule(`<Status>Enabled</Status><Filter><Prefix></Prefix></Filter>${dm('Enabled')}${dest('arn:aws:s3:::other')}`) + rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest('arn:minio:replication::aaaa:dst')}`));
    expect(c.rules.map((r) => [r.id, r.destination])).toEqual([
      ['rule-1', B],
      ['rule-2', A],
    ]);
  });

  it('refuses what S3 refuses, with its errors', () => {
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest()}`), 'Suspended'))).toBe("InvalidRequest: Versioning must be 'Enabled' on the bucket to apply a replication configuration");
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest()}`), 'Unversioned'))).toMatch(/^InvalidRequest/);
    expect(code(() => parse(''))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>On</Status><Filter/>${dm()}${dest()}`)))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dest()}`)))).toBe('InvalidRequest: DeleteMarkerReplication must be specified for this version of Cross Region Replication configuration schema.');
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter><Tag><Key>a</Key><Value>b</Value></Tag></Filter>${dm('Enabled')}${dest()}`)))).toMatch(/^InvalidRequest: Delete marker replication is not supported/);
    expect(code(() => parse(rule(`<ID>${'x'.repeat(256)}</ID><Status>Enabled</Status><Filter/>${dm()}${dest()}`)))).toBe('InvalidArgument: ID length should not exceed allowed limit of 255');
    expect(code(() => parse(rule(`<ID>a</ID><Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest()}`) + rule(`<ID>a</ID><Priority>2</Priority><Status>Enabled</Status><Filter/>${dm()}${dest()}`)))).toBe('InvalidArgument: Rule Id must be unique.');
    expect(code(() => parse(rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest()}`) + rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest()}`)))).toMatch(/^InvalidRequest: Found duplicate priority 1/);
    // Same priority to different destinations is fine.
    expect(parse(rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest()}`) + rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest(B)}`)).rules).toHaveLength(2);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter><Prefix>a</Prefix><Tag><Key>a</Key><Value>b</Value></Tag></Filter>${dm()}${dest()}`)))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Prefix>a</Prefix><Filter/>${dm()}${dest()}`)))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest('arn:svc:replication::zzzz:dst')}`)))).toMatch(/^InvalidRequest: Destination bucket must be a remote target/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest('arn:aws:s3:::nope')}`)))).toMatch(/^InvalidRequest: Destination bucket must exist/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest('dst')}`)))).toBe('InvalidArgument: Invalid bucket ARN.');
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}${dest(A, 'COLD')}`)))).toMatch(/^InvalidStorageClass/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter/>${dm()}`)))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Prefix>a</Prefix>${dest()}`) + rule(`<Status>Enabled</Status><Prefix>ab</Prefix>${dest()}`)))).toMatch(/^InvalidRequest: Found overlapping prefixes/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Prefix>a</Prefix>${dest()}`) + rule(`<Priority>1</Priority><Status>Enabled</Status><Filter/>${dm()}${dest(B)}`)))).toMatch(/^MalformedXML/);
    expect(code(() => parse(rule(`<Status>Enabled</Status><Filter><And><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></And></Filter>${dm()}${dest()}`)))).toMatch(/^InvalidArgument: Duplicate Tag Keys/);
  });

  it('selects the highest-priority matching rule per destination; deletes by their own switches', () => {
    const c = parse(
      rule(`<ID>all</ID><Priority>1</Priority><Status>Enabled</Status><Filter/>${dm('Enabled')}${dest()}`) +
        rule(`<ID>logs</ID><Priority>5</Priority><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter>${dm()}<DeleteReplication><Status>Enabled</Status></DeleteReplication>${dest()}`) +
        rule(`<ID>tagged</ID><Priority>9</Priority><Status>Enabled</Status><Filter><Tag><Key>dr</Key><Value>yes</Value></Tag></Filter>${dm()}${dest(B)}<ExistingObjectReplication><Status>Enabled</Status></ExistingObjectReplication>`) +
        rule(`<ID>off</ID><Priority>10</Priority><Status>Disabled</Status><Filter/>${dm()}${dest(B)}`),
    );
    const ids = (op: Parameters<typeof selectRules>[1]) => selectRules(c, op).map((r) => r.id).sort();
    expect(ids({ kind: 'object', key: 'a.txt', tags: '' })).toEqual(['all']);
    expect(ids({ kind: 'object', key: 'logs/1', tags: 'dr=yes' })).toEqual(['logs', 'tagged']);
    expect(ids({ kind: 'object', key: 'x', tags: 'dr=no' })).toEqual(['all']);
    // A resync replicates only what rules with ExistingObjectReplication cover.
    expect(ids({ kind: 'object', key: 'x', tags: 'dr=yes', existing: true })).toEqual(['tagged']);
    // Delete markers: the winning rule's switch (logs/ wins and has it off).
    expect(ids({ kind: 'delete-marker', key: 'a' })).toEqual(['all']);
    expect(ids({ kind: 'delete-marker', key: 'logs/1' })).toEqual([]);
    expect(ids({ kind: 'delete-version', key: 'logs/1' })).toEqual(['logs']);
    expect(ids({ kind: 'delete-version', key: 'a' })).toEqual([]);
    expect(selectRules(undefined, { kind: 'object', key: 'a', tags: '' })).toEqual([]);
  });
});

describe('replication status', () => {
  it('aggregates per-destination states into the S3 header', () => {
    let m = { ...pendingMeta([A, B]) };
    expect(replicationStatus(m)).toBe('PENDING');
    m = withTargetStatus(m, A, 'COMPLETED');
    expect(replicationStatus(m)).toBe('PENDING');
    m = withTargetStatus(m, B, 'FAILED');
    expect(replicationStatus(m)).toBe('FAILED');
    m = withTargetStatus(m, B, 'COMPLETED', 'remote-vid');
    expect(replicationStatus(m)).toBe('COMPLETED');
    expect(remoteVersionId(m, B)).toBe('remote-vid');
    expect(remoteVersionId(m, A)).toBeUndefined();
    expect(replicationStatus({})).toBeUndefined();
    expect(replicationStatus(replicaMeta(1))).toBe('REPLICA');
  });
});

describe('remote targets', () => {
  const body = { sourcebucket: 'src', endpoint: '127.0.0.2:9000', credentials: { accessKey: 'ak', secretKey: 'sk' }, targetbucket: 'dst', secure: false, type: 'replication', bandwidthlimit: 1048576, healthCheckDuration: 10e9, replicationSync: false, disableProxy: false };
  it('checks a madmin BucketTarget and answers it back without the secret', () => {
    const t = parseBucketTarget(body, 'src');
    expect(t).toMatchObject({ endpoint: '127.0.0.2:9000', targetBucket: 'dst', accessKey: 'ak', secretKey: 'sk', bandwidthLimit: 1048576, healthCheckSeconds: 10, region: 'us-east-1' });
    const w = toWire({ ...t, arn: A, created: 0 }, { online: true, lastOnline: 0, downtimeMs: 2, latency: { curr: 1, avg: 1, max: 3 } });
    expect(w.credentials).toEqual({ accessKey: 'ak' });
    expect(w).toMatchObject({ arn: A, isOnline: true, bandwidthlimit: 1048576, healthCheckDuration: 10e9, totalDowntime: 2e6, lastOnline: '1970-01-01T00:00:00.000Z' });
    expect(decodeTargets(encodeTargets({ targets: [{ ...t, arn: A, created: 0 }] })).targets[0]!.arn).toBe(A);
  });
  it('refuses bad targets', () => {
    expect(code(() => parseBucketTarget({ ...body, endpoint: 'http://x:1' }, 'src'))).toMatch(/^XSvcReplicationTargetInvalid: endpoint/);
    expect(code(() => parseBucketTarget({ ...body, targetbucket: 'A' }, 'src'))).toMatch(/targetbucket/);
    expect(code(() => parseBucketTarget({ ...body, credentials: { accessKey: 'ak' } }, 'src'))).toMatch(/credentials/);
    expect(code(() => parseBucketTarget({ ...body, sourcebucket: 'other' }, 'src'))).toMatch(/sourcebucket/);
    expect(code(() => parseBucketTarget({ ...body, replicationSync: true }, 'src'))).toMatch(/synchronous/);
    expect(code(() => parseBucketTarget({ ...body, type: 'ilm' }, 'src'))).toMatch(/type/);
    expect(code(() => parseBucketTarget({ ...body, bandwidthlimit: -1 }, 'src'))).toMatch(/bandwidthlimit/);
  });
  it('parses the --remote-bucket URL as mc takes it', () => {
    expect(parseRemoteUrl('https://ak:s%2Fk@host.example:9000/dst')).toEqual({ secure: true, endpoint: 'host.example:9000', accessKey: 'ak', secretKey: 's/k', bucket: 'dst' });
    expect(code(() => parseRemoteUrl('http://host:9000/dst'))).toMatch(/ACCESS:SECRET/);
    expect(code(() => parseRemoteUrl('ftp://a:b@host/dst'))).toMatch(/http/);
    expect(code(() => parseRemoteUrl('http://a:b@host/'))).toMatch(/bucket/);
  });
});

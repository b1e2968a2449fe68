/**
 * What each S3 operation asks permission for: the policy action, the
 * resource, which ACL (bucket or object) can grant it and with which
 * permission, and the request's condition keys. Pure.
 */
import type { IncomingMessage } from 'node:http';
import type { S3Endpoint, S3Operation } from '../router.ts';
import type { Permission } from './acl.ts';
import type { ConditionContext } from '../../../iam/conditions.ts';
import { addPrincipalKeys } from '../../../iam/context-keys.ts';
import type { Principal } from '../../../iam/principal.ts';
import { requestOrigin } from '../../request-origin.ts';

export interface ActionSpec {
  /** Policy action; a function when it depends on the request (version ids). */
  action: string | ((ep: S3Endpoint) => string);
  /** Resource level: the service, the bucket, or the object. */
  level: 'service' | 'bucket' | 'object';
  /** The ACL that can grant this action and the permission it needs; none for owner-only actions. */
  acl?: { on: 'bucket' | 'object'; permission: Permission };
}

const versioned = (plain: string, version: string) => (ep: S3Endpoint) => (ep.query.has('versionId') ? version : plain);

export const ACTIONS: { [K in S3Operation]: ActionSpec } = {
  ListBuckets: { action: 's3:ListAllMyBuckets', level: 'service' },
  CreateBucket: { action: 's3:CreateBucket', level: 'bucket' },
  HeadBucket: { action: 's3:ListBucket', level: 'bucket', acl: { on: 'bucket', permission: 'READ' } },
  DeleteBucket: { action: 's3:DeleteBucket', level: 'bucket' },
  GetBucketLocation: { action: 's3:GetBucketLocation', level: 'bucket' },
  GetBucketVersioning: { action: 's3:GetBucketVersioning', level: 'bucket' },
  PutBucketVersioning: { action: 's3:PutBucketVersioning', level: 'bucket' },
  GetBucketTagging: { action: 's3:GetBucketTagging', level: 'bucket' },
  PutBucketTagging: { action: 's3:PutBucketTagging', level: 'bucket' },
  DeleteBucketTagging: { action: 's3:PutBucketTagging', level: 'bucket' },
  GetBucketAcl: { action: 's3:GetBucketAcl', level: 'bucket', acl: { on: 'bucket', permission: 'READ_ACP' } },
  PutBucketAcl: { action: 's3:PutBucketAcl', level: 'bucket', acl: { on: 'bucket', permission: 'WRITE_ACP' } },
  GetBucketPolicy: { action: 's3:GetBucketPolicy', level: 'bucket' },
  PutBucketPolicy: { action: 's3:PutBucketPolicy', level: 'bucket' },
  DeleteBucketPolicy: { action: 's3:DeleteBucketPolicy', level: 'bucket' },
  GetBucketPolicyStatus: { action: 's3:GetBucketPolicyStatus', level: 'bucket' },
  GetBucketCors: { action: 's3:GetBucketCORS', level: 'bucket' },
  PutBucketCors: { action: 's3:PutBucketCORS', level: 'bucket' },
  DeleteBucketCors: { action: 's3:PutBucketCORS', level: 'bucket' },
  GetBucketOwnershipControls: { action: 's3:GetBucketOwnershipControls', level: 'bucket' },
  PutBucketOwnershipControls: { action: 's3:PutBucketOwnershipControls', level: 'bucket' },
  DeleteBucketOwnershipControls: { action: 's3:PutBucketOwnershipControls', level: 'bucket' },
  GetPublicAccessBlock: { action: 's3:GetBucketPublicAccessBlock', level: 'bucket' },
  PutPublicAccessBlock: { action: 's3:PutBucketPublicAccessBlock', level: 'bucket' },
  DeletePublicAccessBlock: { action: 's3:PutBucketPublicAccessBlock', level: 'bucket' },
  GetObjectLockConfiguration: { action: 's3:GetBucketObjectLockConfiguration', level: 'bucket' },
  PutObjectLockConfiguration: { action: 's3:PutBucketObjectLockConfiguration', level: 'bucket' },
  GetBucketLifecycle: { action: 's3:GetLifecycleConfiguration', level: 'bucket' },
  PutBucketLifecycle: { action: 's3:PutLifecycleConfiguration', level: 'bucket' },
  DeleteBucketLifecycle: { action: 's3:PutLifecycleConfiguration', level: 'bucket' },
  GetBucketEncryption: { action: 's3:GetEncryptionConfiguration', level: 'bucket' },
  PutBucketEncryption: { action: 's3:PutEncryptionConfiguration', level: 'bucket' },
  DeleteBucketEncryption: { action: 's3:PutEncryptionConfiguration', level: 'bucket' },
  GetBucketNotificationConfiguration: { action: 's3:GetBucketNotification', level: 'bucket' },
  PutBucketNotificationConfiguration: { action: 's3:PutBucketNotification', level: 'bucket' },
  ListenBucketNotification: { action: 's3:ListenBucketNotification', level: 'bucket' },
  GetBucketReplication: { action: 's3:GetReplicationConfiguration', level: 'bucket' },
  GetBucketAccelerateConfiguration: { action: 's3:GetAccelerateConfiguration', level: 'bucket' },
  GetBucketRequestPayment: { action: 's3:GetBucketRequestPayment', level: 'bucket' },
  GetBucketLogging: { action: 's3:GetBucketLogging', level: 'bucket' },
  GetBucketWebsite: { action: 's3:GetBucketWebsite', level: 'bucket' },
  DeleteBucketWebsite: { action: 's3:DeleteBucketWebsite', level: 'bucket' },
  PutBucketReplication: { action: 's3:PutReplicationConfiguration', level: 'bucket' },
  DeleteBucketReplication: { action: 's3:PutReplicationConfiguration', level: 'bucket' },
  ListObjectsV1: { action: 's3:ListBucket', level: 'bucket', acl: { on: 'bucket', permission: 'READ' } },
  ListObjectsV2: { action: 's3:ListBucket', level: 'bucket', acl: { on: 'bucket', permission: 'READ' } },
  ListObjectVersions: { action: 's3:ListBucketVersions', level: 'bucket', acl: { on: 'bucket', permission: 'READ' } },
  ListMultipartUploads: { action: 's3:ListBucketMultipartUploads', level: 'bucket', acl: { on: 'bucket', permission: 'READ' } },
  // per key, in the handler (each key may be allowed or denied on its own)
  DeleteObjects: { action: 's3:DeleteObject', level: 'bucket', acl: { on: 'bucket', permission: 'WRITE' } },
  PutObject: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  PostObject: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  CopyObject: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  GetObject: { action: versioned('s3:GetObject', 's3:GetObjectVersion'), level: 'object', acl: { on: 'object', permission: 'READ' } },
  HeadObject: { action: versioned('s3:GetObject', 's3:GetObjectVersion'), level: 'object', acl: { on: 'object', permission: 'READ' } },
  DeleteObject: { action: versioned('s3:DeleteObject', 's3:DeleteObjectVersion'), level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  GetObjectTagging: { action: versioned('s3:GetObjectTagging', 's3:GetObjectVersionTagging'), level: 'object' },
  PutObjectTagging: { action: versioned('s3:PutObjectTagging', 's3:PutObjectVersionTagging'), level: 'object' },
  DeleteObjectTagging: { action: versioned('s3:DeleteObjectTagging', 's3:DeleteObjectVersionTagging'), level: 'object' },
  GetObjectAcl: { action: versioned('s3:GetObjectAcl', 's3:GetObjectVersionAcl'), level: 'object', acl: { on: 'object', permission: 'READ_ACP' } },
  PutObjectAcl: { action: versioned('s3:PutObjectAcl', 's3:PutObjectVersionAcl'), level: 'object', acl: { on: 'object', permission: 'WRITE_ACP' } },
  GetObjectAttributes: { action: versioned('s3:GetObjectAttributes', 's3:GetObjectVersionAttributes'), level: 'object', acl: { on: 'object', permission: 'READ' } },
  GetObjectRetention: { action: 's3:GetObjectRetention', level: 'object' },
  PutObjectRetention: { action: 's3:PutObjectRetention', level: 'object' },
  GetObjectLegalHold: { action: 's3:GetObjectLegalHold', level: 'object' },
  PutObjectLegalHold: { action: 's3:PutObjectLegalHold', level: 'object' },
  CreateMultipartUpload: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  UploadPart: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  UploadPartCopy: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  CompleteMultipartUpload: { action: 's3:PutObject', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  AbortMultipartUpload: { action: 's3:AbortMultipartUpload', level: 'object', acl: { on: 'bucket', permission: 'WRITE' } },
  ListParts: { action: 's3:ListMultipartUploadParts', level: 'object', acl: { on: 'bucket', permission: 'READ' } },
};

export function actionOf(ep: S3Endpoint): string {
  const a = ACTIONS[ep.op].action;
  return typeof a === 'string' ? a : a(ep);
}

export function resourceArn(bucket: string, key?: string): string {
  if (bucket === '') return 'arn:aws:s3:::*';
  return key === undefined || key === '' ? `arn:aws:s3:::${bucket}` : `arn:aws:s3:::${bucket}/${key}`;
}

/** Request headers that policies can test as `s3:<header>`. */
const HEADER_KEYS = [
  'x-amz-acl',
  'x-amz-content-sha256',
  'x-amz-copy-source',
  'x-amz-metadata-directive',
  'x-amz-server-side-encryption',
  'x-amz-server-side-encryption-aws-kms-key-id',
  'x-amz-server-side-encryption-customer-algorithm',
  'x-amz-storage-class',
  'x-amz-grant-read',
  'x-amz-grant-write',
  'x-amz-grant-read-acp',
  'x-amz-grant-write-acp',
  'x-amz-grant-full-control',
  'x-amz-object-ownership',
];

export interface RequestFacts {
  req: IncomingMessage;
  ep: S3Endpoint;
  principal: Principal;
  /** Whether the client used TLS (`requestOrigin`: to this node, or to a trusted proxy that says so). */
  secure: boolean;
  now: number;
  authType: 'REST-HEADER' | 'REST-QUERY-STRING' | 'POST' | undefined;
  /** `s3:signatureversion`: `AWS` for Signature Version 2; SigV4 otherwise. */
  signatureV2?: boolean;
  /** Extra keys (POST form fields, tags from a tagging header). */
  extra?: Record<string, string[]>;
}

/** The condition keys of a request (names lower-cased). */
export function conditionContext(f: RequestFacts): ConditionContext {
  const m = new Map<string, string[]>();
  const set = (k: string, v: string | undefined) => {
    if (v !== undefined) m.set(k, [v]);
  };
  set('aws:sourceip', requestOrigin(f.req).sourceIp);
  set('aws:securetransport', String(f.secure));
  set('aws:currenttime', new Date(f.now).toISOString());
  set('aws:epochtime', String(Math.floor(f.now / 1000)));
  set('aws:useragent', f.req.headers['user-agent']);
  set('aws:referer', f.req.headers.referer);
  addPrincipalKeys(m, f.principal);
  if (f.authType) {
    set('s3:authtype', f.authType);
    set('s3:signatureversion', f.signatureV2 ? 'AWS' : 'AWS4-HMAC-SHA256');
  }
  const q = f.ep.query;
  if (f.ep.op === 'ListObjectsV1' || f.ep.op === 'ListObjectsV2' || f.ep.op === 'ListObjectVersions' || f.ep.op === 'ListMultipartUploads') {
    // an absent prefix is the empty prefix, as S3 evaluates s3:prefix
    set('s3:prefix', q.get('prefix') ?? '');
    set('s3:delimiter', q.get('delimiter'));
    set('s3:max-keys', q.get('max-keys'));
  }
  set('s3:versionid', q.get('versionId'));
  for (const h of HEADER_KEYS) {
    const v = f.req.headers[h];
    if (v !== undefined) m.set(`s3:${h}`, Array.isArray(v) ? v : [v]);
  }
  // object lock keys (s3:object-lock-*), from the write's headers
  const lockMode = f.req.headers['x-amz-object-lock-mode'];
  const lockUntil = f.req.headers['x-amz-object-lock-retain-until-date'];
  if (typeof lockMode === 'string') set('s3:object-lock-mode', lockMode);
  if (typeof lockUntil === 'string') {
    set('s3:object-lock-retain-until-date', lockUntil);
    const t = Date.parse(lockUntil);
    if (Number.isFinite(t)) set('s3:object-lock-remaining-retention-days', String(Math.max(0, Math.ceil((t - f.now) / 86_400_000))));
  }
  const hold = f.req.headers['x-amz-object-lock-legal-hold'];
  if (typeof hold === 'string') set('s3:object-lock-legal-hold', hold);
  const tagging = f.req.headers['x-amz-tagging'];
  if (typeof tagging === 'string') {
    const tags = new URLSearchParams(tagging);
    for (const [k, v] of tags) m.set(`s3:requestobjecttag/${k.toLowerCase()}`, [v]);
    m.set('s3:requestobjecttagkeys', [...tags.keys()]);
  }
  for (const [k, v] of Object.entries(f.extra ?? {})) m.set(k.toLowerCase(), v);
  return m;
}

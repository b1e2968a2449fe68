/**
 * Every action a policy may name, by service, and the check that an
 * `Action` / `NotAction` entry names at least one of them. Pure data and
 * one matcher; `policy.ts` refuses a document whose entry names nothing, so
 * a misspelled action (`s3:GetObjcet`) is an error when the policy is
 * written instead of a grant that silently applies to nothing.
 *
 * The lists are complete on purpose, not limited to what svc implements:
 * a policy written for AWS (by hand, by Terraform, by a backup tool) or for
 * MinIO must be accepted as it is.
 *
 * - `s3`: the actions of the AWS Service Authorization Reference for
 *   Amazon S3 (service prefix `s3`), plus the ones MinIO adds
 *   (`s3:ListenBucketNotification`, which svc evaluates, and the rest of
 *   MinIO's extensions).
 * - `admin`: MinIO's admin API actions (svc's admin routes ask for these
 *   names; the ones svc has no route for are accepted and grant nothing).
 * - `kms`: AWS KMS's actions and MinIO's KMS actions.
 * - `sts`: AWS STS's actions.
 *
 * Names are case-insensitive, as in AWS; `*` matches any run of characters
 * and `?` one character. Facts, not code, come from those references.
 */
import { wildcardMatch } from './conditions.ts';

export type PolicyService = 's3' | 'admin' | 'kms' | 'sts';

const S3_AWS = [
  'AbortMultipartUpload',
  'AllowVendedLogDeliveryForResource',
  'AssociateAccessGrantsIdentityCenter',
  'BypassGovernanceRetention',
  'CreateAccessGrant',
  'CreateAccessGrantsInstance',
  'CreateAccessGrantsLocation',
  'CreateAccessPoint',
  'CreateAccessPointForObjectLambda',
  'CreateBucket',
  'CreateBucketMetadataTableConfiguration',
  'CreateJob',
  'CreateMultiRegionAccessPoint',
  'CreateStorageLensGroup',
  'DeleteAccessGrant',
  'DeleteAccessGrantsInstance',
  'DeleteAccessGrantsInstanceResourcePolicy',
  'DeleteAccessGrantsLocation',
  'DeleteAccessPoint',
  'DeleteAccessPointForObjectLambda',
  'DeleteAccessPointPolicy',
  'DeleteAccessPointPolicyForObjectLambda',
  'DeleteBucket',
  'DeleteBucketMetadataTableConfiguration',
  'DeleteBucketPolicy',
  'DeleteBucketWebsite',
  'DeleteJobTagging',
  'DeleteMultiRegionAccessPoint',
  'DeleteObject',
  'DeleteObjectAnnotation',
  'DeleteObjectTagging',
  'DeleteObjectVersion',
  'DeleteObjectVersionAnnotation',
  'DeleteObjectVersionTagging',
  'DeleteStorageLensConfiguration',
  'DeleteStorageLensConfigurationTagging',
  'DeleteStorageLensGroup',
  'DescribeJob',
  'DescribeMultiRegionAccessPointOperation',
  'DissociateAccessGrantsIdentityCenter',
  'GetAccelerateConfiguration',
  'GetAccessGrant',
  'GetAccessGrantsInstance',
  'GetAccessGrantsInstanceForPrefix',
  'GetAccessGrantsInstanceResourcePolicy',
  'GetAccessGrantsLocation',
  'GetAccessPoint',
  'GetAccessPointConfigurationForObjectLambda',
  'GetAccessPointForObjectLambda',
  'GetAccessPointPolicy',
  'GetAccessPointPolicyForObjectLambda',
  'GetAccessPointPolicyStatus',
  'GetAccessPointPolicyStatusForObjectLambda',
  'GetAccountPublicAccessBlock',
  'GetAnalyticsConfiguration',
  'GetBucketAbac',
  'GetBucketAcl',
  'GetBucketCORS',
  'GetBucketLocation',
  'GetBucketLogging',
  'GetBucketMetadataTableConfiguration',
  'GetBucketNotification',
  'GetBucketObjectLockConfiguration',
  'GetBucketOwnershipControls',
  'GetBucketPolicy',
  'GetBucketPolicyStatus',
  'GetBucketPublicAccessBlock',
  'GetBucketRequestPayment',
  'GetBucketTagging',
  'GetBucketVersioning',
  'GetBucketWebsite',
  'GetDataAccess',
  'GetEncryptionConfiguration',
  'GetIntelligentTieringConfiguration',
  'GetInventoryConfiguration',
  'GetJobTagging',
  'GetLifecycleConfiguration',
  'GetMetricsConfiguration',
  'GetMultiRegionAccessPoint',
  'GetMultiRegionAccessPointPolicy',
  'GetMultiRegionAccessPointPolicyStatus',
  'GetMultiRegionAccessPointRoutes',
  'GetObject',
  'GetObjectAcl',
  'GetObjectAnnotation',
  'GetObjectAttributes',
  'GetObjectLegalHold',
  'GetObjectRetention',
  'GetObjectTagging',
  'GetObjectTorrent',
  'GetObjectVersion',
  'GetObjectVersionAcl',
  'GetObjectVersionAnnotation',
  'GetObjectVersionAnnotationForReplication',
  'GetObjectVersionAttributes',
  'GetObjectVersionForReplication',
  'GetObjectVersionTagging',
  'GetObjectVersionTorrent',
  'GetReplicationConfiguration',
  'GetStorageLensConfiguration',
  'GetStorageLensConfigurationTagging',
  'GetStorageLensDashboard',
  'GetStorageLensGroup',
  'InitiateReplication',
  'ListAccessGrants',
  'ListAccessGrantsInstances',
  'ListAccessGrantsLocations',
  'ListAccessPoints',
  'ListAccessPointsForObjectLambda',
  'ListAllMyBuckets',
  'ListBucket',
  'ListBucketMultipartUploads',
  'ListBucketVersions',
  'ListCallerAccessGrants',
  'ListJobs',
  'ListMultiRegionAccessPoints',
  'ListMultipartUploadParts',
  'ListObjectAnnotations',
  'ListObjectVersionAnnotations',
  'ListStorageLensConfigurations',
  'ListStorageLensGroups',
  'ListTagsForResource',
  'ObjectOwnerOverrideToBucketOwner',
  'PauseReplication',
  'PutAccelerateConfiguration',
  'PutAccessGrantsInstanceResourcePolicy',
  'PutAccessPointConfigurationForObjectLambda',
  'PutAccessPointPolicy',
  'PutAccessPointPolicyForObjectLambda',
  'PutAccessPointPublicAccessBlock',
  'PutAccountPublicAccessBlock',
  'PutAnalyticsConfiguration',
  'PutBucketAbac',
  'PutBucketAcl',
  'PutBucketCORS',
  'PutBucketLogging',
  'PutBucketNotification',
  'PutBucketObjectLockConfiguration',
  'PutBucketOwnershipControls',
  'PutBucketPolicy',
  'PutBucketPublicAccessBlock',
  'PutBucketRequestPayment',
  'PutBucketTagging',
  'PutBucketVersioning',
  'PutBucketWebsite',
  'PutEncryptionConfiguration',
  'PutIntelligentTieringConfiguration',
  'PutInventoryConfiguration',
  'PutJobTagging',
  'PutLifecycleConfiguration',
  'PutMetricsConfiguration',
  'PutMultiRegionAccessPointPolicy',
  'PutObject',
  'PutObjectAcl',
  'PutObjectAnnotation',
  'PutObjectLegalHold',
  'PutObjectRetention',
  'PutObjectTagging',
  'PutObjectVersionAcl',
  'PutObjectVersionAnnotation',
  'PutObjectVersionTagging',
  'PutReplicationConfiguration',
  'PutStorageLensConfiguration',
  'PutStorageLensConfigurationTagging',
  'ReplicateDelete',
  'ReplicateObject',
  'ReplicateObjectAnnotation',
  'ReplicateTags',
  'RestoreObject',
  'SubmitMultiRegionAccessPointRoutes',
  'TagResource',
  'UntagResource',
  'UpdateAccessGrantsLocation',
  'UpdateBucketMetadataAnnotationTableConfiguration',
  'UpdateBucketMetadataInventoryTableConfiguration',
  'UpdateBucketMetadataJournalTableConfiguration',
  'UpdateJobPriority',
  'UpdateJobStatus',
  'UpdateObjectEncryption',
  'UpdateStorageLensGroup',
];

/** MinIO's own S3 actions (its policies and `mc` use them). */
const S3_MINIO = [
  'DeleteBucketCors',
  'ForceDeleteBucket',
  'GetBucketQOS',
  'HeadBucket',
  'ListenBucketNotification',
  'ListenNotification',
  'PutBucketQOS',
  'PutObjectFanOut',
  'ResetBucketReplicationState',
];

const ADMIN_MINIO = [
  'AddUserToGroup',
  'AttachUserOrGroupPolicy',
  'BandwidthMonitor',
  'CancelBatchJob',
  'ClusterInfo',
  'ConfigUpdate',
  'ConsoleLog',
  'CreatePolicy',
  'CreateServiceAccount',
  'CreateUser',
  'DataUsageInfo',
  'Decommission',
  'DeletePolicy',
  'DeleteUser',
  'DeltaSharing',
  'DeltaSharingCreateShare',
  'DeltaSharingCreateToken',
  'DeltaSharingDeleteShare',
  'DeltaSharingDeleteToken',
  'DeltaSharingGetShare',
  'DeltaSharingListShares',
  'DeltaSharingListTokens',
  'DeltaSharingUpdateShare',
  'DescribeBatchJob',
  'DisableGroup',
  'DisableUser',
  'DriveInfo',
  'DriveList',
  'EnableGroup',
  'EnableUser',
  'ExportBucketMetadata',
  'ExportIAM',
  'ForceUnlock',
  'GenerateBatchJob',
  'GetBucketQuota',
  'GetBucketTarget',
  'GetGroup',
  'GetPolicy',
  'GetUser',
  'Heal',
  'ImportBucketMetadata',
  'ImportIAM',
  'InspectData',
  'InventoryControl',
  'KMSCreateKey',
  'KMSKeyStatus',
  'LicenseInfo',
  'ListBatchJobs',
  'ListGroups',
  'ListServiceAccounts',
  'ListTemporaryAccounts',
  'ListTier',
  'ListUserPolicies',
  'ListUsers',
  'NodeInfo',
  'NodeList',
  'OBDInfo',
  'PoolInfo',
  'PoolList',
  'Profiling',
  'Prometheus',
  'Rebalance',
  'RemoveServiceAccount',
  'RemoveUserFromGroup',
  'ReplicationDiff',
  'ServerInfo',
  'ServerTrace',
  'ServerUpdate',
  'ServiceCordon',
  'ServiceFreeze',
  'ServiceRestart',
  'ServiceStop',
  'SetBucketQuota',
  'SetBucketTarget',
  'SetInfo',
  'SetTier',
  'SiteReplicationAdd',
  'SiteReplicationDisable',
  'SiteReplicationInfo',
  'SiteReplicationOperation',
  'SiteReplicationRemove',
  'SiteReplicationResync',
  'StartBatchJob',
  'StorageInfo',
  'TopLocksInfo',
  'UpdatePolicyAssociation',
  'UpdateServiceAccount',
];

const KMS_AWS = [
  'CancelKeyDeletion',
  'ConnectCustomKeyStore',
  'CreateAlias',
  'CreateCustomKeyStore',
  'CreateGrant',
  'CreateKey',
  'Decrypt',
  'DeleteAlias',
  'DeleteCustomKeyStore',
  'DeleteImportedKeyMaterial',
  'DeriveSharedSecret',
  'DescribeCustomKeyStores',
  'DescribeKey',
  'DisableKey',
  'DisableKeyRotation',
  'DisconnectCustomKeyStore',
  'EnableKey',
  'EnableKeyRotation',
  'Encrypt',
  'GenerateDataKey',
  'GenerateDataKeyPair',
  'GenerateDataKeyPairWithoutPlaintext',
  'GenerateDataKeyWithoutPlaintext',
  'GenerateMac',
  'GenerateRandom',
  'GetKeyLastUsage',
  'GetKeyPolicy',
  'GetKeyRotationStatus',
  'GetParametersForImport',
  'GetPublicKey',
  'ImportKeyMaterial',
  'ListAliases',
  'ListGrants',
  'ListKeyPolicies',
  'ListKeyRotations',
  'ListKeys',
  'ListResourceTags',
  'ListRetirableGrants',
  'PutKeyPolicy',
  'ReEncryptFrom',
  'ReEncryptTo',
  'ReplicateKey',
  'RetireGrant',
  'RevokeGrant',
  'RotateKeyOnDemand',
  'ScheduleKeyDeletion',
  'Sign',
  'TagResource',
  'UntagResource',
  'UpdateAlias',
  'UpdateCustomKeyStore',
  'UpdateKeyDescription',
  'UpdatePrimaryRegion',
  'Verify',
  'VerifyMac',
];

const KMS_MINIO = [
  'API',
  'AssignPolicy',
  'AuditLog',
  'CreateKey',
  'DeleteIdentity',
  'DeleteKey',
  'DeletePolicy',
  'DescribeIdentity',
  'DescribePolicy',
  'DescribeSelfIdentity',
  'Enable',
  'ErrorLog',
  'GetPolicy',
  'ImportKey',
  'KeyRotate',
  'KeyStatus',
  'ListIdentities',
  'ListKeys',
  'ListPolicies',
  'Metrics',
  'SetPolicy',
  'Status',
  'Version',
];

const STS_AWS = [
  'AssumeRole',
  'AssumeRoleWithSAML',
  'AssumeRoleWithWebIdentity',
  'AssumeRoot',
  'DecodeAuthorizationMessage',
  'GetAccessKeyInfo',
  'GetCallerIdentity',
  'GetDelegatedAccessToken',
  'GetFederationToken',
  'GetServiceBearerToken',
  'GetSessionToken',
  'GetWebIdentityToken',
  'SetContext',
  'SetSourceIdentity',
  'TagSession',
];

/** Every action of each service (names only, without the `service:` prefix). */
export const SERVICE_ACTIONS: { readonly [S in PolicyService]: readonly string[] } = {
  s3: [...S3_AWS, ...S3_MINIO],
  admin: ADMIN_MINIO,
  kms: [...new Set([...KMS_AWS, ...KMS_MINIO])],
  sts: STS_AWS,
};

const lower = (names: readonly string[]): ReadonlySet<string> => new Set(names.map((a) => a.toLowerCase()));

/** The names of each service, lower-cased, for entries without wildcards. */
const LOWER: { readonly [S in PolicyService]: ReadonlySet<string> } = {
  s3: lower(SERVICE_ACTIONS.s3),
  admin: lower(SERVICE_ACTIONS.admin),
  kms: lower(SERVICE_ACTIONS.kms),
  sts: lower(SERVICE_ACTIONS.sts),
};

const SHAPE = /^([A-Za-z0-9-]+):([A-Za-z*?]+)$/;

/** Why an action entry names nothing; undefined when it names at least one action. */
export type ActionProblem =
  /** Not `*` nor `<service>:<name>` (letters, `*` and `?` only in the name). */
  | { readonly kind: 'shape' }
  /** A service the document may not name (unknown, or not allowed in this kind of policy). */
  | { readonly kind: 'service'; readonly service: string }
  /** A known service, but no action of it matches; `suggestion` is a close name for a typo. */
  | { readonly kind: 'unknown'; readonly service: PolicyService; readonly suggestion?: string };

function isService(s: string): s is PolicyService {
  return Object.hasOwn(SERVICE_ACTIONS, s);
}

/**
 * Checks one `Action` / `NotAction` entry against the services a document
 * may name: `*`, or `<service>:<pattern>` whose pattern matches at least
 * one action of the service (case-insensitively).
 */
export function actionProblem(entry: string, services: readonly PolicyService[]): ActionProblem | undefined {
  if (entry === '*') return undefined;
  const m = SHAPE.exec(entry);
  if (!m) return { kind: 'shape' };
  const service = m[1]!.toLowerCase();
  const pattern = m[2]!;
  if (!isService(service) || !services.includes(service)) return { kind: 'service', service: m[1]! };
  if (!/[*?]/.test(pattern)) {
    if (LOWER[service].has(pattern.toLowerCase())) return undefined;
    const suggestion = closest(pattern, SERVICE_ACTIONS[service]);
    return { kind: 'unknown', service, ...(suggestion !== undefined ? { suggestion: `${service}:${suggestion}` } : {}) };
  }
  if (SERVICE_ACTIONS[service].some((a) => wildcardMatch(pattern, a, true))) return undefined;
  return { kind: 'unknown', service };
}

/** The error text for a problem (after "Policy has invalid action '<entry>'"). */
export function describeActionProblem(p: ActionProblem, services: readonly PolicyService[]): string {
  switch (p.kind) {
    case 'shape':
      return 'expecting "*" or <service>:<action>';
    case 'service':
      return services.length === 1 ? `this policy names ${services[0]} actions only` : `the services are ${services.join(', ')}`;
    case 'unknown':
      return `no ${p.service} action has that name${p.suggestion !== undefined ? ` (did you mean ${p.suggestion}?)` : ''}`;
  }
}

/** The action name closest to `name` when it is a likely typo of it (a small edit distance), else undefined. */
function closest(name: string, names: readonly string[]): string | undefined {
  const n = name.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(n.length / 4)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of names) {
    const d = editDistance(n, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance with adjacent transpositions, giving up (returns `cap`) once it reaches `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= cap) return cap;
    prev2 = prev;
    prev = cur;
  }
  return Math.min(prev[b.length]!, cap);
}

/**
 * The one error-code registry of svc.
 *
 * Every error a client can see has a stable `code`, an HTTP status and a
 * message template. Lower layers throw `SvcError` with a registered code; the
 * HTTP edge serialises it (XML on S3 routes, JSON on admin routes). Any other
 * thrown value reaches a client as `InternalError` (never a 4xx by accident).
 *
 * Add codes here, nowhere else.
 */

export interface ErrorDef {
  /** HTTP status the edge answers with. */
  readonly status: number;
  /** Default human message. */
  readonly message: string;
}

export const ERRORS = {
  // ---- generic
  InternalError: { status: 500, message: 'We encountered an internal error, please try again.' },
  NotImplemented: { status: 501, message: 'A header or query you provided implies functionality that is not implemented.' },
  InvalidArgument: { status: 400, message: 'Invalid argument.' },
  InvalidRequest: { status: 400, message: 'Invalid request.' },
  MethodNotAllowed: { status: 405, message: 'The specified method is not allowed against this resource.' },
  SlowDown: { status: 503, message: 'Please reduce your request rate.' },
  ServiceUnavailable: { status: 503, message: 'The service is not ready to handle requests; retry later.' },
  RequestTimeout: { status: 400, message: 'Your socket connection to the server was not read from or written to within the timeout period.' },
  IncompleteBody: { status: 400, message: 'You did not provide the number of bytes specified by the Content-Length HTTP header.' },
  MissingContentLength: { status: 411, message: 'You must provide the Content-Length HTTP header.' },

  // ---- authentication / authorization
  AccessDenied: { status: 403, message: 'Access Denied.' },
  SignatureDoesNotMatch: { status: 403, message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.' },
  InvalidAccessKeyId: { status: 403, message: 'The Access Key Id you provided does not exist in our records.' },
  AuthorizationHeaderMalformed: { status: 400, message: 'The authorization header is malformed.' },
  AuthorizationQueryParametersError: { status: 400, message: 'Error parsing the X-Amz-Credential parameter.' },
  RequestTimeTooSkewed: { status: 403, message: 'The difference between the request time and the server\'s time is too large.' },
  ExpiredToken: { status: 400, message: 'The provided token has expired.' },
  MissingSecurityHeader: { status: 400, message: 'Your request is missing a required header.' },
  XAmzContentSHA256Mismatch: { status: 400, message: 'The provided \'x-amz-content-sha256\' header does not match what was computed.' },
  BadDigest: { status: 400, message: 'The Content-MD5 you specified did not match what we received.' },
  InvalidDigest: { status: 400, message: 'The Content-MD5 you specified is not valid.' },

  // ---- buckets
  NoSuchBucket: { status: 404, message: 'The specified bucket does not exist.' },
  BucketAlreadyExists: { status: 409, message: 'The requested bucket name is not available.' },
  BucketAlreadyOwnedByYou: { status: 409, message: 'Your previous request to create the named bucket succeeded and you already own it.' },
  BucketNotEmpty: { status: 409, message: 'The bucket you tried to delete is not empty.' },
  InvalidBucketName: { status: 400, message: 'The specified bucket is not valid.' },
  IllegalLocationConstraintException: { status: 400, message: 'The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.' },
  NoSuchTagSet: { status: 404, message: 'The TagSet does not exist.' },
  MalformedPolicy: { status: 400, message: 'Policies must be valid JSON and the first byte must be \'{\'.' },
  NoSuchBucketPolicy: { status: 404, message: 'The bucket policy does not exist.' },
  MalformedACLError: { status: 400, message: 'The XML you provided was not well-formed or did not validate against our published schema.' },
  AccessControlListNotSupported: { status: 400, message: 'The bucket does not allow ACLs.' },
  InvalidBucketAclWithObjectOwnership: { status: 400, message: 'Bucket cannot have ACLs set with ObjectOwnership\'s BucketOwnerEnforced setting.' },
  UnresolvableGrantByEmailAddress: { status: 400, message: 'The email address you provided does not match any account on record.' },
  OwnershipControlsNotFoundError: { status: 404, message: 'The bucket ownership controls were not found.' },
  NoSuchPublicAccessBlockConfiguration: { status: 404, message: 'The public access block configuration was not found.' },
  NoSuchCORSConfiguration: { status: 404, message: 'The CORS configuration does not exist.' },
  NoSuchWebsiteConfiguration: { status: 404, message: 'The specified bucket does not have a website configuration.' },
  AccessForbidden: { status: 403, message: 'CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource\'s CORS spec.' },
  InvalidTag: { status: 400, message: 'The tag provided was not a valid tag.' },

  // ---- objects
  NoSuchKey: { status: 404, message: 'The specified key does not exist.' },
  NoSuchVersion: { status: 404, message: 'The specified version does not exist.' },
  InvalidRange: { status: 416, message: 'The requested range is not satisfiable.' },
  InvalidPartNumber: { status: 416, message: 'The requested partnumber is not satisfiable.' },
  PreconditionFailed: { status: 412, message: 'At least one of the pre-conditions you specified did not hold.' },
  NotModified: { status: 304, message: 'Not Modified.' },
  KeyTooLongError: { status: 400, message: 'Your key is too long.' },
  MetadataTooLarge: { status: 400, message: 'Your metadata headers exceed the maximum allowed metadata size.' },
  EntityTooLarge: { status: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  EntityTooSmall: { status: 400, message: 'Your proposed upload is smaller than the minimum allowed object size.' },
  InvalidStorageClass: { status: 400, message: 'The storage class you specified is not valid.' },
  InvalidObjectName: { status: 400, message: 'Object name contains unsupported characters.' },
  ObjectNameInvalid: { status: 400, message: 'Object name contains unsupported characters.' },
  MalformedXML: { status: 400, message: 'The XML you provided was not well-formed or did not validate against our published schema.' },
  MalformedPOSTRequest: { status: 400, message: 'The body of your POST request is not well-formed multipart/form-data.' },
  InvalidPolicyDocument: { status: 400, message: 'The content of the form does not meet the conditions specified in the policy document.' },
  InvalidPart: { status: 400, message: 'One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part\'s entity tag.' },
  InvalidPartOrder: { status: 400, message: 'The list of parts was not in ascending order. The parts list must be specified in order by part number.' },
  NoSuchUpload: { status: 404, message: 'The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.' },
  InvalidCopySource: { status: 400, message: 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey.' },
  InvalidChecksum: { status: 400, message: 'The checksum provided does not match the computed checksum.' },
  BadChecksum: { status: 400, message: 'The checksum provided does not match the computed checksum.' },
  MaxVersionsExceeded: { status: 400, message: 'You have exceeded the limit on the number of versions you can create on this object.' },
  ConditionalRequestConflict: { status: 409, message: 'A conflicting conditional operation is currently in progress against this resource.' },

  // ---- data governance: object lock, lifecycle, server-side encryption
  InvalidBucketState: { status: 409, message: 'The request is not valid with the current state of the bucket.' },
  ObjectLockConfigurationNotFoundError: { status: 404, message: 'Object Lock configuration does not exist for this bucket.' },
  NoSuchObjectLockConfiguration: { status: 404, message: 'The specified object does not have an ObjectLock configuration.' },
  InvalidRetentionPeriod: { status: 400, message: 'The retention period must be a positive integer number of days or years.' },
  NoSuchLifecycleConfiguration: { status: 404, message: 'The lifecycle configuration does not exist.' },
  ServerSideEncryptionConfigurationNotFoundError: { status: 404, message: 'The server side encryption configuration was not found.' },
  InvalidEncryptionAlgorithmError: { status: 400, message: 'The encryption request you specified is not valid. The valid value is AES256.' },
  'KMS.NotFoundException': { status: 400, message: 'The key store has no such key.' },
  XSvcKMSNotConfigured: { status: 501, message: 'Server-side encryption with SSE-S3 or SSE-KMS needs a key store; set SVC_KMS_SECRET_KEY or SVC_KMS_SECRET_KEY_FILE.' },
  XSvcKMSNotReady: { status: 503, message: 'The key store is not available yet; retry later.' },
  XSvcObjectTampered: { status: 500, message: 'The object\'s encrypted data failed authentication: it was modified or corrupted.' },

  // ---- erasure / storage (spec: Errors)
  ErasureWriteQuorum: { status: 503, message: 'Storage resources are insufficient for the write operation.' },
  ErasureReadQuorum: { status: 503, message: 'Storage resources are insufficient for the read operation.' },
  XSvcStorageFull: { status: 507, message: 'Storage backend has reached its minimum free drive threshold.' },
  // Keys S3 allows but svc cannot store: each '/'-separated segment is a file name on the drives (docs/s3-api.md "Object keys").
  XSvcObjectNameSegmentTooLong: { status: 400, message: 'A \'/\'-separated segment of the object key is longer than the 255 bytes a drive can hold as one name (246 for the last segment of a key ending in \'/\').' },
  XSvcObjectNameReserved: { status: 400, message: 'A \'/\'-separated segment of the object key names a file svc keeps in every object\'s folder (xl.meta, or a data folder of the object above it); such a key cannot be stored.' },
  XSvcBucketNotOnPool: { status: 503, message: 'The bucket is missing on the pool chosen for the write and could not be created there; retry later.' },

  // ---- startup (spec: Errors, Startup failures)
  VolumeNotFound: { status: 500, message: 'Volume path does not exist; disk roots are never created automatically.' },
  PoolTopologyMismatch: { status: 500, message: 'Stored format differs from the configured drive count or set width; this is permanent, no migration.' },
  UnsupportedSnsdExpansion: { status: 500, message: 'A single-drive deployment cannot change its drive layout or join a multi-pool deployment.' },
  InvalidTopology: { status: 500, message: 'Invalid volume arguments.' },
  InvalidStorageClassConfig: { status: 500, message: 'Invalid storage-class configuration.' },
  InvalidConfig: { status: 500, message: 'Invalid configuration.' },
  UnformattedDisk: { status: 500, message: 'Drive is not formatted.' },
  CorruptedFormat: { status: 500, message: 'Drive format is corrupted.' },
  DiskNotFound: { status: 503, message: 'Drive not found or offline.' },
  FileNotFound: { status: 404, message: 'File not found.' },
  FileCorrupt: { status: 500, message: 'File is corrupted (bitrot detected).' },
  VolumeExists: { status: 409, message: 'Volume already exists.' },
  VolumeNotEmpty: { status: 409, message: 'Volume is not empty.' },
  ListenerBindFailed: { status: 500, message: 'HTTP listener bind failed' },
  TlsCertificateInvalid: { status: 500, message: 'The TLS certificate or its key cannot be used.' },

  // ---- admin (reference/admin-api-shapes.md)
  XSvcDecommissionNotAllowed: { status: 400, message: 'Decommission is not allowed.' },
  XSvcRebalanceNotAllowed: { status: 400, message: 'Rebalance is not allowed.' },
  XSvcAdminRebalanceAlreadyStarted: { status: 409, message: 'rebalance is already in progress' },
  XSvcRebalanceStartFailed: { status: 503, message: 'The rebalance could not start on every node; it was rolled back.' },
  XSvcAdminInvalidArgument: { status: 400, message: 'Invalid arguments specified.' },
  XSvcAdminNoSuchRoute: { status: 404, message: 'No such admin API route.' },
  XSvcAdminLeaderUnreachable: { status: 503, message: 'The node that leads this pool is unreachable; retry once it is back online.' },
  XSvcHealInvalidClientToken: { status: 400, message: 'Client token mismatch: no heal sequence with this token.' },
  XSvcHealAlreadyRunning: { status: 400, message: 'A heal sequence is already running on this path.' },
  XSvcHealOverlappingPaths: { status: 400, message: 'A heal sequence is running on an overlapping path.' },

  // ---- bucket quotas (object/quota.ts; MinIO's XMinioAdminBucketQuotaExceeded, XMinioAdminNoSuchQuotaConfiguration)
  XSvcAdminBucketQuotaExceeded: { status: 400, message: 'Bucket quota exceeded.' },
  XSvcAdminNoSuchQuotaConfiguration: { status: 404, message: 'The quota configuration does not exist.' },

  // ---- web console (api/console/)
  XSvcConsoleSignInRequired: { status: 401, message: 'Sign in to the console first.' },
  XSvcConsoleSessionExpired: { status: 401, message: 'Your console session has ended; sign in again.' },
  XSvcConsoleInvalidCredentials: { status: 401, message: 'The access key or the secret key is wrong.' },
  XSvcConsoleTooManySignIns: { status: 429, message: 'Too many failed sign-ins; wait before trying again.' },
  XSvcConsoleCrossSiteRequest: { status: 403, message: 'The request did not come from the console page.' },
  XSvcConsoleNoSuchRoute: { status: 404, message: 'No such console page or API route.' },
  XSvcConsoleObjectLocked: { status: 403, message: 'The version is protected by object lock.' },

  // ---- identity and access (iam/, docs/iam.md)
  InvalidToken: { status: 400, message: 'The provided token is malformed or otherwise invalid.' },
  XSvcAdminNoSuchUser: { status: 404, message: 'The specified user does not exist.' },
  XSvcAdminNoSuchGroup: { status: 404, message: 'The specified group does not exist.' },
  XSvcAdminNoSuchPolicy: { status: 404, message: 'The canned policy does not exist.' },
  XSvcAdminNoSuchAccessKey: { status: 404, message: 'The specified access key does not exist.' },
  XSvcAdminGroupNotEmpty: { status: 400, message: 'The specified group is not empty; it cannot be removed.' },
  XSvcAdminPolicyInUse: { status: 400, message: 'The policy is attached to users or groups; detach it first.' },
  XSvcAdminCannedPolicy: { status: 400, message: 'Canned policies cannot be changed or removed.' },
  XSvcAdminInvalidAccessKey: { status: 400, message: 'The access key is invalid: 3 to 128 characters of letters, digits and =,.@_-' },
  XSvcAdminInvalidSecretKey: { status: 400, message: 'The secret key is invalid: 8 to 40 characters.' },
  XSvcAdminAccessKeyExists: { status: 409, message: 'The access key is already in use.' },
  XSvcAdminLdapUserNoPolicy: { status: 400, message: 'No policy is attached to the LDAP user or its groups.' },
  XSvcAdminIdpConfigExists: { status: 409, message: 'An identity provider of this kind is configured already; update it, or remove it first.' },
  XSvcAdminConfigBadJson: { status: 400, message: 'The request body could not be decrypted or is not the JSON expected.' },
  XSvcIamLimitExceeded: { status: 400, message: 'The identity store is at its size limit.' },
  XSvcIamNotInitialized: { status: 503, message: 'The identity store is not loaded yet; retry later.' },
  // STS (errors in the STS ErrorResponse XML)
  MissingParameter: { status: 400, message: 'A required parameter for the specified action is not supplied.' },
  InvalidParameterValue: { status: 400, message: 'An invalid or out-of-range value was supplied for the input parameter.' },
  MalformedPolicyDocument: { status: 400, message: 'The request was rejected because the policy document was malformed.' },
  PackedPolicyTooLarge: { status: 400, message: 'The request was rejected because the session policy is too large.' },
  InvalidIdentityToken: { status: 400, message: 'The web identity token that was passed could not be validated.' },
  IDPCommunicationError: { status: 400, message: 'The request could not be fulfilled because the identity provider could not be reached.' },
  XSvcStsNotConfigured: { status: 400, message: 'This identity provider is not configured.' },
  // bucket notifications (docs/notifications.md)
  XSvcNotifyQueueFull: { status: 503, message: 'A notification target\'s queue is full; the write was not made. Retry once the target catches up.' },
  XSvcNotifyTargetInvalid: { status: 400, message: 'The notification target configuration is invalid.' },
  XSvcNotifyNoSuchTarget: { status: 404, message: 'The specified notification target does not exist.' },
  // bucket replication (docs/replication.md)
  ReplicationConfigurationNotFoundError: { status: 404, message: 'The replication configuration was not found.' },
  XSvcReplicationTargetInvalid: { status: 400, message: 'The replication target is invalid.' },
  XSvcReplicationNoSuchTarget: { status: 404, message: 'The specified remote target does not exist for this bucket.' },
  XSvcReplicationTargetUnreachable: { status: 503, message: 'The remote target could not be reached or refused the credential; nothing was changed.' },
  XSvcReplicationTargetNotVersioned: { status: 400, message: 'The remote bucket must have versioning enabled for replication.' },
  XSvcReplicationTargetInUse: { status: 409, message: 'A replication rule of the bucket still sends to this target; remove the rule first.' },
  XSvcReplicationQueueFull: { status: 503, message: 'A replication queue is full; the write was not made. Retry once the target catches up.' },
  XSvcReplicationResyncInvalid: { status: 400, message: 'The resync request is invalid for the bucket\'s replication state.' },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}

const kSvcError = Symbol.for('svc.error');

/**
 * The error every layer throws. `code` is stable and registered; `message`
 * defaults to the registry's template; `details` carries structured context
 * for logs (never serialised to clients wholesale).
 */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly [kSvcError] = true;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message ?? ERRORS[code].message, options);
    this.name = 'SvcError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = details;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[kSvcError] === true;
  }
}

/** True when `err` is an SvcError carrying `code`. */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  return err instanceof SvcError && err.code === code;
}

/**
 * Maps anything thrown to an SvcError: registered errors pass through, the
 * rest become `InternalError` with the original kept as `cause`.
 */
export function toSvcError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  return new SvcError('InternalError', undefined, undefined, { cause: err });
}

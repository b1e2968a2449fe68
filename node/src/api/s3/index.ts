/**
 * The S3 API: `createS3Handler` returns a plain node:http handler (no
 * middleware) that authenticates (SigV4 header, presigned, aws-chunked;
 * SigV2 header and presigned),
 * parses the typed endpoint, and dispatches to one handler per operation.
 * The SigV4 verifier is exported for the admin API (same signing, service s3).
 */
import { randomBytes } from 'node:crypto';
import { newRequestId } from '../../util/request-id.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BucketQuotas } from '../../object/quota.ts';
import type { ObjectLayer } from '../../object/types.ts';
import { type HttpOperationMessage, httpRequestOperation } from '../../util/diagnostics.ts';
import type { Clock } from '../../util/clock.ts';
import { closeAfterLinger } from '../../util/lingering-close.ts';
import { LogLimiter } from '../../util/log-limiter.ts';
import type { Logger } from '../../util/logger.ts';
import type { AuthContext, Credential, CredentialLookup, VerifyOptions } from './auth/sigv4.ts';
import { authenticateRequest } from './auth/verify.ts';
import { authorizeEndpoint } from './authz/endpoint.ts';
import { ANONYMOUS, rootPrincipal } from '../../iam/principal.ts';
import type { Handler, NotifyEdge, S3Context } from './context.ts';
import { requestOrigin } from '../request-origin.ts';
import { tagAudit } from '../audit-tag.ts';
import { handleGetBucketNotificationConfiguration, handleListenBucketNotification, handlePutBucketNotificationConfiguration } from './handlers/notification.ts';
import { sendError } from './errors.ts';
import { handleDeleteBucketReplication, handleGetBucketReplication, handlePutBucketReplication } from './handlers/replication.ts';
import {
  handleGetBucketAcl,
  handleGetObjectAcl,
  handlePutBucketAcl,
  handlePutObjectAcl,
} from './handlers/acl.ts';
import {
  handleCreateBucket,
  handleDeleteBucket,
  handleGetBucketLocation,
  handleGetBucketAccelerateConfiguration,
  handleGetBucketRequestPayment,
  handleGetBucketLogging,
  handleGetBucketWebsite,
  handleDeleteBucketWebsite,
  handleGetBucketVersioning,
  handleHeadBucket,
  handleListBuckets,
  handlePutBucketVersioning,
} from './handlers/buckets.ts';
import { applyCorsHeaders, type CorsSource, handleDeleteBucketCors, handleGetBucketCors, handlePreflight, handlePutBucketCors } from './handlers/cors.ts';
import {
  handleDeleteBucketOwnershipControls,
  handleDeleteBucketPolicy,
  handleDeletePublicAccessBlock,
  handleGetBucketOwnershipControls,
  handleGetBucketPolicy,
  handleGetBucketPolicyStatus,
  handleGetPublicAccessBlock,
  handlePutBucketOwnershipControls,
  handlePutBucketPolicy,
  handlePutPublicAccessBlock,
} from './handlers/policy.ts';
import { handleDeleteBucketEncryption, handleGetBucketEncryption, handlePutBucketEncryption } from './handlers/encryption.ts';
import { handleDeleteBucketLifecycle, handleGetBucketLifecycle, handlePutBucketLifecycle } from './handlers/lifecycle.ts';
import {
  handleGetObjectLegalHold,
  handleGetObjectLockConfiguration,
  handleGetObjectRetention,
  handlePutObjectLegalHold,
  handlePutObjectLockConfiguration,
  handlePutObjectRetention,
} from './handlers/object-lock.ts';
import { handlePostObject } from './handlers/post-object.ts';
import { handleListObjectsV1, handleListObjectsV2, handleListObjectVersions } from './handlers/listing.ts';
import {
  handleAbortMultipartUpload,
  handleCompleteMultipartUpload,
  handleCreateMultipartUpload,
  handleListMultipartUploads,
  handleListParts,
  handleUploadPart,
  handleUploadPartCopy,
} from './handlers/multipart.ts';
import {
  handleCopyObject,
  handleDeleteObject,
  handleDeleteObjects,
  handleGetObject,
  handleGetObjectAttributes,
  handleHeadObject,
  handlePutObject,
} from './handlers/objects.ts';
import {
  handleDeleteBucketTagging,
  handleDeleteObjectTagging,
  handleGetBucketTagging,
  handleGetObjectTagging,
  handlePutBucketTagging,
  handlePutObjectTagging,
} from './handlers/tagging.ts';
import { parseEndpoint, type S3Endpoint, type S3Operation, targetOf } from './router.ts';
import { validateBucketName } from './validate.ts';
import { SvcError } from '../../util/errors.ts';

export type { AuthContext, Credential, CredentialLookup, VerifyOptions } from './auth/sigv4.ts';
export { authenticateRequest, verifyIncoming, verifyRequest } from './auth/verify.ts';
/** Reads a small request body verified against its signature mode (hex SHA-256, aws-chunked, Content-MD5). */
export { readSmallBody } from './put-data.ts';
export { parseEndpoint, type S3Endpoint } from './router.ts';

export interface S3HandlerOptions {
  objectLayer: ObjectLayer;
  credentials: Credential[] | CredentialLookup;
  /** Region clients sign for; default `us-east-1`. */
  region?: string;
  /** Accept SigV4 scopes naming any region (`SVC_ACCEPT_ANY_REGION`). */
  anyRegion?: boolean;
  /** Bucket quotas to enforce on PUT, POST Object, copy and multipart complete. */
  quotas?: BucketQuotas;
  /** Domains for virtual-host style (`<bucket>.<domain>`); path style always works. */
  domains?: string[];
  logger: Logger;
  clock: Clock;
  /** Canonical id of the owner of every bucket (a function: the root access key as it rotates); default: the (first) root credential's access key. */
  ownerId?: string | (() => string);
  /** Display name of a canonical user id (IAM users, for ACL grants); the root's id is always known. */
  knownUser?: (canonicalId: string) => string | undefined;
  /**
   * Port of svc's web console: pages from an origin on that port may call the
   * S3 API cross-origin on buckets without a CORS configuration (requests
   * still need signatures).
   */
  consolePort?: number;
  /** Bucket notifications (configuration checks, events that follow a request, listeners). */
  notify?: NotifyEdge;
}

type AnyHandler = Handler<S3Endpoint>;

/** One handler per operation: the exhaustive dispatch table. */
const HANDLERS: { [K in S3Operation]: Handler<Extract<S3Endpoint, { op: K }>> } = {
  ListBuckets: handleListBuckets,
  CreateBucket: handleCreateBucket,
  HeadBucket: handleHeadBucket,
  DeleteBucket: handleDeleteBucket,
  GetBucketLocation: handleGetBucketLocation,
  GetBucketAccelerateConfiguration: handleGetBucketAccelerateConfiguration,
  GetBucketRequestPayment: handleGetBucketRequestPayment,
  GetBucketLogging: handleGetBucketLogging,
  GetBucketWebsite: handleGetBucketWebsite,
  DeleteBucketWebsite: handleDeleteBucketWebsite,
  GetBucketVersioning: handleGetBucketVersioning,
  PutBucketVersioning: handlePutBucketVersioning,
  GetBucketTagging: handleGetBucketTagging,
  PutBucketTagging: handlePutBucketTagging,
  DeleteBucketTagging: handleDeleteBucketTagging,
  GetBucketAcl: handleGetBucketAcl,
  PutBucketAcl: handlePutBucketAcl,
  GetBucketPolicy: handleGetBucketPolicy,
  PutBucketPolicy: handlePutBucketPolicy,
  DeleteBucketPolicy: handleDeleteBucketPolicy,
  GetBucketPolicyStatus: handleGetBucketPolicyStatus,
  GetBucketCors: handleGetBucketCors,
  PutBucketCors: handlePutBucketCors,
  DeleteBucketCors: handleDeleteBucketCors,
  GetBucketOwnershipControls: handleGetBucketOwnershipControls,
  PutBucketOwnershipControls: handlePutBucketOwnershipControls,
  DeleteBucketOwnershipControls: handleDeleteBucketOwnershipControls,
  GetPublicAccessBlock: handleGetPublicAccessBlock,
  PutPublicAccessBlock: handlePutPublicAccessBlock,
  DeletePublicAccessBlock: handleDeletePublicAccessBlock,
  GetObjectLockConfiguration: handleGetObjectLockConfiguration,
  PutObjectLockConfiguration: handlePutObjectLockConfiguration,
  GetBucketLifecycle: handleGetBucketLifecycle,
  PutBucketLifecycle: handlePutBucketLifecycle,
  DeleteBucketLifecycle: handleDeleteBucketLifecycle,
  GetBucketEncryption: handleGetBucketEncryption,
  PutBucketEncryption: handlePutBucketEncryption,
  DeleteBucketEncryption: handleDeleteBucketEncryption,
  GetBucketNotificationConfiguration: handleGetBucketNotificationConfiguration,
  PutBucketNotificationConfiguration: handlePutBucketNotificationConfiguration,
  ListenBucketNotification: handleListenBucketNotification,
  GetBucketReplication: handleGetBucketReplication,
  PutBucketReplication: handlePutBucketReplication,
  DeleteBucketReplication: handleDeleteBucketReplication,
  ListObjectsV1: handleListObjectsV1,
  ListObjectsV2: handleListObjectsV2,
  ListObjectVersions: handleListObjectVersions,
  ListMultipartUploads: handleListMultipartUploads,
  DeleteObjects: handleDeleteObjects,
  PutObject: handlePutObject,
  PostObject: handlePostObject,
  CopyObject: handleCopyObject,
  GetObject: handleGetObject,
  HeadObject: handleHeadObject,
  DeleteObject: handleDeleteObject,
  GetObjectTagging: handleGetObjectTagging,
  PutObjectTagging: handlePutObjectTagging,
  DeleteObjectTagging: handleDeleteObjectTagging,
  GetObjectAcl: handleGetObjectAcl,
  PutObjectAcl: handlePutObjectAcl,
  GetObjectAttributes: handleGetObjectAttributes,
  GetObjectRetention: handleGetObjectRetention,
  PutObjectRetention: handlePutObjectRetention,
  GetObjectLegalHold: handleGetObjectLegalHold,
  PutObjectLegalHold: handlePutObjectLegalHold,
  CreateMultipartUpload: handleCreateMultipartUpload,
  UploadPart: handleUploadPart,
  UploadPartCopy: handleUploadPartCopy,
  CompleteMultipartUpload: handleCompleteMultipartUpload,
  AbortMultipartUpload: handleAbortMultipartUpload,
  ListParts: handleListParts,
};

/** Turns the credential option into a lookup. */
export function credentialLookup(c: Credential[] | CredentialLookup): CredentialLookup {
  if (typeof c === 'function') return c;
  const map = new Map(c.map((x) => [x.accessKey, x]));
  return (k) => map.get(k);
}

/** Largest refused request body read and discarded to keep a connection alive. */
const MAX_DRAIN_BYTES = 1024 * 1024;

export function createS3Handler(opts: S3HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const region = opts.region ?? 'us-east-1';
  const domains = opts.domains ?? [];
  const lookup = credentialLookup(opts.credentials);
  const verify: VerifyOptions = { credentials: lookup, region, anyRegion: opts.anyRegion === true, clock: opts.clock, signatureV2: true, domains };
  const hostId = randomBytes(24).toString('base64');
  const ownerId = opts.ownerId ?? (Array.isArray(opts.credentials) ? (opts.credentials[0]?.accessKey ?? '') : '');
  const consolePort = opts.consolePort;
  const cors: CorsSource = {
    layer: opts.objectLayer,
    consoleOrigin: (origin) => {
      if (consolePort === undefined) return false;
      try {
        return Number(new URL(origin).port) === consolePort;
      } catch {
        return false;
      }
    },
  };
  const logger = opts.logger;
  const serverErrors = new LogLimiter(logger, opts.clock);

  return (req, res) => {
    const requestId = newRequestId();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('x-amz-id-2', hostId);
    res.setHeader('server', 'svc');
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    let resource = url.split('?')[0] ?? '/';
    const run = async () => {
      if (req.headers.origin !== undefined || method === 'OPTIONS') {
        const { bucket } = targetOf(url, req.headers.host, domains);
        if (method === 'OPTIONS') {
          await handlePreflight(cors, req, res, bucket);
          return;
        }
        await applyCorsHeaders(cors, req, res, bucket);
      }
      const auth: AuthContext = authenticateRequest({ method, url, headers: req.headers }, verify);
      const copySource = req.headers['x-amz-copy-source'];
      const ep = parseEndpoint(
        { method, url, host: req.headers.host, copySource: Array.isArray(copySource) ? copySource[0] : copySource, contentType: req.headers['content-type'] },
        domains,
      );
      resource = ep.key ? `/${ep.bucket}/${ep.key}` : ep.bucket ? `/${ep.bucket}` : '/';
      tagAudit(req, { api: ep.op, bucket: ep.bucket, object: ep.key, accessKey: auth.anonymous ? '' : auth.accessKey });
      if (httpRequestOperation.hasSubscribers) httpRequestOperation.publish({ req, operation: ep.op } satisfies HttpOperationMessage);
      if (ep.bucket) validateBucketName(ep.bucket);
      const ctx: S3Context = {
        req,
        res,
        ep,
        auth,
        layer: opts.objectLayer,
        region,
        clock: opts.clock,
        logger,
        requestId,
        ownerId: typeof ownerId === 'function' ? ownerId() : ownerId,
        principal: auth.anonymous ? ANONYMOUS : (auth.principal ?? rootPrincipal(auth.accessKey)),
        verify,
        ...(opts.knownUser ? { knownUser: opts.knownUser } : {}),
        ...(opts.quotas ? { quotas: opts.quotas } : {}),
        authorizeKey: async () => {
          throw new SvcError('AccessDenied');
        },
        ...(opts.notify ? { notify: opts.notify } : {}),
        origin: (via) => {
          const o = requestOrigin(req);
          const ua = req.headers['user-agent'];
          return {
            principalId: auth.anonymous ? 'anonymous' : (auth.principal?.accessKey ?? auth.accessKey),
            sourceIp: o.sourceIp,
            requestId,
            hostId,
            ...(o.host ? { host: o.host } : {}),
            ...(ua ? { userAgent: ua } : {}),
            ...(via ? { via } : {}),
          };
        },
      };
      // POST Object carries its credentials in the form: its handler authorizes once the fields are read.
      if (ep.op !== 'PostObject') await authorizeEndpoint(ctx);
      // The request is authorised: a client waiting on `Expect: 100-continue` may send its body.
      if (/100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
      const handler = HANDLERS[ep.op] as AnyHandler;
      await handler(ctx);
    };
    run().catch((err: unknown) => {
      tagAudit(req, { errorCode: err instanceof SvcError ? err.code : 'InternalError' });
      // A refused body still on the wire: drain a small one so the connection stays usable;
      // for a large or unknown one, answer and close rather than read gigabytes — with a
      // lingering close, so the client reads the answer rather than a connection reset.
      const pending = !req.complete;
      const declared = Number(req.headers['content-length'] ?? Number.NaN);
      const closeAfter = pending && !(declared <= MAX_DRAIN_BYTES);
      if (closeAfter) closeAfterLinger(req, res);
      sendError(res, err, { method, resource, requestId, hostId, logger, serverErrors });
      if (pending && !closeAfter) req.resume();
    });
  };
}


/**
 * The S3 API: `createS3Handler` returns a plain node:http handler (no
 * middleware) that authenticates (SigV4 header, presigned, aws-chunked),
 * parses the typed endpoint, and dispatches to one handler per operation.
 * The SigV4 verifier is exported for the admin API (same signing, service s3).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ObjectLayer } from '../../object/types.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { AuthContext, Credential, CredentialLookup } from './auth/sigv4.ts';
import { verifyRequest } from './auth/verify.ts';
import type { Handler, S3Context } from './context.ts';
import { sendError } from './errors.ts';
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
  handleGetBucketVersioning,
  handleHeadBucket,
  handleListBuckets,
  handlePutBucketVersioning,
} from './handlers/buckets.ts';
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
import { parseEndpoint, type S3Endpoint, type S3Operation } from './router.ts';
import { validateBucketName } from './validate.ts';

export type { AuthContext, Credential, CredentialLookup, VerifyOptions } from './auth/sigv4.ts';
export { verifyIncoming, verifyRequest } from './auth/verify.ts';
/** Reads a small request body verified against its signature mode (hex SHA-256, aws-chunked, Content-MD5). */
export { readSmallBody } from './put-data.ts';
export { parseEndpoint, type S3Endpoint } from './router.ts';

export interface S3HandlerOptions {
  objectLayer: ObjectLayer;
  credentials: Credential[] | CredentialLookup;
  /** Region clients sign for; default `us-east-1`. */
  region?: string;
  /** Domains for virtual-host style (`<bucket>.<domain>`); path style always works. */
  domains?: string[];
  logger: Logger;
  clock: Clock;
}

type AnyHandler = Handler<S3Endpoint>;

/** One handler per operation: the exhaustive dispatch table. */
const HANDLERS: { [K in S3Operation]: Handler<Extract<S3Endpoint, { op: K }>> } = {
  ListBuckets: handleListBuckets,
  CreateBucket: handleCreateBucket,
  HeadBucket: handleHeadBucket,
  DeleteBucket: handleDeleteBucket,
  GetBucketLocation: handleGetBucketLocation,
  GetBucketVersioning: handleGetBucketVersioning,
  PutBucketVersioning: handlePutBucketVersioning,
  GetBucketTagging: handleGetBucketTagging,
  PutBucketTagging: handlePutBucketTagging,
  DeleteBucketTagging: handleDeleteBucketTagging,
  GetBucketAcl: handleGetBucketAcl,
  PutBucketAcl: handlePutBucketAcl,
  ListObjectsV1: handleListObjectsV1,
  ListObjectsV2: handleListObjectsV2,
  ListObjectVersions: handleListObjectVersions,
  ListMultipartUploads: handleListMultipartUploads,
  DeleteObjects: handleDeleteObjects,
  PutObject: handlePutObject,
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

function newRequestId(): string {
  return randomBytes(8).toString('hex').toUpperCase();
}

export function createS3Handler(opts: S3HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const region = opts.region ?? 'us-east-1';
  const domains = opts.domains ?? [];
  const lookup = credentialLookup(opts.credentials);
  const hostId = randomBytes(24).toString('base64');
  const logger = opts.logger;

  return (req, res) => {
    const requestId = newRequestId();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('x-amz-id-2', hostId);
    res.setHeader('server', 'svc');
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    let resource = url.split('?')[0] ?? '/';
    const run = async () => {
      const auth: AuthContext = verifyRequest({ method, url, headers: req.headers }, { credentials: lookup, region, clock: opts.clock });
      const copySource = req.headers['x-amz-copy-source'];
      const ep = parseEndpoint(
        { method, url, host: req.headers.host, copySource: Array.isArray(copySource) ? copySource[0] : copySource },
        domains,
      );
      resource = ep.key ? `/${ep.bucket}/${ep.key}` : ep.bucket ? `/${ep.bucket}` : '/';
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
        ownerId: auth.accessKey,
      };
      // The request is authenticated: a client waiting on `Expect: 100-continue` may send its body.
      if (/100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
      const handler = HANDLERS[ep.op] as AnyHandler;
      await handler(ctx);
    };
    run().catch((err: unknown) => {
      // A refused body still on the wire: drain a small one so the connection stays usable;
      // for a large or unknown one, answer and close rather than read gigabytes.
      const pending = !req.complete;
      const declared = Number(req.headers['content-length'] ?? Number.NaN);
      const closeAfter = pending && !(declared <= MAX_DRAIN_BYTES);
      sendError(res, err, { method, resource, requestId, hostId, logger, bodyPending: closeAfter });
      if (pending && !closeAfter) req.resume();
      if (closeAfter) res.once('finish', () => req.destroy());
    });
  };
}


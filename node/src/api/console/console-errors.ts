/**
 * Errors as the console's pages show them: what happened (the server's own
 * message) and what to do about it (`action`). The console's own refusals
 * are `SvcError`s with the `XSvcConsole*` codes of the one registry; answers
 * of the S3 and admin APIs it calls arrive as `UpstreamError`s carrying the
 * API's code and message unchanged. Pure.
 */
import { type SvcError, toSvcError } from '../../util/errors.ts';

/** An S3 or admin API error answer (or an unreachable listener) met by a console call. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly status: number;
  readonly code: string;
  /** `x-svc-readiness-pending` of a not-ready answer. */
  readonly pending: string | undefined;
  constructor(status: number, code: string, message: string, pending?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.pending = pending;
  }
}

/** The JSON body of every console API error. */
export interface ConsoleErrorBody {
  readonly code: string;
  readonly message: string;
  /** What the user can do next. */
  readonly action: string;
}

const ACTIONS: Readonly<Record<string, string>> = {
  XSvcConsoleSignInRequired: 'Sign in with your access key and secret key.',
  XSvcConsoleSessionExpired: 'Sign in again.',
  XSvcConsoleInvalidCredentials: 'Check both keys (they are case-sensitive) and try again.',
  XSvcConsoleTooManySignIns: 'Wait for the time shown, then try again with the right keys.',
  XSvcConsoleCrossSiteRequest: 'Reload the console page and repeat the action from there.',
  XSvcConsoleNoSuchRoute: 'Use the links of the console; reload the page if it was updated.',
  XSvcConsoleObjectLocked: 'Object lock keeps this version: wait until its retention ends, remove its legal hold, or (GOVERNANCE retention only) delete it with the governance bypass. Your permissions are not the problem.',
  AccessDenied: 'Your user lacks the permission for this. Sign in as a user who has it, or ask an administrator to grant it.',
  InvalidAccessKeyId: 'Sign in again; the access key may have been removed.',
  SignatureDoesNotMatch: 'Sign in again; the secret key may have changed.',
  RequestTimeTooSkewed: "Synchronize this node's clock (NTP); signed requests fail when clocks differ by more than 15 minutes.",
  NoSuchBucket: 'The bucket may have been deleted; go back to the bucket list.',
  NoSuchKey: 'The object may have been deleted; refresh the listing.',
  NoSuchVersion: 'The version may have been deleted; refresh the version list.',
  NoSuchUpload: 'Start the upload again.',
  BucketNotEmpty: 'Delete every object in it first (on a versioned bucket also every version and delete marker), then delete the bucket.',
  BucketAlreadyExists: 'Choose another name.',
  BucketAlreadyOwnedByYou: 'The bucket exists already; open it from the bucket list.',
  InvalidBucketName: 'Use 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.',
  KeyTooLongError: 'Use a shorter name (at most 1024 bytes including the folder path).',
  EntityTooLarge: 'A single upload is at most 5 GiB; larger files are uploaded in parts automatically.',
  InvalidRange: 'Download the whole object instead of a range.',
  ServiceUnavailable: 'The node is not ready to serve this yet; the Overview page shows what it waits for. Retry once it is ready.',
  ErasureReadQuorum: 'Too many drives of this erasure set are offline to read it. Bring the offline drives or nodes back (see Pools), then retry.',
  ErasureWriteQuorum: 'Too many drives of this erasure set are offline to write. Bring the offline drives or nodes back (see Pools), then retry.',
  XSvcStorageFull: 'Free space on the drives, or add a pool.',
  SlowDown: 'Retry in a few seconds. Writes to a pool being decommissioned are refused; they go to the other pools once the pool is drained.',
  NotImplemented: 'This build cannot do this yet; nothing was changed.',
  XSvcDecommissionNotAllowed: "Check the pool's current state on the Pools page; a finished, failed or canceled decommission must be cleared before another starts.",
  XSvcRebalanceNotAllowed: 'Wait for the decommission to finish, or cancel it, before starting a rebalance.',
  XSvcAdminRebalanceAlreadyStarted: 'A rebalance is already running; watch it on the Pools page, or stop it first.',
  XSvcAdminLeaderUnreachable: "Bring the pool's leader node back online, then retry.",
  XSvcAdminInvalidArgument: 'Check the values entered and try again.',
  XSvcHealInvalidClientToken: 'The heal has ended or belongs to another node; start a new one.',
  InvalidArgument: 'Check the values entered and try again.',
  MalformedXML: 'The document does not follow the S3 format (the message says where); correct it and save again. Nothing was changed.',
  MalformedPolicy: 'Correct the policy where the message says, and save again. Nothing was changed.',
  InvalidRetentionPeriod: 'Use a period of 1 to 36500 days (or 1 to 100 years).',
  XSvcKMSNotConfigured: 'Start the nodes with a key store (SVC_KMS_SECRET_KEY or SVC_KMS_KES_ENDPOINT), then try again.',
  InvalidRequest: 'Check the values entered and try again.',
  MissingContentLength: 'Upload the file again; the browser must send its size.',
  IncompleteBody: 'The upload was cut short; upload the file again.',
  Unreachable: 'Check that the node is running and its S3 listener is up; see the node log.',
  InternalError: 'Retry; if it keeps failing, look for the error in the node log.',
};

const FALLBACK_ACTION = 'Retry; if it keeps failing, look for the error in the node log.';

export function actionFor(code: string, status: number): string {
  const known = ACTIONS[code];
  if (known !== undefined) return known;
  if (status === 403) return ACTIONS.AccessDenied!;
  if (status === 503) return ACTIONS.ServiceUnavailable!;
  return FALLBACK_ACTION;
}

/** Status and body for anything a console route threw. */
export function toConsoleError(err: unknown): { status: number; body: ConsoleErrorBody; retryAfter?: string } {
  if (err instanceof UpstreamError) {
    const message = err.pending !== undefined && err.code === 'ServiceUnavailable' ? `${err.message} (waiting for ${err.pending.replace(/_/g, ' ')})` : err.message;
    return { status: err.status, body: { code: err.code, message, action: actionFor(err.code, err.status) }, ...(err.status === 503 ? { retryAfter: '5' } : {}) };
  }
  const e: SvcError = toSvcError(err);
  const retry = e.details?.retryAfterSeconds;
  return {
    status: e.status,
    body: { code: e.code, message: e.message, action: actionFor(e.code, e.status) },
    ...(typeof retry === 'number' ? { retryAfter: String(retry) } : e.status === 503 ? { retryAfter: '5' } : {}),
  };
}


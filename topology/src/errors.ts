/**
 * The package's own errors: a volume argument or storage-class setting the
 * rules refuse. Each carries the mark of the server's error registry
 * (`Symbol.for('svc.error')`, with `code`, `status` and `details`), so the
 * server treats it as one of its own (`instanceof SvcError`, the start-up
 * message, an admin answer) without this package importing the server; the
 * codes and statuses equal the registry's entries (a server test checks it).
 */
export const TOPOLOGY_ERRORS = {
  InvalidTopology: { status: 500, message: 'Invalid volume arguments.' },
  InvalidStorageClassConfig: { status: 500, message: 'Invalid storage-class configuration.' },
} as const;

export type TopologyErrorCode = keyof typeof TOPOLOGY_ERRORS;

const kSvcError = Symbol.for('svc.error');

export class TopologyError extends Error {
  readonly code: TopologyErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly [kSvcError] = true;

  constructor(code: TopologyErrorCode, message?: string, details?: Record<string, unknown>) {
    super(message ?? TOPOLOGY_ERRORS[code].message);
    this.name = 'SvcError';
    this.code = code;
    this.status = TOPOLOGY_ERRORS[code].status;
    this.details = details;
  }
}

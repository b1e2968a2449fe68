/**
 * The permissions object lock adds to a request beyond its own action, as
 * S3 asks for them: `s3:BypassGovernanceRetention` for a request carrying
 * `x-amz-bypass-governance-retention: true` (DeleteObject,
 * PutObjectRetention; DeleteObjects per key, in its handler), and
 * `s3:PutObjectRetention` / `s3:PutObjectLegalHold` for a write that sets a
 * retention or legal hold with `x-amz-object-lock-*` headers.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestFacts } from './actions.ts';
import { authorize, type BucketSecurity } from './authorize.ts';

/** `x-amz-bypass-governance-retention: true`. */
export function bypassRequested(req: IncomingMessage): boolean {
  const v = req.headers['x-amz-bypass-governance-retention'];
  return typeof v === 'string' && v.trim().toLowerCase() === 'true';
}

/** The extra actions this request needs (pure). */
export function governanceActions(op: string, req: IncomingMessage): string[] {
  const out: string[] = [];
  if ((op === 'DeleteObject' || op === 'PutObjectRetention') && bypassRequested(req)) out.push('s3:BypassGovernanceRetention');
  if (op === 'PutObject' || op === 'CopyObject' || op === 'CreateMultipartUpload') {
    if (req.headers['x-amz-object-lock-mode'] !== undefined || req.headers['x-amz-object-lock-retain-until-date'] !== undefined) out.push('s3:PutObjectRetention');
    if (req.headers['x-amz-object-lock-legal-hold'] !== undefined) out.push('s3:PutObjectLegalHold');
  }
  return out;
}

/** Throws AccessDenied unless every extra action is allowed too. */
export async function authorizeGovernance(facts: RequestFacts, bucket: string, key: string, security: BucketSecurity): Promise<void> {
  for (const action of governanceActions(facts.ep.op, facts.req)) await authorize({ facts, bucket, ...(key ? { key } : {}), action, security });
}

/** The `x-amz-copy-source` header of CopyObject and UploadPartCopy. */
import { SvcError } from '../../util/errors.ts';
import { parseQuery, safeDecode, splitTarget } from './headers.ts';
import { MAX_KEY_BYTES } from './router.ts';
import { validateBucketName } from './validate.ts';

/** Parses `x-amz-copy-source`: `[/]bucket/key[?versionId=…]`, URL-encoded. */
export function parseCopySource(raw: string): { bucket: string; key: string; versionId?: string } {
  const { path, query } = splitTarget(raw);
  const decoded = safeDecode(path).replace(/^\//, '');
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) throw new SvcError('InvalidCopySource');
  const bucket = decoded.slice(0, slash);
  const key = decoded.slice(slash + 1);
  validateBucketName(bucket);
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new SvcError('KeyTooLongError');
  const versionId = new Map(parseQuery(query)).get('versionId');
  return versionId ? { bucket, key, versionId } : { bucket, key };
}

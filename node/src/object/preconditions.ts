/**
 * Conditional requests (RFC 9110 §13): the one evaluation of If-Match,
 * If-None-Match, If-Modified-Since and If-Unmodified-Since for reads, copy
 * sources and conditional writes, whichever layer asks.
 */
import type { FileVersion } from '../storage/drive.ts';
import { SvcError } from '../util/errors.ts';
import type { Preconditions } from './types.ts';

/** Whether an If-Match / If-None-Match list names `etag` (or is `*`); quotes and a weak `W/` prefix are ignored. */
export function etagMatches(list: string, etag: string): boolean {
  return list.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '').replace(/^"|"$/g, '') === etag;
  });
}

/**
 * GET/HEAD/copy-source preconditions against an object, in the order RFC 9110
 * §13.2.2 gives: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since
 * (each date test only without its ETag counterpart). Throws PreconditionFailed,
 * or NotModified for a read (PreconditionFailed for a copy source).
 */
export function checkPreconditions(p: Preconditions | undefined, etag: string, modTime: Date, forCopy = false): void {
  if (!p) return;
  // HTTP dates have second precision
  const mod = Math.floor(modTime.getTime() / 1000) * 1000;
  if (p.ifMatch !== undefined) {
    if (!etagMatches(p.ifMatch, etag)) throw new SvcError('PreconditionFailed');
  } else if (p.ifUnmodifiedSince && mod > p.ifUnmodifiedSince.getTime()) {
    throw new SvcError('PreconditionFailed');
  }
  if (p.ifNoneMatch !== undefined) {
    if (etagMatches(p.ifNoneMatch, etag)) throw new SvcError(forCopy ? 'PreconditionFailed' : 'NotModified');
  } else if (p.ifModifiedSince && mod <= p.ifModifiedSince.getTime()) {
    throw new SvcError(forCopy ? 'PreconditionFailed' : 'NotModified');
  }
}

/**
 * Conditional-write preconditions, checked under the namespace lock against
 * the current latest version (undefined when none or a delete marker).
 */
export function checkWritePreconditions(p: Preconditions | undefined, current: FileVersion | undefined): void {
  if (!p) return;
  const live = current && current.type === 'object' ? current : undefined;
  if (p.ifNoneMatch !== undefined && live && etagMatches(p.ifNoneMatch, live.etag)) throw new SvcError('PreconditionFailed');
  if (p.ifMatch !== undefined) {
    if (!live) throw new SvcError('NoSuchKey');
    if (!etagMatches(p.ifMatch, live.etag)) throw new SvcError('PreconditionFailed');
  }
}

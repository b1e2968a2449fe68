/**
 * Resolution of a requested byte range against an object size (RFC 9110
 * semantics as S3 applies them). Pure.
 */
import { SvcError } from '../util/errors.ts';
import type { ByteRange } from './types.ts';

/** Inclusive [start, end] within an object of `size` bytes; InvalidRange when unsatisfiable. */
export function resolveRange(range: ByteRange, size: number): { start: number; end: number } {
  if ('suffix' in range) {
    if (range.suffix <= 0 || size === 0) throw new SvcError('InvalidRange', undefined, { size });
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start < 0 || range.start >= size || (range.end !== undefined && range.end < range.start)) {
    throw new SvcError('InvalidRange', undefined, { size });
  }
  return { start: range.start, end: range.end === undefined ? size - 1 : Math.min(range.end, size - 1) };
}

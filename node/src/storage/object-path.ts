/**
 * Object key ↔ on-disk path. An object is a directory holding `xl.meta`; a
 * "directory object" (key ending in '/') lives at `<key-without-slash>__XLDIR__`
 * so it never collides with the directory of the objects below it.
 */
import { SvcError } from '../util/errors.ts';

export const DIR_OBJECT_SUFFIX = '__XLDIR__';

/** On-disk relative path of an object key; rejects keys that would escape the volume. */
export function objectPath(key: string): string {
  if (key.length === 0) throw new SvcError('InvalidObjectName', 'empty object name');
  if (key.endsWith(DIR_OBJECT_SUFFIX) || key.includes(`${DIR_OBJECT_SUFFIX}/`)) {
    throw new SvcError('InvalidObjectName', `object name uses the reserved ${DIR_OBJECT_SUFFIX}`);
  }
  const path = key.endsWith('/') ? key.slice(0, -1) + DIR_OBJECT_SUFFIX : key;
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') {
      throw new SvcError('InvalidObjectName', 'object name has an empty, "." or ".." path segment');
    }
  }
  return path;
}

/** The key an on-disk directory name stands for (inverse of `objectPath` for the last segment). */
export function keyOfEntry(keyPrefix: string, name: string): string {
  return name.endsWith(DIR_OBJECT_SUFFIX) ? keyPrefix + name.slice(0, -DIR_OBJECT_SUFFIX.length) + '/' : keyPrefix + name;
}

/**
 * Object key ↔ on-disk path. An object is a directory holding `xl.meta`; a
 * "directory object" (key ending in '/') lives at `<key-without-slash>__XLDIR__`
 * so it never collides with the directory of the objects below it.
 *
 * Each '/'-separated segment of a key is one file name on the drives, in
 * the same folder as the names svc keeps there itself (`xl.meta`, the
 * object's data folders). Keys S3 allows that no drive can hold, or that
 * would collide with those names, are refused with a 400 that says which
 * (docs/s3-api.md "Object keys"; MinIO refuses such names the same way):
 *
 * - a segment longer than 255 bytes (UTF-8), or 246 as the last segment of
 *   a key ending in '/' (it gets `__XLDIR__` appended): `XSvcObjectNameSegmentTooLong`;
 * - a segment `xl.meta`: `XSvcObjectNameReserved` (a data folder of the
 *   object above is refused by the drive that holds both, `LocalDrive`);
 * - '', '.', '..', a segment ending in `__XLDIR__`: `InvalidObjectName`.
 */
import { SvcError } from '../util/errors.ts';

export const DIR_OBJECT_SUFFIX = '__XLDIR__';
/** Longest file name a drive holds (ext4, xfs, btrfs, tmpfs). */
export const MAX_NAME_BYTES = 255;
/** The file every object folder holds (`drive.ts` `XL_META`). */
const META_NAME = 'xl.meta';

/** On-disk relative path of an object key; rejects keys that would escape the volume or that no drive can hold. */
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
    if (seg === META_NAME) throw new SvcError('XSvcObjectNameReserved', `the key segment "${META_NAME}" is the name of every object's metadata file on the drives; this key cannot be stored`, { key });
    const bytes = Buffer.byteLength(seg, 'utf8');
    if (bytes > MAX_NAME_BYTES) {
      const last = seg.endsWith(DIR_OBJECT_SUFFIX) && key.endsWith('/');
      throw new SvcError(
        'XSvcObjectNameSegmentTooLong',
        last
          ? `the last segment of a key ending in '/' may be at most ${MAX_NAME_BYTES - DIR_OBJECT_SUFFIX.length} bytes (it is ${bytes - DIR_OBJECT_SUFFIX.length})`
          : `a key segment may be at most ${MAX_NAME_BYTES} bytes (one is ${bytes})`,
        { key },
      );
    }
  }
  return path;
}

/** The key an on-disk directory name stands for (inverse of `objectPath` for the last segment). */
export function keyOfEntry(keyPrefix: string, name: string): string {
  return name.endsWith(DIR_OBJECT_SUFFIX) ? keyPrefix + name.slice(0, -DIR_OBJECT_SUFFIX.length) + '/' : keyPrefix + name;
}

/** ListObjects v1 and v2, ListObjectVersions. */
import type { ObjectInfo } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { owner, quoteEtag, type S3Context, sendXml } from '../context.ts';
import { MAX_LIST_KEYS, parseLimit } from '../validate.ts';
import type { XmlNode } from '../xml.ts';
import { compareKeys } from '../../../util/key-order.ts';

function encodingType(ctx: S3Context): 'url' | undefined {
  const v = ctx.ep.query.get('encoding-type');
  if (v === undefined) return undefined;
  if (v.toLowerCase() !== 'url') throw new SvcError('InvalidArgument', 'Invalid Encoding Method specified in Request.');
  return 'url';
}

/** S3's `encoding-type=url`: like encodeURIComponent but keeps `/`. */
function encoder(enc: 'url' | undefined): (s: string) => string {
  if (!enc) return (s) => s;
  return (s) => encodeURIComponent(s).replace(/%2F/g, '/');
}

function contents(ctx: S3Context, o: ObjectInfo, enc: (s: string) => string, withOwner: boolean): XmlNode {
  return {
    Key: enc(o.name),
    LastModified: o.modTime,
    ETag: quoteEtag(o.etag),
    ...(o.checksum ? { ChecksumAlgorithm: o.checksum.algorithm, ChecksumType: o.checksum.type } : {}),
    Size: o.size,
    StorageClass: o.storageClass,
    ...(withOwner ? { Owner: owner(ctx) } : {}),
  };
}

function common(ctx: S3Context) {
  const q = ctx.ep.query;
  const enc = encodingType(ctx);
  const maxKeys = parseLimit(q.get('max-keys'), 'max-keys', MAX_LIST_KEYS, MAX_LIST_KEYS);
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  return { enc, maxKeys, prefix, delimiter };
}

async function list(ctx: S3Context, marker: string | undefined, maxKeys: number, prefix: string, delimiter: string) {
  if (maxKeys === 0) {
    await ctx.layer.getBucketInfo(ctx.ep.bucket);
    return { objects: [], prefixes: [], isTruncated: false, nextMarker: undefined };
  }
  return ctx.layer.listObjects(ctx.ep.bucket, {
    ...(prefix ? { prefix } : {}),
    ...(delimiter ? { delimiter } : {}),
    ...(marker ? { marker } : {}),
    maxKeys,
  });
}

export async function handleListObjectsV1(ctx: S3Context): Promise<void> {
  const { enc, maxKeys, prefix, delimiter } = common(ctx);
  const marker = ctx.ep.query.get('marker') ?? '';
  const r = await list(ctx, marker, maxKeys, prefix, delimiter);
  const e = encoder(enc);
  sendXml(ctx, 200, 'ListBucketResult', {
    Name: ctx.ep.bucket,
    Prefix: e(prefix),
    Marker: e(marker),
    MaxKeys: maxKeys,
    ...(delimiter ? { Delimiter: e(delimiter) } : {}),
    ...(enc ? { EncodingType: enc } : {}),
    IsTruncated: r.isTruncated,
    ...(r.isTruncated && r.nextMarker ? { NextMarker: e(r.nextMarker) } : {}),
    Contents: r.objects.map((o) => contents(ctx, o, e, true)),
    CommonPrefixes: r.prefixes.map((p) => ({ Prefix: e(p) })),
  });
}

/** Continuation tokens are opaque to clients: base64url of the next marker. */
export function encodeContinuationToken(marker: string): string {
  return Buffer.from(marker, 'utf8').toString('base64url');
}

export function decodeContinuationToken(token: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(token) || token === '') {
    throw new SvcError('InvalidArgument', 'The continuation token provided is incorrect.');
  }
  return Buffer.from(token, 'base64url').toString('utf8');
}

export async function handleListObjectsV2(ctx: S3Context): Promise<void> {
  const { enc, maxKeys, prefix, delimiter } = common(ctx);
  const q = ctx.ep.query;
  const token = q.get('continuation-token');
  const startAfter = q.get('start-after') ?? '';
  const fetchOwner = q.get('fetch-owner') === 'true';
  let marker = startAfter;
  // an empty token (what some clients send on the first page) means "from the start"
  if (token !== undefined && token !== '') {
    const fromToken = decodeContinuationToken(token);
    marker = compareKeys(fromToken, startAfter) > 0 ? fromToken : startAfter;
  }
  const r = await list(ctx, marker, maxKeys, prefix, delimiter);
  const e = encoder(enc);
  sendXml(ctx, 200, 'ListBucketResult', {
    Name: ctx.ep.bucket,
    Prefix: e(prefix),
    ...(startAfter ? { StartAfter: e(startAfter) } : {}),
    // echoed as sent, an empty one included (S3 does; clients compare it)
    ...(token !== undefined ? { ContinuationToken: token } : {}),
    KeyCount: r.objects.length + r.prefixes.length,
    MaxKeys: maxKeys,
    ...(delimiter ? { Delimiter: e(delimiter) } : {}),
    ...(enc ? { EncodingType: enc } : {}),
    IsTruncated: r.isTruncated,
    ...(r.isTruncated && r.nextMarker ? { NextContinuationToken: encodeContinuationToken(r.nextMarker) } : {}),
    Contents: r.objects.map((o) => contents(ctx, o, e, fetchOwner)),
    CommonPrefixes: r.prefixes.map((p) => ({ Prefix: e(p) })),
  });
}

export async function handleListObjectVersions(ctx: S3Context): Promise<void> {
  const { enc, maxKeys, prefix, delimiter } = common(ctx);
  const q = ctx.ep.query;
  const keyMarker = q.get('key-marker') ?? '';
  const versionIdMarker = q.get('version-id-marker') ?? '';
  if (versionIdMarker && !keyMarker) throw new SvcError('InvalidArgument', 'A version-id marker cannot be specified without a key marker.');
  if (maxKeys === 0) await ctx.layer.getBucketInfo(ctx.ep.bucket);
  const r =
    maxKeys === 0
      ? { versions: [], prefixes: [], isTruncated: false, nextKeyMarker: undefined, nextVersionIdMarker: undefined }
      : await ctx.layer.listObjectVersions(ctx.ep.bucket, {
          ...(prefix ? { prefix } : {}),
          ...(delimiter ? { delimiter } : {}),
          ...(keyMarker ? { keyMarker } : {}),
          ...(versionIdMarker ? { versionIdMarker } : {}),
          maxKeys,
        });
  const e = encoder(enc);
  const versions: XmlNode[] = [];
  const markers: XmlNode[] = [];
  for (const v of r.versions) {
    if (v.deleteMarker) {
      markers.push({ Key: e(v.name), VersionId: v.versionId, IsLatest: v.isLatest, LastModified: v.modTime, Owner: owner(ctx) });
    } else {
      versions.push({
        Key: e(v.name),
        VersionId: v.versionId,
        IsLatest: v.isLatest,
        LastModified: v.modTime,
        ETag: quoteEtag(v.etag),
        ...(v.checksum ? { ChecksumAlgorithm: v.checksum.algorithm, ChecksumType: v.checksum.type } : {}),
        Size: v.size,
        StorageClass: v.storageClass,
        Owner: owner(ctx),
      });
    }
  }
  sendXml(ctx, 200, 'ListVersionsResult', {
    Name: ctx.ep.bucket,
    Prefix: e(prefix),
    KeyMarker: e(keyMarker),
    VersionIdMarker: versionIdMarker,
    MaxKeys: maxKeys,
    ...(delimiter ? { Delimiter: e(delimiter) } : {}),
    ...(enc ? { EncodingType: enc } : {}),
    IsTruncated: r.isTruncated,
    ...(r.isTruncated && r.nextKeyMarker ? { NextKeyMarker: e(r.nextKeyMarker) } : {}),
    ...(r.isTruncated && r.nextVersionIdMarker ? { NextVersionIdMarker: r.nextVersionIdMarker } : {}),
    Version: versions,
    DeleteMarker: markers,
    CommonPrefixes: r.prefixes.map((p) => ({ Prefix: e(p) })),
  });
}

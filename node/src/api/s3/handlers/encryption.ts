/**
 * Bucket default encryption: Get/Put/DeleteBucketEncryption. New versions
 * written without encryption headers get the bucket's default (applied by
 * the object layer, so PUT, POST, copy and multipart all follow it).
 */
import { type BucketEncryption, decodeBucketEncryption, encodeBucketEncryption } from '../../../object/sse.ts';
import { SvcError } from '../../../util/errors.ts';
import { type S3Context, sendEmpty, sendXml } from '../context.ts';
import { readSmallBody } from '../put-data.ts';
import { parseXml, xmlList, xmlText } from '../xml.ts';

export async function handleGetBucketEncryption(ctx: S3Context): Promise<void> {
  const c = decodeBucketEncryption(await ctx.layer.getBucketConfig(ctx.ep.bucket, 'encryption'));
  if (!c) throw new SvcError('ServerSideEncryptionConfigurationNotFoundError');
  sendXml(ctx, 200, 'ServerSideEncryptionConfiguration', {
    Rule: {
      ApplyServerSideEncryptionByDefault: { SSEAlgorithm: c.algorithm, ...(c.kmsKeyId !== undefined ? { KMSMasterKeyID: c.kmsKeyId } : {}) },
      BucketKeyEnabled: c.bucketKeyEnabled === true,
    },
  });
}

export async function handlePutBucketEncryption(ctx: S3Context): Promise<void> {
  const doc = parseXml(await readSmallBody(ctx.req.headers, ctx.req, ctx.auth, 64 * 1024), 'ServerSideEncryptionConfiguration');
  const rules = xmlList(doc, 'Rule');
  if (rules.length !== 1) throw new SvcError('MalformedXML', 'A server-side encryption configuration holds exactly one Rule.');
  const by = xmlList(rules[0]!, 'ApplyServerSideEncryptionByDefault');
  if (by.length !== 1) throw new SvcError('MalformedXML', 'The Rule needs one ApplyServerSideEncryptionByDefault.');
  const alg = xmlText(by[0]!, 'SSEAlgorithm');
  const keyId = xmlText(by[0]!, 'KMSMasterKeyID');
  if (alg !== 'AES256' && alg !== 'aws:kms') {
    if (alg === 'aws:kms:dsse') throw new SvcError('NotImplemented', 'Dual-layer server-side encryption (aws:kms:dsse) is not supported by this server.');
    throw new SvcError('MalformedXML', 'SSEAlgorithm must be AES256 or aws:kms.');
  }
  if (keyId !== undefined && alg !== 'aws:kms') throw new SvcError('InvalidArgument', 'KMSMasterKeyID is only valid with SSEAlgorithm aws:kms.');
  const bke = xmlText(rules[0]!, 'BucketKeyEnabled');
  if (bke !== undefined && bke !== 'true' && bke !== 'false') throw new SvcError('MalformedXML', 'BucketKeyEnabled must be true or false.');
  const c: BucketEncryption = { algorithm: alg, ...(keyId !== undefined && keyId !== '' ? { kmsKeyId: keyId } : {}), ...(bke === 'true' ? { bucketKeyEnabled: true } : {}) };
  // The object layer checks that the key store holds the key (and is configured at all).
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'encryption', encodeBucketEncryption(c));
  sendEmpty(ctx, 200);
}

export async function handleDeleteBucketEncryption(ctx: S3Context): Promise<void> {
  await ctx.layer.setBucketConfig(ctx.ep.bucket, 'encryption', undefined);
  sendEmpty(ctx, 204);
}

/** Small read helpers over @aws-sdk/client-s3 for integration tests. */
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** The object's body as a string. */
export async function bodyOf(c: S3Client, bucket: string, key: string): Promise<string> {
  const r = await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray()).toString();
}

/** The keys ListObjectsV2 returns (first page). */
export async function keysOf(c: S3Client, bucket: string): Promise<(string | undefined)[]> {
  return ((await c.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key);
}

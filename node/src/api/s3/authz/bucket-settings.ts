/**
 * Object Ownership controls and Public Access Block: their XML documents
 * (PutBucketOwnershipControls, PutPublicAccessBlock) and stored forms. Pure.
 *
 * Defaults where a bucket has no document stored: ownership `ObjectWriter`
 * (ACLs enabled) and no public access block — S3's defaults before April
 * 2023, and what self-hosted S3 servers keep, so `public-read` works out of
 * the box. Either document can be set at any time to lock a bucket down.
 */
import { SvcError } from '../../../util/errors.ts';
import { type XmlNode, xmlList, xmlText } from '../xml.ts';

export type ObjectOwnership = 'BucketOwnerEnforced' | 'BucketOwnerPreferred' | 'ObjectWriter';
const OWNERSHIPS: readonly ObjectOwnership[] = ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'];
export const DEFAULT_OWNERSHIP: ObjectOwnership = 'ObjectWriter';

export interface PublicAccessBlock {
  blockPublicAcls: boolean;
  ignorePublicAcls: boolean;
  blockPublicPolicy: boolean;
  restrictPublicBuckets: boolean;
}

export const NO_PUBLIC_ACCESS_BLOCK: PublicAccessBlock = { blockPublicAcls: false, ignorePublicAcls: false, blockPublicPolicy: false, restrictPublicBuckets: false };

export function parseOwnership(value: string): ObjectOwnership {
  if (!(OWNERSHIPS as readonly string[]).includes(value)) throw new SvcError('InvalidArgument', `Invalid x-amz-object-ownership value '${value}'.`);
  return value as ObjectOwnership;
}

/** `<OwnershipControls><Rule><ObjectOwnership>…` (exactly one rule). */
export function ownershipFromXml(doc: Record<string, unknown>): ObjectOwnership {
  const rules = xmlList(doc, 'Rule');
  if (rules.length !== 1) throw new SvcError('MalformedXML', 'OwnershipControls must hold exactly one Rule.');
  const v = xmlText(rules[0]!, 'ObjectOwnership');
  if (v === undefined || !(OWNERSHIPS as readonly string[]).includes(v)) throw new SvcError('MalformedXML', 'ObjectOwnership must be BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter.');
  return v as ObjectOwnership;
}

export function ownershipToXml(o: ObjectOwnership): XmlNode {
  return { Rule: { ObjectOwnership: o } };
}

const PAB_FIELDS: [keyof PublicAccessBlock, string][] = [
  ['blockPublicAcls', 'BlockPublicAcls'],
  ['ignorePublicAcls', 'IgnorePublicAcls'],
  ['blockPublicPolicy', 'BlockPublicPolicy'],
  ['restrictPublicBuckets', 'RestrictPublicBuckets'],
];

export function publicAccessBlockFromXml(doc: Record<string, unknown>): PublicAccessBlock {
  const out = { ...NO_PUBLIC_ACCESS_BLOCK };
  for (const [field, name] of PAB_FIELDS) {
    const v = xmlText(doc, name);
    if (v === undefined) continue;
    if (v !== 'true' && v !== 'false') throw new SvcError('MalformedXML', `${name} must be true or false.`);
    out[field] = v === 'true';
  }
  return out;
}

export function publicAccessBlockToXml(p: PublicAccessBlock): XmlNode {
  const out: XmlNode = {};
  for (const [field, name] of PAB_FIELDS) out[name] = p[field];
  return out;
}

export function encodeSetting(v: ObjectOwnership | PublicAccessBlock): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, value: v }));
}

export function decodeOwnership(raw: Uint8Array | undefined): ObjectOwnership | undefined {
  if (!raw) return undefined;
  const d = JSON.parse(Buffer.from(raw).toString('utf8')) as { value: unknown };
  return parseOwnership(String(d.value));
}

export function decodePublicAccessBlock(raw: Uint8Array | undefined): PublicAccessBlock | undefined {
  if (!raw) return undefined;
  const d = JSON.parse(Buffer.from(raw).toString('utf8')) as { value: Partial<PublicAccessBlock> };
  const out = { ...NO_PUBLIC_ACCESS_BLOCK };
  for (const [field] of PAB_FIELDS) out[field] = d.value[field] === true;
  return out;
}

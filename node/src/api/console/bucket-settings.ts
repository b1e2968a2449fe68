/**
 * A bucket's settings as the console edits them: the S3 documents
 * (lifecycle, CORS, tags, default encryption, object lock) in the JSON shape
 * the AWS CLI and SDKs use (`{"Rules": [{"ID": ..., "Filter": {"Prefix": ...}}]}`),
 * turned into the API's XML and back, and the bucket policy as its own JSON
 * text. The console validates nothing itself: the node's S3 API checks each
 * document as it checks any client's, and its refusal (`MalformedXML`,
 * `MalformedPolicy`, `InvalidArgument`) reaches the page with its message.
 * Pure apart from the calls at the bottom.
 */
import { SvcError } from '../../util/errors.ts';
import { parseXml, toXml, type XmlNode, type XmlValue } from '../s3/xml.ts';
import { failure, send } from './call.ts';
import type { SessionCredentials } from './sessions.ts';
import { encodePath, type Upstream } from './upstream.ts';

export const BUCKET_SETTINGS = ['lifecycle', 'cors', 'tagging', 'encryption', 'object-lock', 'policy'] as const;
export type BucketSettingKind = (typeof BUCKET_SETTINGS)[number];

/** Subresource, XML root element and the S3 errors that mean "nothing set". */
const KINDS: Record<Exclude<BucketSettingKind, 'policy'>, { root: string; unset: readonly string[]; deletable: boolean }> = {
  lifecycle: { root: 'LifecycleConfiguration', unset: ['NoSuchLifecycleConfiguration'], deletable: true },
  cors: { root: 'CORSConfiguration', unset: ['NoSuchCORSConfiguration'], deletable: true },
  tagging: { root: 'Tagging', unset: ['NoSuchTagSet', 'NoSuchTagSetError'], deletable: true },
  encryption: { root: 'ServerSideEncryptionConfiguration', unset: ['ServerSideEncryptionConfigurationNotFoundError'], deletable: true },
  'object-lock': { root: 'ObjectLockConfiguration', unset: ['ObjectLockConfigurationNotFoundError'], deletable: false },
};

/** JSON list name → XML element repeated for each item (`wrapped`: inside an element of the list's own name). */
const LISTS: Readonly<Record<string, { readonly item: string; readonly wrapped: boolean }>> = {
  Rules: { item: 'Rule', wrapped: false },
  CORSRules: { item: 'CORSRule', wrapped: false },
  AllowedMethods: { item: 'AllowedMethod', wrapped: false },
  AllowedOrigins: { item: 'AllowedOrigin', wrapped: false },
  AllowedHeaders: { item: 'AllowedHeader', wrapped: false },
  ExposeHeaders: { item: 'ExposeHeader', wrapped: false },
  TagSet: { item: 'Tag', wrapped: true },
  Tags: { item: 'Tag', wrapped: false },
  Transitions: { item: 'Transition', wrapped: false },
  NoncurrentVersionTransitions: { item: 'NoncurrentVersionTransition', wrapped: false },
};

/** XML element → JSON list name, for reading documents back (`Tag` inside `TagSet` is the wrapped case). */
const ITEMS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(LISTS).filter(([, v]) => !v.wrapped).map(([k, v]) => [v.item, k]));

const NUMBERS = new Set(['Days', 'Years', 'NoncurrentDays', 'NewerNoncurrentVersions', 'DaysAfterInitiation', 'MaxAgeSeconds', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan']);
const BOOLEANS = new Set(['ExpiredObjectDeleteMarker', 'BucketKeyEnabled']);

function toNode(v: unknown, path: string): XmlValue {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) throw new SvcError('InvalidArgument', `${path}: a list is not expected here`);
  if (typeof v !== 'object') throw new SvcError('InvalidArgument', `${path}: unexpected value`);
  const out: XmlNode = {};
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(k)) throw new SvcError('InvalidArgument', `${path}: "${k}" is not a field of this document`);
    const list = LISTS[k];
    if (Array.isArray(child)) {
      if (list === undefined) throw new SvcError('InvalidArgument', `${path}.${k}: a list is not expected here`);
      const items = child.map((c, i) => toNode(c, `${path}.${k}[${i}]`)) as XmlNode[] | string[];
      if (list.wrapped) out[k] = { [list.item]: items };
      else out[list.item] = items;
    } else out[k] = toNode(child, `${path}.${k}`);
  }
  return out;
}

/** The XML document for a setting given as AWS-CLI-shaped JSON. */
export function settingToXml(kind: Exclude<BucketSettingKind, 'policy'>, value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new SvcError('InvalidArgument', `the ${kind} settings must be a JSON object`);
  return toXml(KINDS[kind].root, toNode(value, kind) as XmlNode);
}

function fromNode(v: unknown, name: string): unknown {
  if (typeof v === 'string') {
    if (NUMBERS.has(name) && /^-?[0-9]+$/.test(v.trim())) return Number(v.trim());
    if (BOOLEANS.has(name)) return v.trim() === 'true';
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => fromNode(x, name));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    if (k.startsWith('@')) continue;
    if (k === 'TagSet') {
      const tags = (child as Record<string, unknown> | string)?.constructor === Object ? (child as Record<string, unknown>).Tag : undefined;
      out.TagSet = tags === undefined ? [] : (Array.isArray(tags) ? tags : [tags]).map((t) => fromNode(t, 'Tag'));
      continue;
    }
    // singular where the JSON is singular: a filter's one Tag, object lock's one Rule
    const singular = (k === 'Tag' && name !== 'And') || (k === 'Rule' && name === 'ObjectLockConfiguration');
    const list = singular ? undefined : ITEMS[k];
    if (list !== undefined) out[list] = (Array.isArray(child) ? child : [child]).map((x) => fromNode(x, k));
    else out[k] = fromNode(Array.isArray(child) && singular ? child[0] : child, k);
  }
  return out;
}

/** A setting's XML as AWS-CLI-shaped JSON. */
export function settingFromXml(kind: Exclude<BucketSettingKind, 'policy'>, xml: string): Record<string, unknown> {
  return fromNode(parseXml(xml, KINDS[kind].root), KINDS[kind].root) as Record<string, unknown>;
}

// ---- the calls

/** A setting now: its document (JSON; the policy as its text), or null when the bucket has none. */
export async function getSetting(up: Upstream, cred: SessionCredentials, bucket: string, kind: BucketSettingKind): Promise<{ kind: BucketSettingKind; value: unknown }> {
  const res = await send(up, cred, { method: 'GET', path: encodePath(bucket), query: { [kind]: '' } });
  if (res.status >= 300) {
    const err = await failure(res);
    const unset = kind === 'policy' ? ['NoSuchBucketPolicy'] : KINDS[kind].unset;
    if (unset.includes(err.code)) return { kind, value: null };
    throw err;
  }
  const text = await res.body.text();
  return { kind, value: kind === 'policy' ? text : settingFromXml(kind, text) };
}

/** Sets a setting (the policy as text, the others as JSON); the node checks the document. */
export async function putSetting(up: Upstream, cred: SessionCredentials, bucket: string, kind: BucketSettingKind, value: unknown): Promise<void> {
  let body: string;
  if (kind === 'policy') {
    if (typeof value !== 'string' || value.trim() === '') throw new SvcError('InvalidArgument', 'give the policy document as JSON text');
    body = value;
  } else body = settingToXml(kind, value);
  const res = await send(up, cred, { method: 'PUT', path: encodePath(bucket), query: { [kind]: '' }, headers: { 'content-type': kind === 'policy' ? 'application/json' : 'application/xml' }, body });
  if (res.status >= 300) throw await failure(res);
  await res.body.text().catch(() => '');
}

/** Removes a setting (object lock cannot be removed from a bucket). */
export async function deleteSetting(up: Upstream, cred: SessionCredentials, bucket: string, kind: BucketSettingKind): Promise<void> {
  if (kind !== 'policy' && !KINDS[kind].deletable) throw new SvcError('InvalidArgument', 'object lock cannot be removed from a bucket; set its default retention instead');
  const res = await send(up, cred, { method: 'DELETE', path: encodePath(bucket), query: { [kind]: '' } });
  if (res.status >= 300) throw await failure(res);
  await res.body.text().catch(() => '');
}

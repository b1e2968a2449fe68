/**
 * Bucket events, pure: the event names S3 defines (and the ones svc emits),
 * name patterns (`s3:ObjectCreated:*`), the per-key monotonic sequencer and
 * the AWS S3 event message (`Records[]`, event version 2.1) a target
 * receives. No I/O.
 */
import type { ChangeOrigin } from '../object/post-commit.ts';

/** Every event svc can emit, without the `s3:` prefix (as the message's `eventName` carries it). */
export const EVENT_NAMES = [
  'ObjectCreated:Put',
  'ObjectCreated:Post',
  'ObjectCreated:Copy',
  'ObjectCreated:CompleteMultipartUpload',
  'ObjectRemoved:Delete',
  'ObjectRemoved:DeleteMarkerCreated',
  'ObjectAccessed:Get',
  'ObjectAccessed:Head',
  'ObjectTagging:Put',
  'ObjectTagging:Delete',
  'ObjectAcl:Put',
  'LifecycleExpiration:Delete',
  'LifecycleExpiration:DeleteMarkerCreated',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

const FAMILIES = new Set(EVENT_NAMES.map((n) => n.slice(0, n.indexOf(':'))));

/**
 * Event types S3 defines that svc has nothing to emit for (no replication,
 * no restore from an archive tier, no storage-class transitions): refused in
 * a configuration with the S3 error, so nobody waits for events that never
 * come.
 */
const NOT_EMITTED = /^s3:(Replication|ObjectRestore|LifecycleTransition|IntelligentTiering|ReducedRedundancyLostObject)(:|$)/;

/** Whether `pattern` (`s3:ObjectCreated:*`, `s3:ObjectRemoved:Delete`) is an event type svc accepts in a configuration. */
export function isKnownEventPattern(pattern: string): boolean {
  if (NOT_EMITTED.test(pattern)) return false;
  const m = /^s3:([A-Za-z]+):(.+)$/.exec(pattern);
  if (!m) return false;
  if (m[2] === '*') return FAMILIES.has(m[1]!);
  return (EVENT_NAMES as readonly string[]).includes(`${m[1]}:${m[2]}`);
}

/** Whether a configured event type (`s3:ObjectCreated:*`) selects `name` (`ObjectCreated:Put`). */
export function patternMatches(pattern: string, name: EventName): boolean {
  if (!pattern.startsWith('s3:')) return false;
  const p = pattern.slice(3);
  if (p.endsWith(':*')) return name.startsWith(p.slice(0, -1));
  return p === name;
}

/** The concrete event names a pattern stands for. */
export function expandPattern(pattern: string): EventName[] {
  return EVENT_NAMES.filter((n) => patternMatches(pattern, n));
}

/**
 * An object key as the message carries it: URL-encoded as an HTML form
 * encodes a value (space as `+`), keeping `/` and the characters a form
 * encoder leaves alone (`A-Z a-z 0-9 - _ . *`), so `unquote_plus` /
 * `decodeURIComponent(k.replace(/\+/g, ' '))` gives the key back.
 */
export function encodeEventKey(key: string): string {
  let out = '';
  for (const b of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.*/]/.test(c)) out += c;
    else if (b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Per-key monotonic sequencer: 16 upper-case hex digits of a nanosecond
 * stamp, bumped above the last one this process gave the same key. Two
 * events of one key compare as strings in the order they happened on this
 * node; across nodes, in the order of their clocks (the key's lock orders
 * the writes, so that holds whenever the nodes' clocks agree to within the
 * time between the two writes).
 */
export class Sequencer {
  readonly #last = new Map<string, bigint>();
  readonly #max: number;

  constructor(maxKeys = 65_536) {
    this.#max = maxKeys;
  }

  next(bucket: string, key: string, nowMs: number): string {
    const id = `${bucket}/${key}`;
    let v = BigInt(Math.floor(nowMs)) * 1_000_000n;
    const last = this.#last.get(id);
    if (last !== undefined && v <= last) v = last + 1n;
    this.#last.delete(id);
    this.#last.set(id, v);
    if (this.#last.size > this.#max) this.#last.delete(this.#last.keys().next().value!);
    return v.toString(16).toUpperCase().padStart(16, '0');
  }
}

/** Who asked and how, as the message tells it (`userIdentity`, `requestParameters`, `responseElements`, `source`). */
export type EventOrigin = Omit<ChangeOrigin, 'via'>;

/** One event, before it is addressed to a configuration (the fields every target gets). */
export interface ObjectEvent {
  name: EventName;
  bucket: string;
  key: string;
  /** Unix ms. */
  time: number;
  /** Omitted for the null version (an unversioned bucket), as S3 does. */
  versionId?: string;
  /** Created and accessed objects only. */
  size?: number;
  etag?: string;
  contentType?: string;
  userMetadata?: Record<string, string>;
  sequencer: string;
  origin: EventOrigin;
}

/** Deployment facts the message carries. */
export interface EventSourceInfo {
  region: string;
  /** `s3.bucket.ownerIdentity.principalId`. */
  ownerId: string;
}

/** The AWS S3 event record (event version 2.1) for one configuration. */
export function eventRecord(e: ObjectEvent, configurationId: string, src: EventSourceInfo): Record<string, unknown> {
  const object: Record<string, unknown> = { key: encodeEventKey(e.key) };
  if (e.size !== undefined) object.size = e.size;
  if (e.etag !== undefined) object.eTag = e.etag;
  if (e.versionId !== undefined && e.versionId !== 'null') object.versionId = e.versionId;
  if (e.contentType !== undefined) object.contentType = e.contentType;
  if (e.userMetadata !== undefined && Object.keys(e.userMetadata).length > 0) {
    object.userMetadata = Object.fromEntries(Object.entries(e.userMetadata).map(([k, v]) => [`X-Amz-Meta-${k}`, v]));
  }
  object.sequencer = e.sequencer;
  const source: Record<string, string> = {};
  if (e.origin.host !== undefined) source.host = e.origin.host;
  if (e.origin.userAgent !== undefined) source.userAgent = e.origin.userAgent;
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: src.region,
    eventTime: new Date(e.time).toISOString(),
    eventName: e.name,
    userIdentity: { principalId: e.origin.principalId },
    requestParameters: { sourceIPAddress: e.origin.sourceIp },
    responseElements: { 'x-amz-request-id': e.origin.requestId, 'x-amz-id-2': e.origin.hostId },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId,
      bucket: { name: e.bucket, ownerIdentity: { principalId: src.ownerId }, arn: `arn:aws:s3:::${e.bucket}` },
      object,
    },
    ...(Object.keys(source).length > 0 ? { source } : {}),
  };
}

/** The message a target receives: one record, as S3 sends it. */
export function eventMessage(e: ObjectEvent, configurationId: string, src: EventSourceInfo): { Records: Record<string, unknown>[] } {
  return { Records: [eventRecord(e, configurationId, src)] };
}

/** `bucket/key` as targets that index by object (Redis namespace, PostgreSQL/MySQL namespace) name it. */
export function eventObjectName(e: Pick<ObjectEvent, 'bucket' | 'key'>): string {
  return `${e.bucket}/${e.key}`;
}

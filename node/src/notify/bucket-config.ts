/**
 * A bucket's notification configuration, pure: the
 * `NotificationConfiguration` document (Queue, Topic and CloudFunction
 * configurations naming target ARNs, event types, prefix/suffix filters)
 * parsed and validated with S3's errors, its stored form, and the one
 * matching rule (which configurations an event of a key selects).
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../util/errors.ts';
import { type EventName, expandPattern, isKnownEventPattern, patternMatches } from './event.ts';

/** The element that holds each kind of configuration and the element naming its destination. */
export const CONFIG_KINDS = [
  { list: 'QueueConfiguration', arn: 'Queue' },
  { list: 'TopicConfiguration', arn: 'Topic' },
  { list: 'CloudFunctionConfiguration', arn: 'CloudFunction' },
] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number]['list'];

export interface NotificationRule {
  id: string;
  kind: ConfigKind;
  /** The destination as configured (`arn:svc:sqs::<id>:<type>`). */
  arn: string;
  /** Event types as configured (`s3:ObjectCreated:*`). */
  events: string[];
  prefix?: string;
  suffix?: string;
}

export interface NotificationConfig {
  rules: NotificationRule[];
  /** `<EventBridgeConfiguration/>` was present (kept and returned; svc has no EventBridge to send to). */
  eventBridge?: boolean;
}

/** A target's identity in ARNs: `arn:<partition>:<service>:<region>:<id>:<type>`. */
export interface TargetArn {
  id: string;
  type: string;
  region: string;
}

const ARN = /^arn:(svc|minio):(sqs|sns|lambda):([^:]*):([^:]+):([^:]+)$/;

/** Parses a destination ARN (`arn:svc:sqs::1:webhook`; MinIO's `arn:minio:` partition is accepted too), undefined when it is not one. */
export function parseTargetArn(arn: string): TargetArn | undefined {
  const m = ARN.exec(arn);
  if (!m) return undefined;
  return { region: m[3]!, id: m[4]!, type: m[5]! };
}

/** The ARN svc lists for a target. */
export function targetArn(id: string, type: string, region = ''): string {
  return `arn:svc:sqs:${region}:${id}:${type}`;
}

/** The key a target is found by (`<id>:<type>`), whatever partition, service or region its ARN was written with. */
export function targetKey(t: Pick<TargetArn, 'id' | 'type'>): string {
  return `${t.id}:${t.type}`;
}

/** S3's longest filter value (1024 bytes of UTF-8). */
const MAX_FILTER_VALUE = 1024;
/** At most this many configurations in one document. */
export const MAX_RULES = 100;

function invalid(message: string, details?: Record<string, unknown>): SvcError {
  return new SvcError('InvalidArgument', message, details);
}

function texts(node: Record<string, unknown>, name: string): string[] {
  const v = node[name];
  if (v === undefined) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr.map((x) => {
    if (typeof x !== 'string') throw new SvcError('MalformedXML', `Element <${name}> must hold text.`);
    return x.trim();
  });
}

function children(node: Record<string, unknown>, name: string): Record<string, unknown>[] {
  const v = node[name];
  if (v === undefined) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr.map((x) => {
    if (x === '') return {};
    if (typeof x !== 'object' || x === null) throw new SvcError('MalformedXML', `Element <${name}> must hold child elements.`);
    return x as Record<string, unknown>;
  });
}

function one(node: Record<string, unknown>, name: string): string | undefined {
  const l = texts(node, name);
  if (l.length > 1) throw new SvcError('MalformedXML', `Element <${name}> may appear only once.`);
  return l[0];
}

function filterOf(c: Record<string, unknown>): { prefix?: string; suffix?: string } {
  const filters = children(c, 'Filter');
  if (filters.length > 1) throw new SvcError('MalformedXML', 'A configuration has at most one Filter.');
  if (filters.length === 0) return {};
  const keys = children(filters[0]!, 'S3Key');
  if (keys.length > 1) throw new SvcError('MalformedXML', 'A Filter has at most one S3Key.');
  if (keys.length === 0) return {};
  const out: { prefix?: string; suffix?: string } = {};
  for (const r of children(keys[0]!, 'FilterRule')) {
    const name = one(r, 'Name');
    const raw = r.Value;
    const value = raw === undefined ? '' : typeof raw === 'string' ? raw : undefined;
    if (value === undefined) throw new SvcError('MalformedXML', 'FilterRule Value must hold text.');
    const n = name?.toLowerCase();
    if (n !== 'prefix' && n !== 'suffix') throw invalid('filter rule name must be either prefix or suffix', { argumentName: 'FilterRule', argumentValue: name ?? '' });
    if (Buffer.byteLength(value) > MAX_FILTER_VALUE) throw invalid('The size of a filter rule value cannot exceed 1024 bytes in UTF-8 representation.');
    if (out[n] !== undefined) throw invalid(`Cannot specify more than one ${n} rule in a filter.`, { argumentName: 'FilterRule', argumentValue: n });
    out[n] = value;
  }
  return out;
}

/**
 * Parses a NotificationConfiguration document (already XML-parsed) and
 * validates it: every ARN must name a target this deployment has
 * (`knownTarget`), every event type must be one svc emits, filters at most
 * one prefix and one suffix, and no two configurations sending to the same
 * destination may select the same event of the same key (S3's "overlap").
 * Configurations without an Id get a generated one, as S3 does.
 */
export function parseNotificationConfig(doc: Record<string, unknown>, knownTarget: (arn: TargetArn) => boolean, region: string): NotificationConfig {
  const rules: NotificationRule[] = [];
  for (const kind of CONFIG_KINDS) {
    for (const c of children(doc, kind.list)) {
      const arn = one(c, kind.arn);
      if (arn === undefined || arn === '') throw new SvcError('MalformedXML', `A ${kind.list} needs a ${kind.arn}.`);
      const t = parseTargetArn(arn);
      if (t === undefined) throw invalid('A specified destination ARN does not exist or is not well-formed. Verify the destination ARN.', { argumentName: arn, argumentValue: 'The ARN is not well formed' });
      if (t.region !== '' && t.region !== region) {
        throw invalid('A specified destination is in a different region than the bucket. You must use a destination that resides in the same region as the bucket.', { argumentName: arn, argumentValue: t.region });
      }
      if (!knownTarget(t)) {
        throw invalid('Unable to validate the following destination configurations', { argumentName: arn, argumentValue: 'The destination ARN does not name a target of this deployment' });
      }
      const events = texts(c, 'Event');
      if (events.length === 0) throw new SvcError('MalformedXML', `A ${kind.list} needs at least one Event.`);
      for (const e of events) {
        if (!isKnownEventPattern(e)) throw invalid('A specified event is not supported for notifications.', { argumentName: 'Event', argumentValue: e });
      }
      const id = one(c, 'Id');
      if (id !== undefined && Buffer.byteLength(id) > 1024) throw invalid('A configuration Id is at most 1024 bytes long.');
      rules.push({ id: id !== undefined && id !== '' ? id : randomBytes(18).toString('base64url'), kind: kind.list, arn, events: [...new Set(events)], ...filterOf(c) });
    }
  }
  if (rules.length > MAX_RULES) throw invalid(`A notification configuration holds at most ${MAX_RULES} configurations.`);
  const ids = new Set<string>();
  for (const r of rules) {
    if (ids.has(r.id)) throw invalid('Two configurations have the same Id.', { argumentName: 'Id', argumentValue: r.id });
    ids.add(r.id);
  }
  checkOverlaps(rules);
  const out: NotificationConfig = { rules };
  if (doc.EventBridgeConfiguration !== undefined) out.eventBridge = true;
  return out;
}

/** Two filters both select some key: each prefix starts the other (or one is absent), and so for suffixes. */
function filtersOverlap(a: NotificationRule, b: NotificationRule): boolean {
  const pa = a.prefix ?? '';
  const pb = b.prefix ?? '';
  const sa = a.suffix ?? '';
  const sb = b.suffix ?? '';
  return (pa.startsWith(pb) || pb.startsWith(pa)) && (sa.endsWith(sb) || sb.endsWith(sa));
}

/**
 * Refuses two configurations sending to one destination when an event of
 * some key would match both (it would be delivered twice). Configurations
 * with different destinations may overlap: that is how one event reaches a
 * webhook and a queue (MinIO allows it; S3 itself fans out through SNS).
 */
export function checkOverlaps(rules: readonly NotificationRule[]): void {
  for (let i = 0; i < rules.length; i++) {
    for (let j = i + 1; j < rules.length; j++) {
      const a = rules[i]!;
      const b = rules[j]!;
      const ta = parseTargetArn(a.arn);
      const tb = parseTargetArn(b.arn);
      if (!ta || !tb || targetKey(ta) !== targetKey(tb)) continue;
      const ea = new Set(a.events.flatMap(expandPattern));
      const shared = b.events.flatMap(expandPattern).some((n) => ea.has(n));
      if (shared && filtersOverlap(a, b)) {
        throw invalid('Configurations overlap. Configurations on the same bucket cannot share a common event type.', { argumentName: 'Id', argumentValue: `${a.id}, ${b.id}` });
      }
    }
  }
}

/** One configuration an event selected: its Id (the message's `configurationId`) and destination. */
export interface RuleMatch {
  id: string;
  target: string;
}

/** The configurations an event of `key` selects, destination as `targetKey`. */
export function matchRules(c: NotificationConfig, name: EventName, key: string): RuleMatch[] {
  const out: RuleMatch[] = [];
  for (const r of c.rules) {
    if (r.prefix !== undefined && !key.startsWith(r.prefix)) continue;
    if (r.suffix !== undefined && !key.endsWith(r.suffix)) continue;
    if (!r.events.some((p) => patternMatches(p, name))) continue;
    const t = parseTargetArn(r.arn);
    if (t) out.push({ id: r.id, target: targetKey(t) });
  }
  return out;
}

/** Whether any configuration could select an event of this family (`ObjectCreated`), for any key. */
export function wantsAny(c: NotificationConfig, names: readonly EventName[]): boolean {
  return c.rules.some((r) => r.events.some((p) => names.some((n) => patternMatches(p, n))));
}

export function encodeNotificationConfig(c: NotificationConfig): Uint8Array {
  return Buffer.from(JSON.stringify(c));
}

export function decodeNotificationConfig(raw: Uint8Array | undefined): NotificationConfig | undefined {
  if (raw === undefined) return undefined;
  try {
    const c = JSON.parse(Buffer.from(raw).toString('utf8')) as NotificationConfig;
    if (!Array.isArray(c.rules)) throw new Error('no rules');
    return c;
  } catch (err) {
    throw new SvcError('FileCorrupt', 'bucket notification configuration', undefined, { cause: err });
  }
}

/** The document body S3 returns for GetBucketNotificationConfiguration (element names as S3 writes them). */
export function notificationConfigXml(c: NotificationConfig | undefined): Record<string, unknown> {
  const out: Record<string, unknown[]> = {};
  for (const r of c?.rules ?? []) {
    const kind = CONFIG_KINDS.find((k) => k.list === r.kind)!;
    const rules = [
      ...(r.prefix !== undefined ? [{ Name: 'prefix', Value: r.prefix }] : []),
      ...(r.suffix !== undefined ? [{ Name: 'suffix', Value: r.suffix }] : []),
    ];
    const node: Record<string, unknown> = { Id: r.id, [kind.arn]: r.arn, Event: r.events };
    if (rules.length > 0) node.Filter = { S3Key: { FilterRule: rules } };
    (out[r.kind] ??= []).push(node);
  }
  const body: Record<string, unknown> = {};
  for (const k of CONFIG_KINDS) if (out[k.list]) body[k.list] = out[k.list];
  if (c?.eventBridge) body.EventBridgeConfiguration = {};
  return body;
}

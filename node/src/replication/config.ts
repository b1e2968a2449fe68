/**
 * A bucket's replication configuration, pure: S3's `ReplicationConfiguration`
 * document (rules with ID, Priority, Status, a prefix/tag Filter or the
 * legacy rule-level Prefix, DeleteMarkerReplication, MinIO's
 * DeleteReplication, ExistingObjectReplication, ReplicaModifications,
 * Destination bucket and storage class) parsed and validated with the
 * errors S3 gives, its stored form, its XML, and rule selection: which
 * destinations a version (its key and tags) or a delete goes to.
 *
 * Destinations are remote targets (`targets.ts`): `Destination/Bucket` is a
 * target's ARN (`arn:svc:replication::<id>:<bucket>`, MinIO's
 * `arn:minio:replication:…` too) or S3's `arn:aws:s3:::<bucket>`, which names
 * the one target of the bucket replicating to that remote bucket. The
 * resolution happens at PUT time, so the stored rules always carry the
 * target's ARN.
 */
import { SvcError } from '../util/errors.ts';

export type RuleStatus = 'Enabled' | 'Disabled';

export interface Tag {
  key: string;
  value: string;
}

export interface ReplicationRule {
  id: string;
  /** Larger wins among rules sending to the same destination (S3). 0 for legacy rules. */
  priority: number;
  status: RuleStatus;
  /** Key prefix the rule covers ('' = every key). */
  prefix: string;
  /** Every tag must be on the version (AND). */
  tags: Tag[];
  /** `Filter` (schema V2) or the rule-level `Prefix` (V1). */
  schema: 'v1' | 'v2';
  /** DeleteMarkerReplication: delete markers (a versioned DELETE without a version id) are replicated. */
  deleteMarkers: boolean;
  /** DeleteReplication (MinIO's extension, `mc replicate add --replicate delete`): deletes of a version id are replicated. */
  deletes: boolean;
  /** ExistingObjectReplication: versions written before the rule are replicated by a resync. */
  existingObjects: boolean;
  /** ReplicaModifications: metadata changes of replicas flow back (two-way setups). */
  replicaModifications: boolean;
  /** The remote target's ARN. */
  destination: string;
  /** Storage class the replicas are written with (undefined: the source version's). */
  storageClass?: string;
}

export interface ReplicationConfig {
  /** `Role` as given (kept and returned; svc authorizes with the target's credential, not a role). */
  role: string;
  rules: ReplicationRule[];
}

/** What the S3 parse needs to know of the deployment. */
export interface ReplicationContext {
  /** The bucket's remote targets (ARN → remote bucket). */
  targets: readonly { arn: string; targetBucket: string }[];
}

/** Storage classes S3 accepts for a destination (the remote store may refuse some). */
export const DESTINATION_STORAGE_CLASSES = [
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER',
  'DEEP_ARCHIVE',
  'GLACIER_IR',
] as const;

export const MAX_RULES = 1000;
const MAX_ID = 255;
const MAX_PREFIX = 1024;
const MAX_TAG_KEY = 128;
const MAX_TAG_VALUE = 256;

// ---- small readers over the parsed document (`api/s3/xml.ts` → plain objects)

type Node = Record<string, unknown>;

function text(node: Node, name: string): string | undefined {
  const v = node[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) throw new SvcError('MalformedXML', `Element <${name}> may appear only once.`);
  throw new SvcError('MalformedXML', `Element <${name}> must hold text.`);
}

function child(node: Node, name: string): Node | undefined {
  const v = node[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new SvcError('MalformedXML', `Element <${name}> may appear only once.`);
  if (v === '') return {};
  if (typeof v !== 'object' || v === null) throw new SvcError('MalformedXML', `Element <${name}> must hold child elements.`);
  return v as Node;
}

function list(node: Node, name: string): Node[] {
  const v = node[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => {
    if (x === '') return {};
    if (typeof x !== 'object' || x === null) throw new SvcError('MalformedXML', `Element <${name}> must hold child elements.`);
    return x as Node;
  });
}

function statusOf(node: Node | undefined, where: string): RuleStatus | undefined {
  if (node === undefined) return undefined;
  const s = text(node, 'Status')?.trim();
  if (s === 'Enabled' || s === 'Disabled') return s;
  throw new SvcError('MalformedXML', `${where}/Status must be Enabled or Disabled.`);
}

function tagOf(t: Node): Tag {
  const key = text(t, 'Key');
  const value = text(t, 'Value') ?? '';
  if (key === undefined || key === '') throw new SvcError('InvalidArgument', 'A tag filter needs a non-empty Key.', { argumentName: 'Key' });
  if (key.length > MAX_TAG_KEY) throw new SvcError('InvalidArgument', 'The TagKey you have provided is too long, max 128', { argumentName: 'Key' });
  if (value.length > MAX_TAG_VALUE) throw new SvcError('InvalidArgument', 'The TagValue you have provided is too long, max 256', { argumentName: 'Value' });
  return { key, value };
}

const TARGET_ARN = /^arn:(svc|minio):replication:[^:]*:[^:]+:[^:]+$/;
const S3_ARN = /^arn:aws:s3:::([^/:]+)$/;

/** Resolves `Destination/Bucket` to one of the bucket's remote targets. */
function resolveDestination(bucket: string | undefined, ctx: ReplicationContext): string {
  if (bucket === undefined || bucket.trim() === '') throw new SvcError('InvalidRequest', 'Destination bucket must be specified.');
  const b = bucket.trim();
  if (TARGET_ARN.test(b)) {
    const hit = ctx.targets.find((t) => t.arn === b || t.arn.replace(/^arn:svc:/, 'arn:minio:') === b);
    if (!hit) throw new SvcError('InvalidRequest', `Destination bucket must be a remote target of this bucket: no target has the ARN ${b} (add one with svc replicate add, or PUT set-remote-target).`, { argumentName: 'Bucket', argumentValue: b });
    return hit.arn;
  }
  const m = S3_ARN.exec(b);
  if (!m) throw new SvcError('InvalidArgument', 'Invalid bucket ARN.', { argumentName: 'Bucket', argumentValue: b });
  const hits = ctx.targets.filter((t) => t.targetBucket === m[1]);
  if (hits.length === 0) throw new SvcError('InvalidRequest', `Destination bucket must exist: no remote target of this bucket replicates to the bucket ${m[1]}.`, { argumentName: 'Bucket', argumentValue: b });
  if (hits.length > 1) throw new SvcError('InvalidRequest', `Several remote targets replicate to the bucket ${m[1]}: name one by its ARN.`, { argumentName: 'Bucket', argumentValue: b });
  return hits[0]!.arn;
}

function parseRule(r: Node, ctx: ReplicationContext, index: number): ReplicationRule {
  const id = (text(r, 'ID') ?? '').trim() || `rule-${index + 1}`;
  if (id.length > MAX_ID) throw new SvcError('InvalidArgument', 'ID length should not exceed allowed limit of 255', { argumentName: 'ID', argumentValue: id.slice(0, 64) });
  const status = statusOf(r, 'Rule');
  if (status === undefined) throw new SvcError('MalformedXML', 'Rule/Status is required.');
  const filter = child(r, 'Filter');
  const legacyPrefix = text(r, 'Prefix');
  if (filter !== undefined && legacyPrefix !== undefined) throw new SvcError('MalformedXML', 'A rule has either a Prefix or a Filter, not both.');
  let prefix = '';
  let tags: Tag[] = [];
  if (filter !== undefined) {
    const and = child(filter, 'And');
    const fp = text(filter, 'Prefix');
    const ft = list(filter, 'Tag');
    const parts = (and !== undefined ? 1 : 0) + (fp !== undefined ? 1 : 0) + (ft.length > 0 ? 1 : 0);
    if (parts > 1 || ft.length > 1) throw new SvcError('MalformedXML', 'A Filter holds one Prefix, one Tag, or an And of a prefix and tags.');
    if (and !== undefined) {
      prefix = text(and, 'Prefix') ?? '';
      tags = list(and, 'Tag').map(tagOf);
    } else if (fp !== undefined) prefix = fp;
    else if (ft.length === 1) tags = [tagOf(ft[0]!)];
  } else prefix = legacyPrefix ?? '';
  if (prefix.length > MAX_PREFIX) throw new SvcError('InvalidArgument', 'The prefix is longer than 1024 characters.', { argumentName: 'Prefix' });
  const keys = new Set<string>();
  for (const t of tags) {
    if (keys.has(t.key)) throw new SvcError('InvalidArgument', 'Duplicate Tag Keys are not allowed.', { argumentName: 'Key', argumentValue: t.key });
    keys.add(t.key);
  }
  const schema = filter !== undefined ? 'v2' : 'v1';
  const priorityText = text(r, 'Priority')?.trim();
  let priority = 0;
  if (priorityText !== undefined && priorityText !== '') {
    if (!/^\d{1,9}$/.test(priorityText)) throw new SvcError('InvalidArgument', 'Priority must be a non-negative integer.', { argumentName: 'Priority', argumentValue: priorityText });
    priority = Number(priorityText);
  }
  const dm = statusOf(child(r, 'DeleteMarkerReplication'), 'DeleteMarkerReplication');
  if (schema === 'v2' && dm === undefined) {
    throw new SvcError('InvalidRequest', 'DeleteMarkerReplication must be specified for this version of Cross Region Replication configuration schema.');
  }
  if (dm === 'Enabled' && tags.length > 0) {
    throw new SvcError('InvalidRequest', 'Delete marker replication is not supported if any Tag filter is specified.');
  }
  const dest = child(r, 'Destination');
  if (dest === undefined) throw new SvcError('MalformedXML', 'Rule/Destination is required.');
  const destination = resolveDestination(text(dest, 'Bucket'), ctx);
  const sc = text(dest, 'StorageClass')?.trim();
  if (sc !== undefined && sc !== '' && !(DESTINATION_STORAGE_CLASSES as readonly string[]).includes(sc)) {
    throw new SvcError('InvalidStorageClass', `The storage class ${sc} is not valid for a replication destination.`, { argumentName: 'StorageClass', argumentValue: sc });
  }
  const ssc = child(r, 'SourceSelectionCriteria');
  const rm = ssc === undefined ? undefined : statusOf(child(ssc, 'ReplicaModifications'), 'ReplicaModifications');
  const rule: ReplicationRule = {
    id,
    priority,
    status,
    prefix,
    tags,
    schema,
    deleteMarkers: dm === 'Enabled',
    deletes: statusOf(child(r, 'DeleteReplication'), 'DeleteReplication') === 'Enabled',
    existingObjects: statusOf(child(r, 'ExistingObjectReplication'), 'ExistingObjectReplication') === 'Enabled',
    replicaModifications: rm === 'Enabled',
    destination,
  };
  if (sc !== undefined && sc !== '') rule.storageClass = sc;
  return rule;
}

/**
 * Parses and validates a `ReplicationConfiguration` (the content of the root
 * element). `versioning` is the bucket's state: S3 refuses a configuration on
 * a bucket whose versioning is not enabled.
 */
export function parseReplicationConfig(doc: Node, ctx: ReplicationContext, versioning: string): ReplicationConfig {
  if (versioning !== 'Enabled') throw new SvcError('InvalidRequest', "Versioning must be 'Enabled' on the bucket to apply a replication configuration");
  const role = (text(doc, 'Role') ?? '').trim();
  const raw = list(doc, 'Rule');
  if (raw.length === 0) throw new SvcError('MalformedXML', 'A replication configuration needs at least one Rule.');
  if (raw.length > MAX_RULES) throw new SvcError('InvalidRequest', `A replication configuration holds at most ${MAX_RULES} rules.`);
  const rules = raw.map((r, i) => parseRule(r, ctx, i));
  const ids = new Set<string>();
  for (const r of rules) {
    if (ids.has(r.id)) throw new SvcError('InvalidArgument', 'Rule Id must be unique.', { argumentName: 'ID', argumentValue: r.id });
    ids.add(r.id);
  }
  const schemas = new Set(rules.map((r) => r.schema));
  if (schemas.size > 1) throw new SvcError('MalformedXML', 'Rules with a Filter and rules with a rule-level Prefix cannot be mixed.');
  if (schemas.has('v2')) {
    // Rules sending to one destination are told apart by priority.
    const seen = new Map<string, Set<number>>();
    for (const r of rules) {
      const p = seen.get(r.destination) ?? new Set<number>();
      if (p.has(r.priority)) throw new SvcError('InvalidRequest', `Found duplicate priority ${r.priority}: rules with the same destination must have distinct priorities.`, { argumentName: 'Priority', argumentValue: String(r.priority) });
      p.add(r.priority);
      seen.set(r.destination, p);
    }
  } else {
    // Legacy rules: prefixes sending to one destination must not overlap.
    for (let i = 0; i < rules.length; i++) {
      for (let j = i + 1; j < rules.length; j++) {
        const a = rules[i]!;
        const b = rules[j]!;
        if (a.destination === b.destination && (a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix))) {
          throw new SvcError('InvalidRequest', `Found overlapping prefixes '${a.prefix}' and '${b.prefix}' for the same destination.`);
        }
      }
    }
  }
  return { role, rules };
}

/** The document GetBucketReplication returns (an XML tree for `api/s3/xml.ts`). */
export function replicationConfigXml(c: ReplicationConfig): Record<string, unknown> {
  const status = (on: boolean) => ({ Status: on ? 'Enabled' : 'Disabled' });
  return {
    Role: c.role,
    Rule: c.rules.map((r) => {
      const node: Record<string, unknown> = { ID: r.id };
      if (r.schema === 'v2') {
        node.Priority = r.priority;
        let filter: Record<string, unknown>;
        if (r.tags.length === 0) filter = { Prefix: r.prefix };
        else if (r.tags.length === 1 && r.prefix === '') filter = { Tag: { Key: r.tags[0]!.key, Value: r.tags[0]!.value } };
        else filter = { And: { Prefix: r.prefix, Tag: r.tags.map((t) => ({ Key: t.key, Value: t.value })) } };
        node.Filter = filter;
      } else node.Prefix = r.prefix;
      node.Status = r.status;
      if (r.schema === 'v2') node.DeleteMarkerReplication = status(r.deleteMarkers);
      if (r.deletes) node.DeleteReplication = status(true);
      node.Destination = { Bucket: r.destination, ...(r.storageClass ? { StorageClass: r.storageClass } : {}) };
      if (r.existingObjects) node.ExistingObjectReplication = status(true);
      if (r.replicaModifications) node.SourceSelectionCriteria = { ReplicaModifications: status(true) };
      return node;
    }),
  };
}

export function encodeReplicationConfig(c: ReplicationConfig): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, ...c }));
}

export function decodeReplicationConfig(raw: Uint8Array | undefined): ReplicationConfig | undefined {
  if (raw === undefined) return undefined;
  const doc = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')) as ReplicationConfig & { v?: number };
  return { role: doc.role ?? '', rules: Array.isArray(doc.rules) ? doc.rules : [] };
}

/** Parses a URL-encoded tag set (`k1=v1&k2=v2`). */
export function parseTagSet(tags: string): Map<string, string> {
  return new Map(new URLSearchParams(tags));
}

/** `tags` gives the version's tag set (undefined: it has none to match, a delete); asked only of a rule that filters on tags. */
function ruleMatches(r: ReplicationRule, key: string, tags: () => Map<string, string> | undefined): boolean {
  if (r.status !== 'Enabled' || !key.startsWith(r.prefix)) return false;
  if (r.tags.length === 0) return true;
  const have = tags();
  if (have === undefined) return false;
  return r.tags.every((t) => have.get(t.key) === t.value);
}

/** What a change asks of the rules. */
export type ReplicationOp =
  /** A new version (or a resync of an existing one: `existing`). */
  | { kind: 'object'; key: string; tags: string; existing?: boolean }
  /** A delete marker written by a DELETE without a version id. */
  | { kind: 'delete-marker'; key: string }
  /** A version (or a delete marker) removed by a DELETE with its version id. */
  | { kind: 'delete-version'; key: string };

/**
 * The rule that decides for each destination: among enabled rules whose
 * filter matches, the one with the highest priority (S3: a larger number
 * wins; ties cannot exist, the parse refuses them). Returns the destinations
 * this operation replicates to with their rule.
 */
export function selectRules(c: ReplicationConfig | undefined, op: ReplicationOp): ReplicationRule[] {
  if (!c) return [];
  // Runs on every write to a bucket with a configuration: the tag set is parsed once, and only when a
  // rule filtering on tags matches the key. A delete has no tags: such a rule never selects it.
  let parsed: Map<string, string> | undefined;
  const tags = op.kind === 'object' ? () => (parsed ??= parseTagSet(op.tags)) : () => undefined;
  const best = new Map<string, ReplicationRule>();
  for (const r of c.rules) {
    if (!ruleMatches(r, op.key, tags)) continue;
    const cur = best.get(r.destination);
    if (cur === undefined || r.priority > cur.priority) best.set(r.destination, r);
  }
  return [...best.values()].filter((r) => {
    switch (op.kind) {
      case 'object':
        return op.existing !== true || r.existingObjects;
      case 'delete-marker':
        // Legacy (V1) rules replicate delete markers, as S3's first schema did.
        return r.schema === 'v1' || r.deleteMarkers;
      case 'delete-version':
        return r.deletes;
    }
  });
}

/** The destinations any enabled rule of the configuration names. */
export function destinations(c: ReplicationConfig | undefined): string[] {
  return [...new Set((c?.rules ?? []).filter((r) => r.status === 'Enabled').map((r) => r.destination))];
}

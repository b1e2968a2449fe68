/**
 * What the API server does with a custom resource at admission, for tests:
 * OpenAPI schema validation (ajv; unknown fields refused as with
 * `kubectl --validate=strict`) and the CRD's CEL rules
 * (`x-kubernetes-validations`, evaluated with @bufbuild/cel, including
 * transition rules with `oldSelf` on list-map items correlated by key).
 */
import { run } from '@bufbuild/cel';
import { Ajv } from 'ajv';

type Schema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  'x-kubernetes-validations'?: { rule: string; message: string }[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
};

/** JS value → CEL input: objects become maps, integers become int (bigint). */
function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'object' && v !== null) return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v;
}

/** A copy of the schema that refuses unknown fields (strict field validation). */
function strict(s: Schema): Schema {
  const out: Schema = { ...s };
  if (s.properties) {
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, strict(v)]));
    if (s.additionalProperties === undefined && !s['x-kubernetes-preserve-unknown-fields'] && Object.keys(s.properties).length > 0) out.additionalProperties = false;
  }
  if (s.items) out.items = strict(s.items);
  if (typeof s.additionalProperties === 'object') out.additionalProperties = strict(s.additionalProperties);
  if (Array.isArray(s['anyOf'])) out['anyOf'] = (s['anyOf'] as Schema[]).map(strict);
  return out;
}

export interface Violation {
  readonly path: string;
  readonly message: string;
}

function celRules(schema: Schema, self: unknown, old: unknown, path: string, out: Violation[]): void {
  if (self === undefined || self === null) return;
  for (const r of schema['x-kubernetes-validations'] ?? []) {
    const usesOld = /\boldSelf\b/.test(r.rule);
    if (usesOld && (old === undefined || old === null)) continue;
    let ok: unknown;
    try {
      ok = run(r.rule, { self: toCel(self), oldSelf: toCel(old) } as never);
    } catch (err) {
      out.push({ path, message: `rule "${r.rule}" failed to evaluate: ${(err as Error).message}` });
      continue;
    }
    if (ok !== true) out.push({ path, message: r.message });
  }
  if (schema.properties && typeof self === 'object') {
    for (const [k, sub] of Object.entries(schema.properties)) {
      celRules(sub, (self as Record<string, unknown>)[k], (old as Record<string, unknown> | undefined)?.[k], `${path}.${k}`, out);
    }
  }
  if (schema.items && Array.isArray(self)) {
    const keys = schema['x-kubernetes-list-map-keys'];
    self.forEach((item, i) => {
      let oldItem: unknown;
      if (schema['x-kubernetes-list-type'] === 'map' && keys && Array.isArray(old)) {
        oldItem = old.find((o) => keys.every((k) => (o as Record<string, unknown>)[k] === (item as Record<string, unknown>)[k]));
      }
      celRules(schema.items!, item, oldItem, `${path}[${i}]`, out);
    });
  }
}

function listMapDuplicates(schema: Schema, self: unknown, path: string, out: Violation[]): void {
  if (self === undefined || self === null) return;
  if (schema.items && Array.isArray(self)) {
    const keys = schema['x-kubernetes-list-map-keys'];
    if (schema['x-kubernetes-list-type'] === 'map' && keys) {
      const seen = new Set<string>();
      for (const item of self) {
        const k = JSON.stringify(keys.map((x) => (item as Record<string, unknown>)[x]));
        if (seen.has(k)) out.push({ path, message: `Duplicate value: ${k}` });
        seen.add(k);
      }
    }
    for (const item of self) listMapDuplicates(schema.items, item, path, out);
  }
  if (schema.properties && typeof self === 'object') for (const [k, sub] of Object.entries(schema.properties)) listMapDuplicates(sub, (self as Record<string, unknown>)[k], `${path}.${k}`, out);
}

/** A validator for objects of one CRD version: returns the violations (empty when admitted). */
export function crdAdmission(crd: { spec: { versions: { schema?: { openAPIV3Schema: Schema } }[] } }): (obj: unknown, old?: unknown) => Violation[] {
  const schema = crd.spec.versions[0]!.schema!.openAPIV3Schema;
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  const validate = ajv.compile(strict(schema));
  return (obj, old) => {
    const out: Violation[] = [];
    if (!validate(obj)) for (const e of validate.errors ?? []) out.push({ path: e.instancePath || '.', message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params['additionalProperty'])})` : ''}` });
    listMapDuplicates(schema, obj, '', out);
    if (out.length === 0) celRules(schema, obj, old, '', out);
    return out;
  };
}

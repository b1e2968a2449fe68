/**
 * A strict decoder of svc's admin answers into madmin-go's structs, driven by
 * the fixtures under `node/test/fixtures/madmin/` (one per route, captured
 * from the structs' JSON tags). It decodes as Go's `encoding/json` does —
 * keys matched case-insensitively, a type mismatch fails (a JSON array where
 * a map is declared, a string where a number is, a fraction in an integer) —
 * and is stricter in two ways: a key that is neither a field nor a listed
 * extension fails (Go's `DisallowUnknownFields`), and a field without
 * `omitempty` that is missing fails unless the fixture's `omitted` says why.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MadminFixture {
  routes: string[];
  client: string;
  source: string[];
  root: string;
  /** Struct name → JSON key → `Type[,omitempty]`. */
  types: Record<string, Record<string, string>>;
  /** Struct name → extra key svc sends → where it comes from. */
  extensions: Record<string, Record<string, string>>;
  /** Struct name → non-omitempty key svc leaves out → why. */
  omitted: Record<string, Record<string, string>>;
}

export function loadMadminFixture(name: string): MadminFixture {
  return JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'madmin', `${name}.json`), 'utf8')) as MadminFixture;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const INT_RANGES: Record<string, [number, number]> = {
  int: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int8: [-128, 127],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint: [0, Number.MAX_SAFE_INTEGER],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  'time.Duration': [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

/** Splits `map[K]V` into K and V (V may itself be a map). */
function mapParts(t: string): [string, string] {
  const close = t.indexOf(']');
  return [t.slice(4, close), t.slice(close + 1)];
}

/** Every mismatch between `value` and madmin's `type` (empty: it decodes). */
export function decodeStrict(fx: MadminFixture, value: unknown, type = fx.root, at = '$'): string[] {
  if (type === 'any') return [];
  if (type.startsWith('*')) return value === null ? [] : decodeStrict(fx, value, type.slice(1), at);
  if (type.startsWith('[]')) {
    if (value === null) return [];
    if (!Array.isArray(value)) return [`${at}: ${type} expects a JSON array, got ${describe(value)}`];
    return value.flatMap((v, i) => decodeStrict(fx, v, type.slice(2), `${at}[${i}]`));
  }
  if (type.startsWith('map[')) {
    if (value === null) return [];
    if (typeof value !== 'object' || Array.isArray(value)) return [`${at}: ${type} expects a JSON object, got ${describe(value)}`];
    const [k, v] = mapParts(type);
    return Object.entries(value).flatMap(([key, x]) => {
      const keyErr = k === 'int' && !/^-?\d+$/.test(key) ? [`${at}: key ${JSON.stringify(key)} is not an integer (${type})`] : [];
      return [...keyErr, ...decodeStrict(fx, x, v, `${at}[${JSON.stringify(key)}]`)];
    });
  }
  switch (type) {
    case 'string':
      return typeof value === 'string' ? [] : [`${at}: string expected, got ${describe(value)}`];
    case 'bool':
      return typeof value === 'boolean' ? [] : [`${at}: bool expected, got ${describe(value)}`];
    case 'float64':
      return typeof value === 'number' && Number.isFinite(value) ? [] : [`${at}: float64 expected, got ${describe(value)}`];
    case 'time.Time':
      // Go accepts null (no-op) or an RFC 3339 string
      return value === null || (typeof value === 'string' && RFC3339.test(value)) ? [] : [`${at}: time.Time expects RFC 3339, got ${describe(value)}`];
  }
  const range = INT_RANGES[type];
  if (range !== undefined) {
    const ok = typeof value === 'number' && Number.isInteger(value) && value >= range[0] && value <= range[1];
    return ok ? [] : [`${at}: ${type} expected, got ${describe(value)}`];
  }
  const fields = fx.types[type];
  if (fields === undefined) return [`${at}: the fixture does not define ${type}`];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${at}: ${type} expects a JSON object, got ${describe(value)}`];
  const out: string[] = [];
  const extensions = fx.extensions[type] ?? {};
  const omitted = fx.omitted[type] ?? {};
  const seen = new Set<string>();
  for (const [key, x] of Object.entries(value)) {
    // Go: an exact match first, else a case-insensitive one
    const field = key in fields ? key : Object.keys(fields).find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined) {
      if (!(key in extensions)) out.push(`${at}.${key}: not a field of ${type} and not a listed extension`);
      continue;
    }
    if (seen.has(field)) out.push(`${at}.${key}: a second key for ${type}.${field}`);
    seen.add(field);
    out.push(...decodeStrict(fx, x, fields[field]!.split(',')[0]!, `${at}.${key}`));
  }
  for (const [field, spec] of Object.entries(fields)) {
    if (seen.has(field) || spec.endsWith(',omitempty') || field in omitted) continue;
    out.push(`${at}.${field}: missing (${type}.${field} is not omitempty)`);
  }
  return out;
}

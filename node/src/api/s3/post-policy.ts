/**
 * POST Object policy documents (browser uploads): decoding the base64 JSON
 * policy, and checking a form against its expiration and conditions —
 * `eq`, `starts-with`, `content-length-range`, and the `{"field": "value"}`
 * shorthand. Pure.
 *
 * Rules (S3's): field names match case-insensitively, values
 * case-sensitively; every form field must be covered by a condition except
 * `policy`, `x-amz-signature`, `file` and `x-ignore-*`; `starts-with` on
 * Content-Type applies to each comma-separated value; the `key` condition is
 * checked against the field as sent (before `${filename}` is substituted).
 */
import { SvcError } from '../../util/errors.ts';

export type PostCondition =
  | { op: 'eq' | 'starts-with'; field: string; value: string }
  | { op: 'content-length-range'; min: number; max: number };

export interface PostPolicy {
  /** Epoch ms. */
  expiration: number;
  conditions: PostCondition[];
}

/** Form fields that need no condition. */
const EXEMPT = new Set(['policy', 'x-amz-signature', 'file', 'awsaccesskeyid', 'signature', 'x-amz-security-token']);

function invalid(msg: string): SvcError {
  return new SvcError('InvalidPolicyDocument', `Invalid Policy: ${msg}`);
}

function denied(msg: string): SvcError {
  return new SvcError('AccessDenied', `Invalid according to Policy: ${msg}`);
}

function fieldName(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.startsWith('$') || raw.length < 2) throw invalid(`Invalid condition field ${String(raw)}.`);
  return raw.slice(1).toLowerCase();
}

function count(v: unknown): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalid('content-length-range needs two non-negative integers.');
  return n;
}

/** Decodes and validates the `policy` form field. */
export function parsePostPolicy(b64: string): PostPolicy {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw invalid('Invalid JSON.');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid('Invalid JSON.');
  const d = doc as Record<string, unknown>;
  if (typeof d.expiration !== 'string') throw invalid('Policy missing expiration.');
  const expiration = Date.parse(d.expiration);
  if (Number.isNaN(expiration)) throw invalid('Invalid expiration date.');
  if (!Array.isArray(d.conditions)) throw invalid('Policy missing conditions.');
  const conditions = d.conditions.map((c: unknown): PostCondition => {
    if (Array.isArray(c)) {
      const op = typeof c[0] === 'string' ? c[0].toLowerCase() : '';
      if (op === 'content-length-range') {
        if (c.length !== 3) throw invalid('content-length-range needs a minimum and a maximum.');
        const min = count(c[1]);
        const max = count(c[2]);
        if (min > max) throw invalid('content-length-range minimum is above its maximum.');
        return { op, min, max };
      }
      if ((op !== 'eq' && op !== 'starts-with') || c.length !== 3 || typeof c[2] !== 'string') throw invalid(`Invalid condition ${JSON.stringify(c).slice(0, 80)}.`);
      return { op, field: fieldName(c[1]), value: c[2] };
    }
    if (typeof c === 'object' && c !== null) {
      const entries = Object.entries(c as Record<string, unknown>);
      if (entries.length !== 1 || typeof entries[0]![1] !== 'string') throw invalid('A condition object must hold one field and its value.');
      return { op: 'eq', field: entries[0]![0].replace(/^\$/, '').toLowerCase(), value: entries[0]![1] as string };
    }
    throw invalid('Every condition is an array or an object.');
  });
  return { expiration, conditions };
}

/**
 * Checks the form (field names lower-cased) posted to `bucket` against the
 * policy at `now`; returns the allowed file size range. AccessDenied with
 * S3's "Invalid according to Policy" message on any failure.
 */
export function checkPostPolicy(policy: PostPolicy, fields: ReadonlyMap<string, string>, bucket: string, now: number): { min: number; max: number } {
  if (policy.expiration <= now) throw denied('Policy expired.');
  let min = 0;
  let max = Number.MAX_SAFE_INTEGER;
  const covered = new Set<string>();
  for (const c of policy.conditions) {
    if (c.op === 'content-length-range') {
      min = Math.max(min, c.min);
      max = Math.min(max, c.max);
      continue;
    }
    covered.add(c.field);
    // the bucket is the one the form was posted to
    const actual = c.field === 'bucket' ? bucket : (fields.get(c.field) ?? '');
    const ok =
      c.op === 'eq'
        ? actual === c.value
        : c.field === 'content-type'
          ? actual.split(',').every((v) => v.trim().startsWith(c.value))
          : actual.startsWith(c.value);
    if (!ok) throw denied(`Policy Condition failed: ["${c.op}", "$${c.field}", "${c.value}"]`);
  }
  for (const name of fields.keys()) {
    if (EXEMPT.has(name) || name.startsWith('x-ignore-') || covered.has(name)) continue;
    throw denied(`Extra input fields: ${name}`);
  }
  return { min, max };
}

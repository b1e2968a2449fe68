/**
 * Ellipsis expansion of volume arguments: `{a...b}` ranges inside one
 * argument, numeric (`{1...16}`, zero padded `{01...16}`) or alphabetic
 * (`{a...d}`), anywhere in host or path.
 *
 * Order (reference on-disk-and-placement §4.1): the LAST range is the outer
 * loop, the first range varies fastest. `http://h{1...4}/d{1...4}` yields
 * h1/d1, h2/d1, h3/d1, h4/d1, h1/d2, … so consecutive endpoints span hosts
 * before a host repeats. Pure; throws `TopologyError('InvalidTopology')`.
 */
import { TopologyError } from './errors.ts';

/** One `{a...b}` range of an argument, already expanded to its values. */
export interface EllipsisRange {
  /** The literal text, e.g. `{01...16}`. */
  readonly text: string;
  readonly values: readonly string[];
}

/** An argument split into literal text and ranges: `prefix r0 mid1 r1 … suffix`. */
export interface ArgPattern {
  readonly arg: string;
  /** literals.length === ranges.length + 1 */
  readonly literals: readonly string[];
  readonly ranges: readonly EllipsisRange[];
}

/** Ranges larger than this are refused (a typo like `{1...100000}`). */
export const MAX_RANGE_SIZE = 4096;

const RANGE_RE = /\{([^{}]*)\}/g;

/** True when `arg` contains at least one `{a...b}` range. */
export function hasEllipsis(arg: string): boolean {
  return /\{[^{}]*\.\.\.[^{}]*\}/.test(arg);
}

function invalid(arg: string, why: string): TopologyError {
  return new TopologyError('InvalidTopology', `invalid ellipsis in volume argument "${arg}": ${why}`, { arg });
}

function expandRange(arg: string, text: string, inner: string): EllipsisRange {
  const parts = inner.split('...');
  if (parts.length !== 2) throw invalid(arg, `malformed range ${text} (expected {a...b})`);
  const [a, b] = parts as [string, string];
  if (/^[0-9]+$/.test(a) && /^[0-9]+$/.test(b)) {
    const start = Number.parseInt(a, 10);
    const end = Number.parseInt(b, 10);
    if (start > end) throw invalid(arg, `range ${text} has start greater than end`);
    if (end - start + 1 > MAX_RANGE_SIZE) throw invalid(arg, `range ${text} is larger than ${MAX_RANGE_SIZE}`);
    // Zero padding: a start with a leading zero (`01`) pads every value to the
    // start's width; `{1...16}` does not pad.
    const width = a.length > 1 && a.startsWith('0') ? a.length : 0;
    const values: string[] = [];
    for (let i = start; i <= end; i++) values.push(width ? String(i).padStart(width, '0') : String(i));
    return { text, values };
  }
  if (/^[a-z]$/.test(a) && /^[a-z]$/.test(b)) return alpha(arg, text, a, b);
  if (/^[A-Z]$/.test(a) && /^[A-Z]$/.test(b)) return alpha(arg, text, a, b);
  throw invalid(arg, `range ${text} must be numeric ({1...4}, {01...16}) or single letters of one case ({a...d})`);
}

function alpha(arg: string, text: string, a: string, b: string): EllipsisRange {
  const start = a.charCodeAt(0);
  const end = b.charCodeAt(0);
  if (start > end) throw invalid(arg, `range ${text} has start greater than end`);
  const values: string[] = [];
  for (let c = start; c <= end; c++) values.push(String.fromCharCode(c));
  return { text, values };
}

/**
 * Splits `arg` into literals and ranges. Braces that do not hold `...` are
 * refused too (`{1..4}` is almost certainly a typo), as are unbalanced ones.
 */
export function parseArgPattern(arg: string): ArgPattern {
  const literals: string[] = [];
  const ranges: EllipsisRange[] = [];
  let last = 0;
  for (const m of arg.matchAll(RANGE_RE)) {
    const text = m[0];
    const inner = m[1] ?? '';
    if (!inner.includes('...')) throw invalid(arg, `braces ${text} do not hold a range {a...b}`);
    literals.push(arg.slice(last, m.index));
    ranges.push(expandRange(arg, text, inner));
    last = m.index + text.length;
  }
  const tail = arg.slice(last);
  for (const lit of [...literals, tail]) {
    if (lit.includes('{') || lit.includes('}')) throw invalid(arg, 'unbalanced braces');
  }
  literals.push(tail);
  return { arg, literals, ranges };
}

/** Number of strings the pattern expands to. */
export function patternSize(p: ArgPattern): number {
  return p.ranges.reduce((n, r) => n * r.values.length, 1);
}

/** Expands the pattern; the last range is the outer loop (see module doc). */
export function expandPattern(p: ArgPattern): string[] {
  const out: string[] = [];
  const n = p.ranges.length;
  const total = patternSize(p);
  const idx = new Array<number>(n).fill(0);
  for (let k = 0; k < total; k++) {
    let s = p.literals[0] ?? '';
    for (let i = 0; i < n; i++) s += p.ranges[i]!.values[idx[i]!]! + p.literals[i + 1]!;
    out.push(s);
    // odometer: range 0 varies fastest
    for (let i = 0; i < n; i++) {
      idx[i] = idx[i]! + 1;
      if (idx[i]! < p.ranges[i]!.values.length) break;
      idx[i] = 0;
    }
  }
  return out;
}

/** Convenience: parse then expand. */
export function expandEllipsis(arg: string): string[] {
  return expandPattern(parseArgPattern(arg));
}

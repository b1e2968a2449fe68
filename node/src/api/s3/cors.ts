/**
 * CORS for buckets: the CORSConfiguration document, preflight (`OPTIONS`)
 * answers from the bucket's rules, and the `Access-Control-*` headers of
 * real responses. Pure, except that callers fetch the stored rules.
 *
 * Decisions: origins and headers match case-insensitively with `*`
 * wildcards; the first rule matching origin and method wins (S3's order);
 * a wildcard-origin rule answers `Access-Control-Allow-Origin: *`, any other
 * the request's origin with `Access-Control-Allow-Credentials: true`.
 */
import { SvcError } from '../../util/errors.ts';
import { wildcardMatch } from '../../iam/conditions.ts';
import { type XmlNode, xmlList, xmlRawText, xmlText } from './xml.ts';

export const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;
const MAX_RULES = 100;

export interface CorsRule {
  id?: string;
  origins: string[];
  methods: string[];
  headers: string[];
  expose: string[];
  maxAge?: number;
}

function texts(node: Record<string, unknown>, name: string): string[] {
  const v = node[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => {
    if (typeof x !== 'string') throw new SvcError('MalformedXML', `<${name}> must hold text.`);
    return x.trim();
  });
}

/** Parses and validates a CORSConfiguration document (already XML-parsed). */
export function corsFromXml(doc: Record<string, unknown>): CorsRule[] {
  const rules = xmlList(doc, 'CORSRule');
  if (rules.length === 0) throw new SvcError('MalformedXML', 'A CORS configuration needs at least one CORSRule.');
  if (rules.length > MAX_RULES) throw new SvcError('InvalidArgument', `A CORS configuration may hold at most ${MAX_RULES} rules.`);
  return rules.map((r) => {
    const rule: CorsRule = { origins: texts(r, 'AllowedOrigin'), methods: texts(r, 'AllowedMethod'), headers: texts(r, 'AllowedHeader'), expose: texts(r, 'ExposeHeader') };
    const id = xmlRawText(r, 'ID');
    if (id !== undefined) rule.id = id;
    const age = xmlText(r, 'MaxAgeSeconds');
    if (age !== undefined) {
      if (!/^\d{1,9}$/.test(age)) throw new SvcError('MalformedXML', 'MaxAgeSeconds must be a non-negative integer.');
      rule.maxAge = Number(age);
    }
    if (rule.origins.length === 0 || rule.methods.length === 0) throw new SvcError('MalformedXML', 'Every CORSRule needs an AllowedOrigin and an AllowedMethod.');
    for (const m of rule.methods) {
      if (!(CORS_METHODS as readonly string[]).includes(m)) throw new SvcError('InvalidRequest', `Found unsupported HTTP method in CORS config. Unsupported method is ${m}`);
    }
    for (const o of rule.origins) {
      if ((o.match(/\*/g) ?? []).length > 1) throw new SvcError('InvalidRequest', `AllowedOrigin "${o}" can not have more than one wildcard.`);
    }
    for (const h of rule.headers) {
      if ((h.match(/\*/g) ?? []).length > 1) throw new SvcError('InvalidRequest', `AllowedHeader "${h}" can not have more than one wildcard.`);
    }
    return rule;
  });
}

export function corsToXml(rules: CorsRule[]): XmlNode {
  return {
    CORSRule: rules.map((r) => ({
      ...(r.id !== undefined ? { ID: r.id } : {}),
      AllowedOrigin: r.origins,
      AllowedMethod: r.methods,
      AllowedHeader: r.headers,
      ExposeHeader: r.expose,
      ...(r.maxAge !== undefined ? { MaxAgeSeconds: r.maxAge } : {}),
    })),
  };
}

export function encodeCors(rules: CorsRule[]): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, rules }));
}

export function decodeCors(raw: Uint8Array | undefined): CorsRule[] | undefined {
  if (!raw) return undefined;
  const d = JSON.parse(Buffer.from(raw).toString('utf8')) as { v: number; rules: CorsRule[] };
  if (d.v !== 1 || !Array.isArray(d.rules)) throw new Error('stored CORS configuration is not a version-1 document');
  return d.rules;
}

/** The rule that admits `origin` and `method` (and every requested header), if any. */
export function matchRule(rules: readonly CorsRule[], origin: string, method: string, requestHeaders: readonly string[] = []): CorsRule | undefined {
  return rules.find(
    (r) =>
      r.origins.some((o) => wildcardMatch(o, origin, true)) &&
      r.methods.includes(method) &&
      requestHeaders.every((h) => r.headers.some((a) => wildcardMatch(a, h, true))),
  );
}

/** The rule svc applies for its own console's origin when a bucket has no configuration: everything allowed. */
export const CONSOLE_RULE: CorsRule = {
  origins: ['*'],
  methods: [...CORS_METHODS],
  headers: ['*'],
  expose: ['ETag', 'x-amz-version-id', 'x-amz-request-id', 'x-amz-delete-marker', 'Content-Length', 'Content-Range', 'Last-Modified'],
  maxAge: 600,
};

function allowOrigin(rule: CorsRule, origin: string): Record<string, string> {
  return rule.origins.includes('*') && rule !== CONSOLE_RULE
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' };
}

/** Headers answering a preflight request that `rule` admits. */
export function preflightHeaders(rule: CorsRule, origin: string, requestHeaders: readonly string[]): Record<string, string> {
  return {
    ...allowOrigin(rule, origin),
    'access-control-allow-methods': rule.methods.join(', '),
    ...(requestHeaders.length > 0 ? { 'access-control-allow-headers': requestHeaders.join(', ') } : {}),
    ...(rule.expose.length > 0 ? { 'access-control-expose-headers': rule.expose.join(', ') } : {}),
    ...(rule.maxAge !== undefined ? { 'access-control-max-age': String(rule.maxAge) } : {}),
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
}

/** Headers added to a real (non-preflight) response for an admitted origin. */
export function responseCorsHeaders(rule: CorsRule, origin: string): Record<string, string> {
  return {
    ...allowOrigin(rule, origin),
    'access-control-allow-methods': rule.methods.join(', '),
    ...(rule.expose.length > 0 ? { 'access-control-expose-headers': rule.expose.join(', ') } : {}),
    vary: 'Origin',
  };
}

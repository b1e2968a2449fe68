/**
 * XML for S3: a small escaping serializer for responses (faster than a
 * general builder for these flat documents) and a hardened parser for the
 * few request documents S3 accepts.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { SvcError } from '../../util/errors.ts';

export const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escapes text for XML content and attributes; drops characters XML 1.0 cannot carry. */
export function escapeXml(s: string): string {
  return s
    .replace(/[&<>"']/g, (c) => ESC[c]!)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`);
}

/** A tree node for the serializer: element name with children, or a leaf value. */
export type XmlValue = string | number | boolean | Date | undefined | null | XmlNode | XmlNode[];
export interface XmlNode {
  [name: string]: XmlValue;
}

function leaf(v: string | number | boolean | Date): string {
  if (v instanceof Date) return v.toISOString();
  return escapeXml(String(v));
}

function serializeInto(out: string[], name: string, v: XmlValue): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) {
    for (const item of v) serializeInto(out, name, item);
    return;
  }
  if (typeof v === 'object' && !(v instanceof Date)) {
    out.push(`<${name}>`);
    for (const [k, child] of Object.entries(v)) serializeInto(out, k, child);
    out.push(`</${name}>`);
    return;
  }
  out.push(`<${name}>${leaf(v)}</${name}>`);
}

/** Serializes a root element (with the S3 namespace unless `ns` is false). */
export function toXml(root: string, body: XmlNode, ns = true): string {
  const out: string[] = [XML_DECL, ns ? `<${root} xmlns="${S3_NS}">` : `<${root}>`];
  for (const [k, v] of Object.entries(body)) serializeInto(out, k, v);
  out.push(`</${root}>`);
  return out.join('');
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => ['Part', 'Object', 'Tag'].includes(name),
});

/**
 * Parses a request document and returns the content of `root`. Anything not
 * well-formed, or a different root, is `MalformedXML`.
 */
export function parseXml(body: Buffer | string, root: string): Record<string, unknown> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '' || /<!DOCTYPE|<!ENTITY/i.test(text)) throw new SvcError('MalformedXML');
  if (XMLValidator.validate(text) !== true) throw new SvcError('MalformedXML');
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(text) as Record<string, unknown>;
  } catch {
    throw new SvcError('MalformedXML');
  }
  const v = doc[root];
  if (v === undefined) throw new SvcError('MalformedXML', `Expected a <${root}> document.`);
  if (v === '' || v === null) return {};
  if (typeof v !== 'object') throw new SvcError('MalformedXML');
  return v as Record<string, unknown>;
}

/** A child as a string, or undefined; a nested element is MalformedXML. */
export function xmlText(node: Record<string, unknown>, name: string): string | undefined {
  const v = node[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new SvcError('MalformedXML', `Element <${name}> must hold text.`);
}

/** A repeated child as an array of element objects. */
export function xmlList(node: Record<string, unknown>, name: string): Record<string, unknown>[] {
  const v = node[name];
  if (v === undefined) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr.map((x) => {
    if (typeof x !== 'object' || x === null) throw new SvcError('MalformedXML', `Element <${name}> must hold child elements.`);
    return x as Record<string, unknown>;
  });
}

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

/**
 * Escapes text for XML content and attributes. Control characters are
 * written as character references, as S3 writes them: those XML 1.0 cannot
 * carry literally, and TAB, LF and CR too, which a parser would otherwise
 * normalise (a key holding CR would come back holding LF).
 */
export function escapeXml(s: string): string {
  return s
    .replace(/[&<>"']/g, (c) => ESC[c]!)
    .replace(/[\u0000-\u001f\ufffe\uffff]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`);
}

/** A tree node for the serializer: element name with children, or a leaf value; keys starting with `@` are attributes. */
export type XmlValue = string | number | boolean | Date | undefined | null | XmlNode | XmlNode[] | string[];
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
    let open = `<${name}`;
    for (const [k, a] of Object.entries(v)) {
      if (k.startsWith('@') && a !== undefined && a !== null) open += ` ${k.slice(1)}="${leaf(a as string)}"`;
    }
    out.push(`${open}>`);
    for (const [k, child] of Object.entries(v)) if (!k.startsWith('@')) serializeInto(out, k, child);
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

/** Deepest element nesting a request document may have (S3's deepest, a policy grant, is 5). */
export const MAX_XML_DEPTH = 32;
/** Largest request document parsed (callers cap their bodies lower). */
export const MAX_XML_BYTES = 8 * 1024 * 1024;

// The library only tokenizes: it never expands an entity (no DTD is accepted
// at all, so no external or recursive entity can exist); text is decoded
// below with XML's five predefined entities and numeric references.
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: false,
  htmlEntities: false,
  cdataPropName: '#cdata',
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: MAX_XML_DEPTH,
});

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** True for a code point XML 1.0 allows in a document. */
function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/** Decodes entity and character references; anything else after `&` is not well-formed. */
export function decodeXmlText(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&([^;&]{0,12});?/g, (all, ref: string) => {
    if (!all.endsWith(';')) throw new SvcError('MalformedXML', 'A bare & in text must be written &amp;.');
    const named = PREDEFINED[ref];
    if (named !== undefined) return named;
    const m = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(ref);
    if (!m) throw new SvcError('MalformedXML', `Undefined entity &${ref.slice(0, 12)};.`);
    const cp = m[1] !== undefined ? Number.parseInt(m[1], 16) : Number(m[2]);
    if (!isXmlChar(cp)) throw new SvcError('MalformedXML', `Character reference &${ref}; is not a legal XML character.`);
    return String.fromCodePoint(cp);
  });
}

type OrderedNode = Record<string, unknown>;

/** Attribute keys of a converted element start with `@` (namespace prefix removed: `xsi:type` → `@type`). */
function convert(children: OrderedNode[], attrs: Record<string, unknown> | undefined, depth: number): unknown {
  if (depth > MAX_XML_DEPTH) throw new SvcError('MalformedXML', 'The XML document is nested too deeply.');
  let text = '';
  let hasText = false;
  const out: Record<string, unknown> = {};
  let hasChild = false;
  for (const node of children) {
    if (typeof node['#text'] === 'string' || typeof node['#text'] === 'number') {
      text += decodeXmlText(String(node['#text']));
      hasText = true;
      continue;
    }
    if (Array.isArray(node['#cdata'])) {
      for (const c of node['#cdata'] as OrderedNode[]) text += String(c['#text'] ?? '');
      hasText = true;
      continue;
    }
    const name = Object.keys(node).find((k) => k !== ':@');
    if (name === undefined) continue;
    const value = convert(node[name] as OrderedNode[], node[':@'] as Record<string, unknown> | undefined, depth + 1);
    hasChild = true;
    const prev = out[name];
    if (prev === undefined) out[name] = ARRAY_ELEMENTS.has(name) ? [value] : value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  if (!hasChild) {
    // a leaf: its text (attributes of leaves carry nothing S3 reads)
    return hasText ? text : '';
  }
  if (text.trim() !== '') throw new SvcError('MalformedXML', 'Elements must hold either text or child elements, not both.');
  if (attrs) for (const [k, v] of Object.entries(attrs)) out[`@${k}`] = decodeXmlText(String(v));
  return out;
}

/** Elements that may repeat: always parsed as arrays. */
const ARRAY_ELEMENTS = new Set(['Part', 'Object', 'Tag', 'Grant', 'CORSRule', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'Rule']);

/**
 * Parses a request document and returns the content of `root`. Anything not
 * well-formed, a DTD, an undefined entity, nesting deeper than
 * MAX_XML_DEPTH, or a different root is `MalformedXML`. Element order,
 * namespaces (declared or prefixed), whitespace between elements, CDATA and
 * character references (`&#34;`, `&#x22;`) are accepted as XML allows.
 */
export function parseXml(body: Buffer | string, root: string): Record<string, unknown> {
  if (body.length > MAX_XML_BYTES) throw new SvcError('MalformedXML', 'The XML document is too large.');
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '' || /<!DOCTYPE|<!ENTITY/i.test(text)) throw new SvcError('MalformedXML');
  if (XMLValidator.validate(text) !== true) throw new SvcError('MalformedXML');
  let doc: OrderedNode[];
  try {
    doc = parser.parse(text) as OrderedNode[];
  } catch {
    throw new SvcError('MalformedXML');
  }
  const elements = doc.filter((n) => Object.keys(n).some((k) => k !== ':@' && k !== '#text' && k !== '#cdata'));
  const top = elements[0];
  if (elements.length !== 1 || top === undefined || !(root in top)) throw new SvcError('MalformedXML', `Expected a <${root}> document.`);
  const v = convert(top[root] as OrderedNode[], top[':@'] as Record<string, unknown> | undefined, 1);
  if (v === '') return {};
  if (typeof v !== 'object' || v === null) throw new SvcError('MalformedXML');
  return v as Record<string, unknown>;
}

/** A child's text, surrounding whitespace removed (tokens, numbers, ids), or undefined; a nested or repeated element is MalformedXML. */
export function xmlText(node: Record<string, unknown>, name: string): string | undefined {
  return xmlRawText(node, name)?.trim();
}

/** A child's text exactly as sent (object keys, tag values), or undefined. */
export function xmlRawText(node: Record<string, unknown>, name: string): string | undefined {
  const v = node[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) throw new SvcError('MalformedXML', `Element <${name}> may appear only once.`);
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

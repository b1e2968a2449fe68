import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { code } from '../../../test/helpers/error-code.ts';
import { decodeXmlText, escapeXml, MAX_XML_DEPTH, parseXml, toXml, xmlList, xmlRawText, xmlText } from './xml.ts';

describe('xml', () => {
  it('serializes nested nodes, arrays, dates and escapes text', () => {
    const out = toXml('ListBucketResult', {
      Name: 'b',
      IsTruncated: false,
      Contents: [
        { Key: 'a<&>"\'', LastModified: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), Size: 3 },
        { Key: 'b', Size: 0 },
      ],
      Skipped: undefined,
    });
    expect(out).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><IsTruncated>false</IsTruncated>' +
        '<Contents><Key>a&lt;&amp;&gt;&quot;&apos;</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified><Size>3</Size></Contents>' +
        '<Contents><Key>b</Key><Size>0</Size></Contents></ListBucketResult>',
    );
    expect(escapeXml('a\u0001b')).toBe('a&#x1;b');
  });

  it('parses request documents and round-trips escaped keys', () => {
    const doc = parseXml(
      '<?xml version="1.0"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>v1</VersionId></Object></Delete>',
      'Delete',
    );
    expect(xmlText(doc, 'Quiet')).toBe('true');
    const objs = xmlList(doc, 'Object');
    expect(objs.map((o) => xmlText(o, 'Key'))).toEqual(['a&b', 'c']);
    expect(xmlText(objs[1]!, 'VersionId')).toBe('v1');
    const one = parseXml('<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>', 'CompleteMultipartUpload');
    expect(xmlList(one, 'Part')).toHaveLength(1);
  });

  it('refuses malformed, wrong-root and entity-bearing documents with MalformedXML', () => {
    for (const bad of ['', '<Delete>', '<Delete><Object></Delete>', 'not xml', '<Other/>', '<!DOCTYPE x [<!ENTITY a "b">]><Delete/>']) {
      expect(code(() => parseXml(bad, 'Delete')), bad).toBe('MalformedXML');
    }
    expect(code(() => xmlText({ Key: { nested: 'x' } }, 'Key'))).toBe('MalformedXML');
  });

  it('accepts what real encoders emit: character references, any order, prefixes, whitespace, CDATA', () => {
    // rclone (Go's encoding/xml) writes quotes as &#34; and may order PartNumber after ETag
    const rclone =
      '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ETag>&#34;0cc175b9c0f1b6a831c399e269772661&#34;</ETag>' +
      '<PartNumber>1</PartNumber></Part><Part><PartNumber>2</PartNumber><ETag>&#x22;92eb5ffee6ae2fec3ad71c777531578f&#x22;</ETag></Part></CompleteMultipartUpload>';
    const parts = xmlList(parseXml(rclone, 'CompleteMultipartUpload'), 'Part');
    expect(parts.map((p) => [xmlText(p, 'PartNumber'), xmlText(p, 'ETag')])).toEqual([
      ['1', '"0cc175b9c0f1b6a831c399e269772661"'],
      ['2', '"92eb5ffee6ae2fec3ad71c777531578f"'],
    ]);
    const pretty = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<s3:Delete xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/">
  <s3:Object>
    <s3:Key> spaced key </s3:Key>
  </s3:Object>
  <s3:Object><s3:Key><![CDATA[a&b<c]]>&amp;d</s3:Key></s3:Object>
</s3:Delete>`;
    const objs = xmlList(parseXml(pretty, 'Delete'), 'Object');
    expect(objs.map((o) => xmlRawText(o, 'Key'))).toEqual([' spaced key ', 'a&b<c&d']);
    // attributes survive on elements with children, namespace prefix removed (s3cmd's xsi:type)
    const acl = parseXml(
      '<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>',
      'AccessControlPolicy',
    );
    const grant = xmlList(acl['AccessControlList'] as Record<string, unknown>, 'Grant')[0]!;
    expect((grant['Grantee'] as Record<string, unknown>)['@type']).toBe('Group');
  });

  it('refuses undefined entities, bare ampersands, illegal characters, DTDs, mixed content and deep nesting', () => {
    const bad = [
      '<Delete><Object><Key>&nbsp;</Key></Object></Delete>',
      '<Delete><Object><Key>a & b</Key></Object></Delete>',
      '<Delete><Object><Key>&#0;</Key></Object></Delete>',
      '<Delete><Object><Key>&#xD800;</Key></Object></Delete>',
      '<?xml version="1.0"?><!DOCTYPE Delete SYSTEM "http://example.invalid/x.dtd"><Delete/>',
      '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><Delete><Quiet>&lol2;</Quiet></Delete>',
      '<Delete>text<Object><Key>k</Key></Object></Delete>',
      '<Delete><Quiet>true</Quiet><Quiet>false</Quiet></Delete>',
      '<Delete/><Delete/>',
      `<Delete>${'<a>'.repeat(MAX_XML_DEPTH + 1)}x${'</a>'.repeat(MAX_XML_DEPTH + 1)}</Delete>`,
    ];
    for (const b of bad) {
      expect(code(() => xmlText(parseXml(b, 'Delete'), 'Quiet')), b.slice(0, 60)).toBe('MalformedXML');
    }
  });

  it('property: any string survives escape → parse, with references in any spelling', () => {
    const xmlChar = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/[^\t\n\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '').replace(/\r/g, ''));
    fc.assert(
      fc.property(xmlChar, fc.boolean(), (s, numeric) => {
        const enc = numeric ? [...s].map((c) => `&#${c.codePointAt(0)};`).join('') : escapeXml(s);
        const doc = parseXml(`<Delete><Object><Key>${enc}</Key></Object></Delete>`, 'Delete');
        expect(xmlRawText(xmlList(doc, 'Object')[0]!, 'Key')).toBe(s);
        expect(decodeXmlText(enc)).toBe(s);
      }),
      { numRuns: 300 },
    );
  });

  it('serializes attributes (the ACL grantee type)', () => {
    const out = toXml('G', { Grantee: { '@xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance', '@xsi:type': 'CanonicalUser', ID: 'a"b' } }, false);
    expect(out).toContain('<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>a&quot;b</ID></Grantee>');
  });
});

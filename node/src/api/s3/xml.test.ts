import { describe, expect, it } from 'vitest';
import { code } from '../../../test/helpers/error-code.ts';
import { escapeXml, parseXml, toXml, xmlList, xmlText } from './xml.ts';

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
});

/**
 * POST Object: browser uploads with an HTML multipart/form-data form. The
 * form's fields (everything before the `file` part; S3 ignores fields after
 * it) carry the key, metadata and, for signed forms, a base64 policy
 * document with its SigV4 signature. Order of checks, all before a byte of
 * the file is read: form shape → signature and policy (expiration,
 * conditions) → authorization of s3:PutObject for the signer (or the
 * anonymous caller) → storage, with content-length-range and any checksum
 * enforced while streaming, before the object layer commits.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import type { PutObjectOptions } from '../../../object/types.ts';
import { SvcError } from '../../../util/errors.ts';
import { requestOrigin } from '../../request-origin.ts';
import { verifyPolicySignatureV2 } from '../auth/sigv2.ts';
import { hmacHex, lookupSecret, parseAmzDate, parseCredentialScope, signaturesEqual, signingKey } from '../auth/sigv4.ts';
import { cannedAcl, encodeAcl } from '../authz/acl.ts';
import { authorize } from '../authz/authorize.ts';
import { bucketSecurity, requestFacts, rootOwner } from '../authz/endpoint.ts';
import { ANONYMOUS, type Principal, rootPrincipal } from '../../../iam/principal.ts';
import { checksumHeaderName, parseChecksumAlgorithm } from '../checksum.ts';
import { quoteEtag, type S3Context, sendXml, underQuota } from '../context.ts';
import { checkChecksumValue, MAX_PUT_SIZE, streamPutData } from '../put-data.ts';
import { checkPostPolicy, parsePostPolicy } from '../post-policy.ts';
import { MAX_KEY_BYTES } from '../router.ts';
import { encodeTags, MAX_USER_META_BYTES } from '../validate.ts';
import { parseXml, xmlList, xmlRawText } from '../xml.ts';
import { customerKeyOf, requestedSseOf, sseResponseHeaders } from '../sse-headers.ts';
import { checkAclAllowed } from './acl.ts';
import { MAX_OBJECT_TAGS } from './tagging.ts';

const MAX_FIELD_BYTES = 64 * 1024;
const MAX_FIELDS = 200;

interface PostForm {
  /** Field names lower-cased. */
  fields: Map<string, string>;
  file: Readable;
  filename: string;
}

/** Reads the form up to its `file` part (streamed, never buffered). */
function readForm(req: IncomingMessage): Promise<PostForm> {
  return new Promise((resolve, reject) => {
    let bb: ReturnType<typeof Busboy>;
    try {
      bb = Busboy({
        headers: req.headers as { 'content-type': string },
        limits: { fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, parts: MAX_FIELDS + 1, files: 1 },
        isPartAFile: (name) => name?.toLowerCase() === 'file',
      });
    } catch {
      reject(new SvcError('MalformedPOSTRequest'));
      return;
    }
    const fields = new Map<string, string>();
    let settled = false;
    const fail = (err: SvcError) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    bb.on('field', (name, value, _nt, valueTruncated) => {
      if (settled) return; // fields after the file are ignored, as S3 does
      if (valueTruncated) {
        fail(new SvcError('MalformedPOSTRequest', `The form field '${name}' is larger than ${MAX_FIELD_BYTES} bytes.`));
        return;
      }
      const k = name.toLowerCase();
      if (fields.has(k)) {
        fail(new SvcError('InvalidArgument', `The form field '${name}' appears more than once.`));
        return;
      }
      fields.set(k, value);
    });
    bb.on('file', (_name, stream, filename) => {
      if (settled) {
        stream.resume();
        return;
      }
      settled = true;
      resolve({ fields, file: stream, filename: filename.split(/[\\/]/).pop() ?? '' });
    });
    bb.on('fieldsLimit', () => fail(new SvcError('MalformedPOSTRequest', 'The form has too many fields.')));
    bb.on('error', () => fail(new SvcError('MalformedPOSTRequest')));
    bb.on('finish', () => fail(new SvcError('InvalidArgument', 'POST requires exactly one file upload per request.')));
    req.on('error', () => fail(new SvcError('IncompleteBody')));
    req.pipe(bb);
  });
}

/**
 * Verifies a signed form and returns the signer: SigV4 (`x-amz-signature`
 * over the base64 policy with the scope's key) or SigV2 (`AWSAccessKeyId`,
 * `signature`: HMAC-SHA1 of the base64 policy), both through the one
 * credential lookup.
 */
function verifySignedForm(ctx: S3Context, f: Map<string, string>): Principal {
  const policy = f.get('policy');
  if (!policy) throw new SvcError('InvalidArgument', 'Bucket POST must contain a field named policy when it is signed.');
  if (!f.has('x-amz-signature')) {
    const accessKey = f.get('awsaccesskeyid');
    if (!accessKey) throw new SvcError('InvalidArgument', 'A POST form signed with Signature Version 2 needs the AWSAccessKeyId field.');
    const cred = verifyPolicySignatureV2(ctx.verify, accessKey, policy, f.get('signature') ?? '', f.get('x-amz-security-token'));
    return cred.principal ?? rootPrincipal(cred.accessKey);
  }
  if (f.get('x-amz-algorithm') !== 'AWS4-HMAC-SHA256') throw new SvcError('InvalidArgument', 'POST form x-amz-algorithm must be AWS4-HMAC-SHA256.');
  const credential = f.get('x-amz-credential');
  const date = f.get('x-amz-date');
  const signature = f.get('x-amz-signature') ?? '';
  if (!credential || !date) throw new SvcError('InvalidArgument', 'POST form needs x-amz-credential and x-amz-date.');
  const opts = ctx.verify;
  const scope = parseCredentialScope(credential, opts, 'AuthorizationQueryParametersError');
  if (Number.isNaN(parseAmzDate(date)) || date.slice(0, 8) !== scope.date) throw new SvcError('InvalidArgument', 'POST form x-amz-date must match the credential scope date.');
  const cred = lookupSecret(opts, scope.accessKey, { sessionToken: f.get('x-amz-security-token'), signedAt: parseAmzDate(date) });
  const expected = hmacHex(signingKey(cred.secretKey, scope.date, scope.region, scope.service), policy);
  if (!signaturesEqual(expected, signature)) throw new SvcError('SignatureDoesNotMatch');
  return cred.principal ?? rootPrincipal(cred.accessKey);
}

/** The object's options from form fields (Content-Type, metadata, tagging, storage class, ACL). */
function formOptions(ctx: S3Context, f: Map<string, string>): PutObjectOptions {
  const contentHeaders: PutObjectOptions['contentHeaders'] = { contentType: f.get('content-type') ?? 'binary/octet-stream' };
  const map: [string, keyof NonNullable<PutObjectOptions['contentHeaders']>][] = [
    ['cache-control', 'cacheControl'],
    ['content-disposition', 'contentDisposition'],
    ['content-encoding', 'contentEncoding'],
    ['content-language', 'contentLanguage'],
    ['expires', 'expires'],
  ];
  for (const [field, name] of map) {
    const v = f.get(field);
    if (v !== undefined) contentHeaders[name] = v;
  }
  const userMeta: Record<string, string> = {};
  let metaBytes = 0;
  for (const [k, v] of f) {
    if (!k.startsWith('x-amz-meta-')) continue;
    userMeta[k.slice('x-amz-meta-'.length)] = v;
    metaBytes += Buffer.byteLength(k) - 'x-amz-meta-'.length + Buffer.byteLength(v);
  }
  if (metaBytes > MAX_USER_META_BYTES) throw new SvcError('MetadataTooLarge');
  const opts: PutObjectOptions = { contentHeaders, userMeta };
  const sc = f.get('x-amz-storage-class');
  if (sc !== undefined) {
    if (sc !== 'STANDARD' && sc !== 'REDUCED_REDUNDANCY') throw new SvcError('InvalidStorageClass');
    opts.storageClass = sc;
  }
  const tagging = f.get('tagging');
  if (tagging !== undefined) {
    const doc = parseXml(tagging, 'Tagging');
    const set = doc['TagSet'];
    const tags: [string, string][] =
      set && typeof set === 'object' ? xmlList(set as Record<string, unknown>, 'Tag').map((t) => [xmlRawText(t, 'Key') ?? '', xmlRawText(t, 'Value') ?? '']) : [];
    opts.tags = encodeTags(tags, MAX_OBJECT_TAGS);
  }
  // SSE-S3, SSE-KMS and SSE-C by the same names as a PUT's headers (S3's POST form fields)
  const sse = requestedSseOf((name) => f.get(name));
  if (sse) opts.sse = sse;
  return opts;
}

export async function handlePostObject(ctx: S3Context): Promise<void> {
  const form = await readForm(ctx.req);
  try {
    await storeForm(ctx, form);
  } finally {
    // an upload refused before its file was read leaves the rest of the body unread
    if (!form.file.readableEnded) form.file.resume();
  }
}

async function storeForm(ctx: S3Context, { fields: f, file, filename }: PostForm): Promise<void> {
  const rawKey = f.get('key');
  if (rawKey === undefined || rawKey === '') throw new SvcError('InvalidArgument', "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.");
  // SigV4 signs with x-amz-signature, SigV2 with signature (and AWSAccessKeyId)
  const signed = f.has('x-amz-signature') || f.has('signature');
  const principal = signed ? verifySignedForm(ctx, f) : ANONYMOUS;
  let limits = { min: 0, max: MAX_PUT_SIZE };
  const policyField = f.get('policy');
  if (policyField !== undefined && (signed || policyField !== '')) {
    const r = checkPostPolicy(parsePostPolicy(policyField), f, ctx.ep.bucket, ctx.clock.now());
    limits = { min: r.min, max: Math.min(r.max, MAX_PUT_SIZE) };
  }
  const key = rawKey.replaceAll('${filename}', filename);
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new SvcError('KeyTooLongError');
  const opts = formOptions(ctx, f);
  ctx.principal = principal;
  ctx.ep = { ...ctx.ep, key };
  const sec = await bucketSecurity(ctx);
  await authorize({ facts: { ...requestFacts(ctx, signed ? 'POST' : undefined), signatureV2: signed && !f.has('x-amz-signature') }, bucket: ctx.ep.bucket, key, security: sec });
  const aclField = f.get('acl');
  if (aclField !== undefined) {
    const acl = cannedAcl(aclField.trim(), rootOwner(ctx), sec.owner);
    checkAclAllowed(acl, sec);
    opts.acl = encodeAcl(acl);
  }
  const algRaw = f.get('x-amz-checksum-algorithm');
  const alg = algRaw !== undefined ? parseChecksumAlgorithm(algRaw) : undefined;
  if (algRaw !== undefined && !alg) throw new SvcError('InvalidRequest', `Checksum algorithm provided is unsupported: ${algRaw}.`);
  const expected = alg ? f.get(checksumHeaderName(alg)) : undefined;
  if (alg && expected !== undefined) checkChecksumValue(alg, expected, 'header');
  const data = streamPutData(file, -1, alg, 'FULL_OBJECT', { minSize: limits.min, maxSize: limits.max, ...(expected !== undefined ? { expected } : {}) });
  // The file's size is known only once it is read: the form's length bounds it (at least one byte), and the
  // stored object then counts at its real size.
  const formLength = Number(ctx.req.headers['content-length'] ?? Number.NaN);
  const info = await underQuota(ctx, ctx.ep.bucket, Number.isSafeInteger(formLength) && formLength > 0 ? formLength : 1, () => ctx.layer.putObject(ctx.ep.bucket, key, data, { ...opts, origin: ctx.origin('post') }));

  const etag = quoteEtag(info.etag);
  const origin = requestOrigin(ctx.req);
  const location = `${origin.secure ? 'https' : 'http'}://${origin.host}/${ctx.ep.bucket}/${encodeURI(key)}`;
  const headers: Record<string, string> = { etag, location, ...sseResponseHeaders(info.sse, customerKeyOf((name) => f.get(name))) };
  if (info.versionId !== 'null') headers['x-amz-version-id'] = info.versionId;
  const redirect = f.get('success_action_redirect') ?? f.get('redirect');
  if (redirect) {
    let target: URL | undefined;
    try {
      target = new URL(redirect);
    } catch {
      target = undefined;
    }
    if (target) {
      target.searchParams.set('bucket', ctx.ep.bucket);
      target.searchParams.set('key', key);
      target.searchParams.set('etag', etag);
      ctx.res.writeHead(303, { ...headers, location: target.toString(), 'content-length': 0 });
      ctx.res.end();
      return;
    }
  }
  const status = f.get('success_action_status');
  if (status === '201') {
    sendXml(ctx, 201, 'PostResponse', { Location: location, Bucket: ctx.ep.bucket, Key: key, ETag: etag }, headers);
    return;
  }
  ctx.res.writeHead(status === '200' ? 200 : 204, { ...headers, 'content-length': 0 });
  ctx.res.end();
}

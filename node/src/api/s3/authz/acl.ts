/**
 * Access control lists, S3's way: an owner and grants of READ, WRITE,
 * READ_ACP, WRITE_ACP or FULL_CONTROL to canonical users or the predefined
 * groups; canned ACLs; the `x-amz-grant-*` headers; the
 * AccessControlPolicy XML both ways; the stored JSON form. Pure.
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../util/errors.ts';
import { hdr } from '../headers.ts';
import { type XmlNode, xmlList, xmlText } from '../xml.ts';
import type { Principal } from '../../../iam/principal.ts';

export type Permission = 'READ' | 'WRITE' | 'READ_ACP' | 'WRITE_ACP' | 'FULL_CONTROL';
export const PERMISSIONS: readonly Permission[] = ['READ', 'WRITE', 'READ_ACP', 'WRITE_ACP', 'FULL_CONTROL'];

export const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';
export const AUTHENTICATED_USERS = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';
export const LOG_DELIVERY = 'http://acs.amazonaws.com/groups/s3/LogDelivery';
const GROUPS = [ALL_USERS, AUTHENTICATED_USERS, LOG_DELIVERY];
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

export type Grantee = { type: 'CanonicalUser'; id: string; displayName?: string } | { type: 'Group'; uri: string };

export interface Grant {
  grantee: Grantee;
  permission: Permission;
}

export interface Owner {
  id: string;
  displayName: string;
}

export interface Acl {
  owner: Owner;
  grants: Grant[];
}

export type CannedAcl =
  | 'private'
  | 'public-read'
  | 'public-read-write'
  | 'authenticated-read'
  | 'aws-exec-read'
  | 'bucket-owner-read'
  | 'bucket-owner-full-control'
  | 'log-delivery-write';

const CANNED: readonly CannedAcl[] = [
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'aws-exec-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
  'log-delivery-write',
];

function userGrant(o: Owner, permission: Permission): Grant {
  return { grantee: { type: 'CanonicalUser', id: o.id, displayName: o.displayName }, permission };
}

/**
 * A canned ACL's grants. `bucketOwner` is the owner of the bucket an object
 * lives in (bucket-owner-* add it; with one tenant it is the object owner).
 */
export function cannedAcl(name: string, owner: Owner, bucketOwner: Owner = owner): Acl {
  if (!(CANNED as readonly string[]).includes(name)) throw new SvcError('InvalidArgument', `Unknown canned ACL '${name}'.`);
  const grants: Grant[] = [userGrant(owner, 'FULL_CONTROL')];
  const group = (uri: string, permission: Permission) => grants.push({ grantee: { type: 'Group', uri }, permission });
  switch (name as CannedAcl) {
    case 'public-read':
      group(ALL_USERS, 'READ');
      break;
    case 'public-read-write':
      group(ALL_USERS, 'READ');
      group(ALL_USERS, 'WRITE');
      break;
    case 'authenticated-read':
      group(AUTHENTICATED_USERS, 'READ');
      break;
    case 'bucket-owner-read':
      if (bucketOwner.id !== owner.id) grants.push(userGrant(bucketOwner, 'READ'));
      break;
    case 'bucket-owner-full-control':
      if (bucketOwner.id !== owner.id) grants.push(userGrant(bucketOwner, 'FULL_CONTROL'));
      break;
    case 'log-delivery-write':
      group(LOG_DELIVERY, 'WRITE');
      group(LOG_DELIVERY, 'READ_ACP');
      break;
    default:
      break;
  }
  return { owner, grants };
}

/** Resolves a canonical user id to its display name; undefined when no such user exists. */
export type UserLookup = (canonicalId: string) => string | undefined;

const GRANT_HEADERS: [string, Permission][] = [
  ['x-amz-grant-read', 'READ'],
  ['x-amz-grant-write', 'WRITE'],
  ['x-amz-grant-read-acp', 'READ_ACP'],
  ['x-amz-grant-write-acp', 'WRITE_ACP'],
  ['x-amz-grant-full-control', 'FULL_CONTROL'],
];

function granteeOf(kind: string, value: string, users: UserLookup): Grantee {
  switch (kind.toLowerCase()) {
    case 'id': {
      const name = users(value);
      if (name === undefined) throw new SvcError('InvalidArgument', 'Invalid id');
      return { type: 'CanonicalUser', id: value, displayName: name };
    }
    case 'uri':
      if (!GROUPS.includes(value)) throw new SvcError('InvalidArgument', 'Invalid group uri');
      return { type: 'Group', uri: value };
    case 'emailaddress':
      throw new SvcError('UnresolvableGrantByEmailAddress');
    default:
      throw new SvcError('InvalidArgument', `Invalid grantee type '${kind}'.`);
  }
}

/** Parses `id="…", uri="…", emailAddress="…"` lists of one grant header. */
function parseGrantHeader(v: string, permission: Permission, users: UserLookup): Grant[] {
  const out: Grant[] = [];
  const re = /\s*([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))\s*(,|$)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < v.length && (m = re.exec(v)) !== null) {
    out.push({ grantee: granteeOf(m[1]!, m[2] ?? m[3] ?? '', users), permission });
    pos = re.lastIndex;
    if (m[4] === '') break;
  }
  if (pos < v.trim().length || out.length === 0) throw new SvcError('InvalidArgument', `Malformed grant header value: ${v.slice(0, 64)}`);
  return out;
}

/**
 * The ACL a write request asks for through `x-amz-acl` or `x-amz-grant-*`
 * (never both); undefined when it names none.
 */
export function aclFromHeaders(req: IncomingMessage, owner: Owner, users: UserLookup, bucketOwner: Owner = owner): Acl | undefined {
  const canned = hdr(req, 'x-amz-acl');
  const grants: Grant[] = [];
  for (const [name, perm] of GRANT_HEADERS) {
    const v = hdr(req, name);
    if (v !== undefined) grants.push(...parseGrantHeader(v, perm, users));
  }
  if (canned !== undefined && grants.length > 0) throw new SvcError('InvalidRequest', 'Specifying both Canned ACLs and Header Grants is not allowed');
  if (canned !== undefined) return cannedAcl(canned.trim(), owner, bucketOwner);
  return grants.length > 0 ? { owner, grants } : undefined;
}

/** Parses an AccessControlPolicy document (already XML-parsed); the owner must be the resource owner. */
export function aclFromXml(doc: Record<string, unknown>, owner: Owner, users: UserLookup): Acl {
  const o = doc['Owner'];
  if (o !== undefined) {
    if (typeof o !== 'object' || o === null) throw new SvcError('MalformedACLError');
    const id = xmlText(o as Record<string, unknown>, 'ID');
    if (id !== undefined && id !== owner.id) throw new SvcError('AccessDenied', 'The ACL owner must be the owner of the resource.');
  }
  const list = doc['AccessControlList'];
  const grants: Grant[] = [];
  if (list !== undefined && list !== '') {
    if (typeof list !== 'object' || list === null) throw new SvcError('MalformedACLError');
    for (const g of xmlList(list as Record<string, unknown>, 'Grant')) {
      const permission = xmlText(g, 'Permission');
      if (!permission || !(PERMISSIONS as readonly string[]).includes(permission)) throw new SvcError('MalformedACLError', 'Every Grant needs a valid Permission.');
      const ge = g['Grantee'];
      if (typeof ge !== 'object' || ge === null) throw new SvcError('MalformedACLError', 'Every Grant needs a Grantee.');
      const grantee = ge as Record<string, unknown>;
      const id = xmlText(grantee, 'ID');
      const uri = xmlText(grantee, 'URI');
      const email = xmlText(grantee, 'EmailAddress');
      const type = typeof grantee['@type'] === 'string' ? (grantee['@type'] as string) : id !== undefined ? 'CanonicalUser' : uri !== undefined ? 'Group' : 'AmazonCustomerByEmail';
      if (type === 'CanonicalUser' && id !== undefined) grants.push({ grantee: granteeOf('id', id, users), permission: permission as Permission });
      else if (type === 'Group' && uri !== undefined) grants.push({ grantee: granteeOf('uri', uri, users), permission: permission as Permission });
      else if (type === 'AmazonCustomerByEmail' && email !== undefined) granteeOf('emailaddress', email, users);
      else throw new SvcError('MalformedACLError', 'The Grantee does not match its xsi:type.');
    }
  }
  return { owner, grants };
}

/** The AccessControlPolicy body of GetBucketAcl / GetObjectAcl (Grantee with its xsi:type, as every S3 client expects). */
export function aclToXml(acl: Acl): XmlNode {
  return {
    Owner: { ID: acl.owner.id, DisplayName: acl.owner.displayName },
    AccessControlList: {
      Grant: acl.grants.map((g) => ({
        Grantee:
          g.grantee.type === 'CanonicalUser'
            ? { '@xmlns:xsi': XSI, '@xsi:type': 'CanonicalUser', ID: g.grantee.id, DisplayName: g.grantee.displayName ?? g.grantee.id }
            : { '@xmlns:xsi': XSI, '@xsi:type': 'Group', URI: g.grantee.uri },
        Permission: g.permission,
      })),
    },
  };
}

/** Stored form (JSON) of an ACL. */
export function encodeAcl(acl: Acl): string {
  return JSON.stringify({ v: 1, owner: acl.owner, grants: acl.grants });
}

export function decodeAcl(raw: string | Uint8Array): Acl {
  const text = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
  const d = JSON.parse(text) as { v: number; owner: Owner; grants: Grant[] };
  if (d.v !== 1 || typeof d.owner?.id !== 'string' || !Array.isArray(d.grants)) throw new Error('stored ACL is not a version-1 document');
  return { owner: d.owner, grants: d.grants };
}

function granteeMatches(g: Grantee, p: Principal): boolean {
  if (g.type === 'Group') return g.uri === ALL_USERS || (g.uri === AUTHENTICATED_USERS && p.kind === 'user');
  return p.kind === 'user' && p.canonicalId === g.id;
}

/**
 * True when the ACL grants `perm` to the principal (FULL_CONTROL grants all;
 * the ACL's owner always holds READ_ACP and WRITE_ACP). `ignorePublic`
 * drops grants to AllUsers and AuthenticatedUsers (Public Access Block).
 */
export function aclAllows(acl: Acl, p: Principal, perm: Permission, ignorePublic = false): boolean {
  if ((perm === 'READ_ACP' || perm === 'WRITE_ACP') && p.kind === 'user' && p.canonicalId === acl.owner.id) return true;
  return acl.grants.some(
    (g) => (g.permission === perm || g.permission === 'FULL_CONTROL') && !(ignorePublic && isPublicGrant(g)) && granteeMatches(g.grantee, p),
  );
}

export function isPublicGrant(g: Grant): boolean {
  return g.grantee.type === 'Group' && (g.grantee.uri === ALL_USERS || g.grantee.uri === AUTHENTICATED_USERS);
}

export function isPublicAcl(acl: Acl | undefined): boolean {
  return acl?.grants.some(isPublicGrant) ?? false;
}

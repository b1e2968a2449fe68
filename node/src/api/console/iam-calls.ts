/**
 * The console's Identity pages and its permission-aware views call the
 * admin API's identity routes with the signed-in user's keys, like any
 * client: the same madmin bodies (secrets encrypted with that user's secret
 * key), the same authorization. A read-only user therefore sees what its
 * policies allow and nothing else.
 */
import { decryptData, encryptData } from '../../iam/madmin-crypto.ts';
import { failure, send } from './call.ts';
import { UpstreamError } from './console-errors.ts';
import type { SessionCredentials } from './sessions.ts';
import type { Upstream } from './upstream.ts';

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

async function plain<T>(up: Upstream, c: SessionCredentials, method: Method, path: string, query: Record<string, string> = {}, body?: string): Promise<T> {
  const res = await send(up, c, { method, path: `/svc/admin/${path}`, query, ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}) });
  if (res.status >= 300) throw await failure(res);
  const text = await res.body.text();
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError(502, 'InternalError', `the admin API answered ${path} with something that is not JSON`);
  }
}

/** A request and/or answer encrypted with the session's secret key. */
async function sealed<T>(up: Upstream, c: SessionCredentials, method: Method, path: string, query: Record<string, string>, value: unknown, decrypt: boolean): Promise<T> {
  const body = value === undefined ? undefined : await encryptData(c.secretKey, Buffer.from(JSON.stringify(value)));
  const res = await send(up, c, { method, path: `/svc/admin/${path}`, query, ...(body !== undefined ? { body, headers: { 'content-type': 'application/octet-stream' } } : {}) });
  if (res.status >= 300) throw await failure(res);
  const chunks: Buffer[] = [];
  for await (const ch of res.body as AsyncIterable<Buffer>) chunks.push(ch);
  if (!decrypt) return undefined as T;
  return JSON.parse((await decryptData(c.secretKey, Buffer.concat(chunks))).toString('utf8')) as T;
}

export interface WhoAmI {
  accessKey: string;
  user: string;
  root: boolean;
  credential: string;
  policies: string[];
  permissions: Record<string, boolean>;
}

export const iamCalls = {
  whoami: (up: Upstream, c: SessionCredentials, bucket?: string) => plain<WhoAmI>(up, c, 'GET', 'v3/iam/whoami', bucket ? { bucket } : {}),
  users: (up: Upstream, c: SessionCredentials) => sealed<Record<string, { policyName: string; status: string; memberOf: string[] }>>(up, c, 'GET', 'v3/list-users', {}, undefined, true),
  addUser: (up: Upstream, c: SessionCredentials, accessKey: string, secretKey: string) => sealed<void>(up, c, 'PUT', 'v3/add-user', { accessKey }, { secretKey, status: 'enabled' }, false),
  removeUser: (up: Upstream, c: SessionCredentials, accessKey: string) => plain<void>(up, c, 'DELETE', 'v3/remove-user', { accessKey }),
  setUserStatus: (up: Upstream, c: SessionCredentials, accessKey: string, enabled: boolean) => plain<void>(up, c, 'PUT', 'v3/set-user-status', { accessKey, status: enabled ? 'enabled' : 'disabled' }),
  groups: (up: Upstream, c: SessionCredentials) => plain<string[]>(up, c, 'GET', 'v3/groups'),
  group: (up: Upstream, c: SessionCredentials, group: string) => plain<{ name: string; status: string; members: string[]; policy: string }>(up, c, 'GET', 'v3/group', { group }),
  updateGroup: (up: Upstream, c: SessionCredentials, group: string, members: string[], isRemove: boolean) => plain<void>(up, c, 'PUT', 'v3/update-group-members', {}, JSON.stringify({ group, members, isRemove })),
  policies: (up: Upstream, c: SessionCredentials) => plain<Record<string, unknown>>(up, c, 'GET', 'v3/list-canned-policies'),
  putPolicy: (up: Upstream, c: SessionCredentials, name: string, document: string) => plain<void>(up, c, 'PUT', 'v3/add-canned-policy', { name }, document),
  removePolicy: (up: Upstream, c: SessionCredentials, name: string) => plain<void>(up, c, 'DELETE', 'v3/remove-canned-policy', { name }),
  attach: (up: Upstream, c: SessionCredentials, detach: boolean, policies: string[], target: { user: string } | { group: string }) =>
    sealed<{ policiesAttached?: string[]; policiesDetached?: string[] }>(up, c, 'POST', `v3/idp/builtin/policy/${detach ? 'detach' : 'attach'}`, {}, { policies, ...target }, true),
  accessKeys: (up: Upstream, c: SessionCredentials, user?: string) => sealed<{ accounts: unknown[] }>(up, c, 'GET', 'v3/list-service-accounts', user ? { user } : {}, undefined, true),
  createAccessKey: (up: Upstream, c: SessionCredentials, body: Record<string, unknown>) => sealed<{ credentials: { accessKey: string; secretKey: string; expiration: string } }>(up, c, 'PUT', 'v3/add-service-account', {}, body, true),
  removeAccessKey: (up: Upstream, c: SessionCredentials, accessKey: string) => plain<void>(up, c, 'DELETE', 'v3/delete-service-account', { accessKey }),
};


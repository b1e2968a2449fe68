/**
 * The admin API's identity routes, as the operator uses them to keep the
 * users and policies a SvcCluster declares (`spec.iam`): madmin's paths and
 * bodies, the new user's secret encrypted with the operator's own secret
 * key (`node/src/iam/madmin-crypto.ts`, the same code the server and the
 * `svc` client use). Signing, the per-CA connection pools, the endpoint
 * fallback rule and the error decoding are the pool client's (`client.ts`).
 * Tries the endpoints in order on transport failures.
 */
import { fetch, type Response } from 'undici';
import { encryptData } from '../../../node/src/iam/madmin-crypto.ts';
import { ADMIN_PREFIX, adminErrorOf, agentFor, type Credentials, isTransportError, signAdminRequest } from './client.ts';
import { AdminError } from './types.ts';

export interface IdentityApi {
  putPolicy(name: string, document: string): Promise<void>;
  removePolicy(name: string): Promise<void>;
  addUser(accessKey: string, secretKey: string): Promise<void>;
  removeUser(accessKey: string): Promise<void>;
  /** Replaces the user's policies. */
  setUserPolicies(accessKey: string, policies: readonly string[]): Promise<void>;
}

export interface IamAdminClientOptions {
  readonly endpoints: readonly string[];
  readonly credentials: Credentials;
  readonly region?: string;
  readonly timeoutMs?: number;
  readonly ca?: string | undefined;
}

export class IamAdminClient implements IdentityApi {
  readonly #o: IamAdminClientOptions;

  constructor(o: IamAdminClientOptions) {
    if (o.endpoints.length === 0) throw new Error('identity client needs at least one endpoint');
    this.#o = o;
  }

  async #call(method: 'PUT' | 'DELETE', path: string, query: Record<string, string>, body: Buffer | string = ''): Promise<void> {
    let last: unknown;
    for (const base of this.#o.endpoints) {
      try {
        await this.#one(base, method, path, query, body);
        return;
      } catch (err) {
        last = err;
        if (!isTransportError(err)) throw err;
      }
    }
    throw last;
  }

  async #one(base: string, method: string, path: string, query: Record<string, string>, body: Buffer | string): Promise<void> {
    const url = new URL(`${ADMIN_PREFIX}${path}`, base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const headers = await signAdminRequest(url, method, this.#o.credentials, this.#o.region ?? 'us-east-1', new Date(), body);
    let res: Response;
    try {
      const dispatcher = url.protocol === 'https:' && this.#o.ca !== undefined ? agentFor(this.#o.ca) : undefined;
      res = await fetch(url, {
        method,
        headers,
        ...(body.length > 0 ? { body } : {}),
        signal: AbortSignal.timeout(this.#o.timeoutMs ?? 10_000),
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (err) {
      throw new AdminError(0, 'Unreachable', `${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return;
    throw adminErrorOf(res.status, text);
  }

  putPolicy(name: string, document: string): Promise<void> {
    return this.#call('PUT', '/add-canned-policy', { name }, document);
  }

  removePolicy(name: string): Promise<void> {
    return this.#call('DELETE', '/remove-canned-policy', { name });
  }

  async addUser(accessKey: string, secretKey: string): Promise<void> {
    const body = await encryptData(this.#o.credentials.secretKey, Buffer.from(JSON.stringify({ secretKey, status: 'enabled' })));
    await this.#call('PUT', '/add-user', { accessKey }, body);
  }

  removeUser(accessKey: string): Promise<void> {
    return this.#call('DELETE', '/remove-user', { accessKey });
  }

  setUserPolicies(accessKey: string, policies: readonly string[]): Promise<void> {
    return this.#call('PUT', '/set-user-or-group-policy', { userOrGroup: accessKey, isGroup: 'false', policyName: policies.join(',') });
  }
}

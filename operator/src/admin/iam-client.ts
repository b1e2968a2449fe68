/**
 * The admin API's identity routes, as the operator uses them to keep the
 * users and policies a SvcCluster declares (`spec.iam`): madmin's paths and
 * bodies, the new user's secret encrypted with the operator's own secret
 * key (`node/src/iam/madmin-crypto.ts`, the same code the server and the
 * `svc` client use). Tries the endpoints in order on transport failures.
 */
import { getCACertificates } from 'node:tls';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { Agent, fetch, type Response } from 'undici';
import { encryptData } from '../../../node/src/iam/madmin-crypto.ts';
import type { Credentials } from './client.ts';
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

const PREFIX = '/svc/admin/v3';

export class IamAdminClient implements IdentityApi {
  readonly #o: IamAdminClientOptions;
  readonly #agent: Agent | undefined;

  constructor(o: IamAdminClientOptions) {
    if (o.endpoints.length === 0) throw new Error('identity client needs at least one endpoint');
    this.#o = o;
    this.#agent = o.ca === undefined ? undefined : new Agent({ connect: { ca: [...getCACertificates('default'), o.ca], allowPartialTrustChain: true } });
  }

  async #call(method: 'PUT' | 'DELETE', path: string, query: Record<string, string>, body: Buffer | string = ''): Promise<void> {
    let last: unknown;
    for (const base of this.#o.endpoints) {
      try {
        await this.#one(base, method, path, query, body);
        return;
      } catch (err) {
        last = err;
        if (err instanceof AdminError && err.code !== 'Unreachable' && err.status < 502) throw err;
      }
    }
    throw last;
  }

  async #one(base: string, method: string, path: string, query: Record<string, string>, body: Buffer | string): Promise<void> {
    const url = new URL(`${PREFIX}${path}`, base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const h = new Hash('sha256');
    h.update(body);
    const payloadHash = Buffer.from(await h.digest()).toString('hex');
    const signer = new SignatureV4({
      credentials: { accessKeyId: this.#o.credentials.accessKey, secretAccessKey: this.#o.credentials.secretKey },
      region: this.#o.region ?? 'us-east-1',
      service: 's3',
      sha256: Hash.bind(null, 'sha256'),
      uriEscapePath: false,
    });
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { host: url.host, 'x-amz-content-sha256': payloadHash },
      body,
    });
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: signed.headers as Record<string, string>,
        ...(body.length > 0 ? { body } : {}),
        signal: AbortSignal.timeout(this.#o.timeoutMs ?? 10_000),
        ...(url.protocol === 'https:' && this.#agent ? { dispatcher: this.#agent } : {}),
      });
    } catch (err) {
      throw new AdminError(0, 'Unreachable', `${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return;
    let code = `HTTP${res.status}`;
    let message = text.slice(0, 500);
    try {
      const j = JSON.parse(text) as { Code?: string; Message?: string };
      code = j.Code ?? code;
      message = j.Message ?? message;
    } catch {
      // not JSON: keep the raw text
    }
    throw new AdminError(res.status, code, message);
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

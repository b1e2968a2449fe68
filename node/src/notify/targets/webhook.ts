/**
 * Webhook target: each event is one HTTP(S) POST of MinIO's body
 * (`{"EventName","Key","Records"}`, `application/json`) to the endpoint, with
 * `Authorization` when a token is set (`Bearer <token>` unless the token
 * already names its scheme). Any 2xx answer is delivery; anything else,
 * or no answer within the timeout, is a failure the delivery loop retries.
 * https endpoints are verified against the node's CA set (its certificate
 * directory's `CAs/` plus the system roots), host names included.
 */
import { Agent, request } from 'undici';
import { type ClientTrust, tlsConnector } from '../../tls/trust.ts';
import { type Target, type TargetMessage, targetBody } from './target.ts';

export interface WebhookOptions {
  id: string;
  endpoint: string;
  authToken?: string;
  trust: ClientTrust;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** Type name in ARNs (`webhook`; the audit target uses its own). */
  type?: string;
}

export class WebhookTarget implements Target {
  readonly id: string;
  readonly type: string;
  readonly key: string;
  readonly #url: URL;
  readonly #auth: string | undefined;
  readonly #agent: Agent;
  readonly #timeout: number;

  constructor(o: WebhookOptions) {
    this.id = o.id;
    this.type = o.type ?? 'webhook';
    this.key = `${o.id}:${this.type}`;
    this.#url = new URL(o.endpoint);
    if (this.#url.protocol !== 'http:' && this.#url.protocol !== 'https:') throw new Error(`webhook endpoint must be http or https: ${o.endpoint}`);
    const token = o.authToken?.trim();
    this.#auth = token ? (/^\S+\s+\S/.test(token) ? token : `Bearer ${token}`) : undefined;
    this.#timeout = o.timeoutMs ?? 10_000;
    this.#agent = new Agent({ connect: tlsConnector(o.trust, { timeout: this.#timeout }), keepAliveTimeout: 4_000 });
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#post(targetBody(m));
  }

  /** Posts a raw JSON body (the audit log uses it). */
  async post(body: string): Promise<void> {
    await this.#post(body);
  }

  async #post(body: string): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.#auth) headers.authorization = this.#auth;
    const res = await request(this.#url, {
      method: 'POST',
      body,
      headers,
      dispatcher: this.#agent,
      headersTimeout: this.#timeout,
      bodyTimeout: this.#timeout,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`webhook ${this.#url.origin} answered ${res.statusCode}${text ? `: ${text.slice(0, 200)}` : ''}`);
  }

  async ping(): Promise<void> {
    // Any HTTP answer means the endpoint is up (MinIO's webhook check is a HEAD too).
    const res = await request(this.#url, { method: 'HEAD', dispatcher: this.#agent, headersTimeout: this.#timeout, bodyTimeout: this.#timeout });
    await res.body.dump();
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

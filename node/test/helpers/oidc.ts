/**
 * A running OpenID Connect provider (npm `oidc-provider`) issuing
 * client-credentials JWT access tokens for the STS tests: the audience is
 * the client, `policy` is the policy the test names for that client, and
 * `preferred_username` is `<client>-user`. Over plain HTTP, or HTTPS with a
 * certificate pair.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from '../svc-process.ts';

export interface TestOidc {
  readonly issuer: string;
  /** A token for `client` (its secret is `<client>-secret`), fetched with `fetchImpl` (default: the global fetch). */
  token(client: string, fetchImpl?: typeof fetch): Promise<string>;
  close(): Promise<void>;
}

/** `policies`: client id → the policy claim of its tokens ('' for none). */
export async function startClientCredentialsProvider(policies: Readonly<Record<string, string>>, tls?: { certFile: string; keyFile: string }): Promise<TestOidc> {
  const port = await freePort();
  const issuer = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: Object.keys(policies).map((id) => ({ client_id: id, client_secret: `${id}-secret`, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:svc',
        useGrantedResource: () => true,
        // the token's audience is the client it was issued to
        getResourceServerInfo: (_ctx, _resource, client) => ({ scope: 'openid', audience: client.clientId, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    extraTokenClaims: (ctx) => ({ policy: policies[ctx.oidc.client?.clientId ?? ''] ?? '', preferred_username: `${ctx.oidc.client?.clientId ?? 'x'}-user` }),
  });
  const server: Server = tls ? createHttpsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, provider.callback()) : provider.listen(port);
  if (tls) server.listen(port, '127.0.0.1');
  await new Promise<void>((r) => (server.listening ? r() : server.once('listening', () => r())));
  return {
    issuer,
    async token(client, fetchImpl = fetch) {
      const r = await fetchImpl(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client}:${client}-secret`).toString('base64')}` },
        body: 'grant_type=client_credentials&scope=openid',
      });
      const j = (await r.json()) as { access_token?: string };
      if (!j.access_token) throw new Error(`no token from the provider: ${JSON.stringify(j)}`);
      return j.access_token;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

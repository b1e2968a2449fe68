/**
 * The request handler test S3 clients use.
 *
 * The SDK's own agents keep connections alive but carry no socket timeout,
 * and Node's agent applies a server's `Keep-Alive: timeout=N` hint only when
 * the agent has a timeout of its own. Such a client keeps an idle connection
 * past the moment the server closes it (svc: 5 s plus Node's 1 s buffer); a
 * request written into that moment meets a reset (ECONNRESET, which the SDK
 * renames `TimeoutError`). Real applications retry it (the SDK's default is
 * three attempts); tests run with `maxAttempts: 1` so that every server error
 * shows, and a reset would read as one. With a timeout on the agent, Node
 * retires idle connections a second before the server's announced timeout.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { NodeHttpHandler, type NodeHttpHandlerOptions } from '@smithy/node-http-handler';

/** Long enough never to end a request; its presence makes Node honour the server's hint. */
const SOCKET_TIMEOUT_MS = 10 * 60_000;

/**
 * `agent`: more options for both agents (an https endpoint's `ca`, a `lookup`);
 * the rest goes to the handler as it is (connection and request timeouts).
 */
export function keepAliveHandler(opts: { agent?: HttpsAgentOptions } & Omit<NodeHttpHandlerOptions, 'httpAgent' | 'httpsAgent'> = {}): NodeHttpHandler {
  const { agent, ...handler } = opts;
  return new NodeHttpHandler({ ...handler, httpAgent: new HttpAgent(agentOptions(agent)), httpsAgent: keepAliveHttpsAgent(agent) });
}

/** A `lookup` for the agents that resolves every host name to `address` (virtual-host and pod DNS names in tests). */
export function resolveAllTo(address: () => string): NonNullable<HttpsAgentOptions['lookup']> {
  return (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: address(), family: 4 }]);
    else (cb as (e: null, a: string, f: number) => void)(null, address(), 4);
  };
}

/** The same https agent for other clients (minio-js's `transportAgent`). */
export function keepAliveHttpsAgent(agent: HttpsAgentOptions = {}): HttpsAgent {
  return new HttpsAgent(agentOptions(agent));
}

const agentOptions = (agent: HttpsAgentOptions = {}): HttpsAgentOptions => ({ keepAlive: true, maxSockets: 50, timeout: SOCKET_TIMEOUT_MS, ...agent });

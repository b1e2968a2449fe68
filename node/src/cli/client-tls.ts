/**
 * TLS for the `svc` command's clients (admin client, `svc ping`/`svc ready`):
 * https:// servers are verified against Node's default roots plus the
 * certificate directory's `CAs/` (and a self-signed `public.crt` copied
 * there): `SVC_CERTS_DIR`, else `~/.svc/certs`, the same layout the server
 * reads (docs/tls.md). `--insecure` (or `SVC_INSECURE=true`) skips
 * verification, with a warning on stderr.
 */
import { join } from 'node:path';
import { Agent } from 'undici';
import { DEFAULT_CERTS_SUBDIR } from '../util/config.ts';
import { loadClientTrust, tlsFailureReason } from '../tls/trust.ts';

export interface ClientTlsOptions {
  /** Where the trusted CAs live (undefined without a home directory). */
  readonly certsDir: string | undefined;
  readonly insecure: boolean;
}

export const INSECURE_WARNING = 'svc: warning: --insecure: TLS certificates are not verified; whoever answers for the server can read and change what is sent';

/** The client's TLS settings from the environment and the `--insecure` flag. */
export function clientTls(env: NodeJS.ProcessEnv, insecureFlag = false): ClientTlsOptions {
  const dir = env['SVC_CERTS_DIR'] || (env['HOME'] ? join(env['HOME'], DEFAULT_CERTS_SUBDIR) : undefined);
  const insecure = insecureFlag || /^(1|true|yes|on)$/i.test(env['SVC_INSECURE'] ?? '');
  return { certsDir: dir, insecure };
}

const agents = new Map<string, Promise<Agent>>();

/** An undici dispatcher verifying https servers as `o` says (one per settings, per process). */
export function tlsDispatcher(o: ClientTlsOptions): Promise<Agent> {
  const key = `${o.insecure}\0${o.certsDir ?? ''}`;
  let a = agents.get(key);
  if (a === undefined) {
    a = loadClientTrust(o.certsDir, o.insecure).then((trust) => new Agent({ connect: trust.connectOptions() }));
    agents.set(key, a);
  }
  return a;
}

/** What to tell a user whose connection failed on the server's certificate; undefined for other failures. */
export function certificateAdvice(err: unknown, o: ClientTlsOptions): { problem: string; next: string } | undefined {
  const reason = tlsFailureReason(err);
  if (reason === undefined) return undefined;
  const where = o.certsDir === undefined ? 'SVC_CERTS_DIR/CAs/' : `${join(o.certsDir, 'CAs')}/`;
  return {
    problem: `the server's TLS certificate was refused (${reason})`,
    next: `put the CA certificate that signed it in ${where} (SVC_CERTS_DIR sets the directory); --insecure skips verification`,
  };
}

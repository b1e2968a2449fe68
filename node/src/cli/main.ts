/**
 * The `svc` command line. Subcommands:
 *   svc server <volume-args...>   run a node (bare `svc` = `svc server` with SVC_VOLUMES)
 *   svc local [dir]               four-drive server on <dir>/d1..d4 (created), for trying svc out
 *   svc ping [alias|url], svc ready [alias|url]   liveness / readiness probes
 *   svc alias, pool, decommission, rebalance (expand), heal, admin   the admin client
 *     (`admin/commands.ts`; exit codes 0 ok, 1 refused, 2 usage, 3 unreachable)
 * The server modules are loaded only for `svc server` / `svc local`, so the
 * client commands start fast.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CONFIG_VARIABLES } from '../util/config.ts';
import { clientTls, INSECURE_WARNING } from './client-tls.ts';
import { EXIT_USAGE } from './exit.ts';
import { runProbe } from './probe-commands.ts';

export function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function variablesHelp(): string {
  const width = Math.max(...CONFIG_VARIABLES.map(([n]) => n.length));
  return `\nEnvironment variables:\n${CONFIG_VARIABLES.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`).join('\n')}\n`;
}

const CLIENT_TLS_HELP = `
TLS (client commands):
  https:// servers are verified against the system's CAs plus the
  certificates in ~/.svc/certs/CAs/ (SVC_CERTS_DIR/CAs/), host name included.
  --insecure (or SVC_INSECURE=true) skips verification.
`;

const VOLUME_HELP = `
Volume arguments:
  Each argument is one pool. Ranges {a...b} expand in host and path, numeric
  ({1...16}, zero padded {01...16}) or alphabetic ({a...d}); the last range
  is the outer loop. With several arguments every one needs a range. A pool
  needs at least two distinct drives; a single local path is the only
  single-drive layout. Drive folders must exist (they are never created).

Examples:
  svc server /mnt/disk{1...4}
  svc server http://node{1...4}:9000/mnt/disk{1...4}
  svc server --certs-dir /etc/svc/certs https://node{1...4}:9000/mnt/disk{1...4}
  svc server /mnt/pool1/d{1...8} /mnt/pool2/d{1...8}
`;

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let code = 0;
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const program = new Command('svc')
    .description('svc: an S3-compatible, erasure-coded object store')
    .version(version(), '-v, --version')
    .exitOverride()
    // A mistyped option or command names the way to the usage (every command below inherits this).
    .showHelpAfterError("(add --help for the command's usage)")
    .option('--insecure', 'client commands: do not verify the server\'s TLS certificate (env SVC_INSECURE=true); prints a warning')
    .addHelpText('after', `\nWith no command, svc runs \`svc server\` with the volumes in SVC_VOLUMES.\n${CLIENT_TLS_HELP}${variablesHelp()}`);
  // Client commands verify https servers against ~/.svc/certs/CAs (SVC_CERTS_DIR); --insecure turns that off, loudly.
  let warned = false;
  const tls = () => {
    const t = clientTls(env, program.opts<{ insecure?: boolean }>().insecure === true);
    if (t.insecure && !warned) {
      warned = true;
      process.stderr.write(`${INSECURE_WARNING}\n`);
    }
    return t;
  };

  const serverOpts = (cmd: Command) =>
    cmd
      .option('--address <host:port>', 'S3 API, admin API, internode RPC and health probes (env SVC_ADDRESS, default :9000)')
      .option('--console-address <host:port>', 'web console listener (env SVC_CONSOLE_ADDRESS, default :9001)')
      .option('--certs-dir <dir>', 'TLS certificate directory: public.crt + private.key turn on TLS for both listeners (env SVC_CERTS_DIR, default ~/.svc/certs)');

  serverOpts(
    program
      .command('server')
      .description('run a storage node')
      .argument('[volumes...]', 'volume expressions, one per pool (default: SVC_VOLUMES)')
      .addHelpText('after', `${VOLUME_HELP}${variablesHelp()}`),
  ).action(async (volumes: string[], o: { address?: string; consoleAddress?: string; certsDir?: string }) => {
    const { runServer } = await import('./server-command.ts');
    code = await runServer({ args: volumes, address: o.address, consoleAddress: o.consoleAddress, certsDir: o.certsDir, env, version: version() });
  });

  serverOpts(
    program
      .command('local')
      .description('try svc: create <dir>/d1..d4 and run `svc server <dir>/d{1...4}`')
      .argument('[dir]', 'base folder', './data'),
  ).action(async (dir: string, o: { address?: string; consoleAddress?: string; certsDir?: string }) => {
    const { runLocal } = await import('./server-command.ts');
    code = await runLocal(dir, { address: o.address, consoleAddress: o.consoleAddress, certsDir: o.certsDir, env, version: version() });
  });

  program
    .command('ping')
    .description('liveness: GET /health on a server')
    .argument('[target]', 'server URL (e.g. http://127.0.0.1:9000) or alias; default SVC_ENDPOINT')
    .action(async (target: string | undefined) => {
      code = await runProbe(target, 'ping', out, env, tls());
    });

  program
    .command('ready')
    .description('readiness: GET /health/ready on a server and print the JSON')
    .argument('[target]', 'server URL (e.g. http://127.0.0.1:9000) or alias; default SVC_ENDPOINT')
    .action(async (target: string | undefined) => {
      code = await runProbe(target, 'ready', out, env, tls());
    });

  const args = argv.length === 0 ? ['server'] : [...argv];
  // A storage node runs no client command: the client groups (and their table and terminal
  // libraries) are loaded for every other command line only, not into `svc server`'s memory.
  const command = args.find((a) => !a.startsWith('-'));
  if (command !== 'server' && command !== 'local') {
    const { registerAdminCommands } = await import('./admin/commands.ts');
    registerAdminCommands(program, {
      env,
      out: process.stdout,
      err: process.stderr,
      setCode: (c) => {
        code = c;
      },
      tls,
    });
  }
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    // Help and version exit 0; any other command-line problem is a usage error.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    throw err;
  }
  return code;
}

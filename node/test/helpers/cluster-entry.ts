/**
 * Multi-node `svc server` for the cluster tests, composed from the production
 * modules exactly as `cli/server-command.ts` should compose them once it wires
 * the cluster in (see `cluster/cluster-node.ts`): configuration → logger →
 * `createClusterNode` → `startServer` with the cluster's locality, RPC
 * handlers and format IO → object layer over local + remote drives with the
 * distributed namespace locker → S3 handler. Argument and environment
 * handling is `svc server`'s (`loadConfig`).
 *
 * When the CLI carries this wiring, the harness (`cluster.ts`) runs
 * `node/bin/svc.js` instead and this file goes away.
 */
import { readFileSync } from 'node:fs';
import { createS3Handler } from '../../src/api/s3/index.ts';
import { createClusterNode } from '../../src/cluster/cluster-node.ts';
import { createObjectLayer } from '../../src/object/index.ts';
import { startServer } from '../../src/server/start-server.ts';
import { systemClock } from '../../src/util/clock.ts';
import { loadConfig } from '../../src/util/config.ts';
import { toSvcError } from '../../src/util/errors.ts';
import { createLogger } from '../../src/util/logger.ts';

const args = process.argv.slice(2);
if (args[0] === 'server') args.shift();
const { config, warnings } = loadConfig({ args, env: process.env, cwd: process.cwd(), readFile: (p) => readFileSync(p, 'utf8') });
const log = createLogger(config.obs.loggerLevel);
for (const w of warnings) log.warn({ event: w.event, variable: w.variable }, w.message);

const cluster = await createClusterNode({ config, clock: systemClock, logger: log });
let exitCode = 0;
const server = await startServer(config, {
  logger: log,
  clock: systemClock,
  ...cluster.serverDeps,
  onFatal: (e) => {
    process.stderr.write(`ERROR: ${e.code}: ${e.message}\n`);
    exitCode = 1;
    void shutdown();
  },
  buildServices: async (ctx) => {
    const layer = await createObjectLayer({
      deploymentId: ctx.deploymentId,
      pools: cluster.poolSpecs(ctx.formats),
      listQuorum: config.listObjectsQuorum,
      ...(config.storageClass.inlineBlock !== undefined ? { inlineBlock: config.storageClass.inlineBlock } : {}),
      locker: cluster.namespaceLocker,
      logger: log,
      clock: systemClock,
    });
    const s3 = createS3Handler({
      objectLayer: layer,
      credentials: [{ accessKey: config.credentials.accessKey, secretKey: config.credentials.secretKey }],
      logger: log,
      clock: systemClock,
    });
    return { handlers: { s3 }, close: () => layer.close() };
  },
}).catch((err: unknown) => {
  const e = toSvcError(err);
  log.error({ event: 'startup_failed', code: e.code, err: e.message }, e.message);
  process.stderr.write(`ERROR: ${e.code}: ${e.message}\n`);
  process.exit(1);
});
cluster.attachReadiness(server.readiness);

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  await server.close(2_000);
  await cluster.close();
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());

/**
 * A process that takes a distributed write lock on the lockers of a running
 * cluster and holds it (refreshing) until it is killed. The cluster tests kill
 * it with SIGKILL to show that a dead holder's lock expires on the lockers.
 *
 * Environment: SVC_TEST_PEERS (space-separated origins), SVC_TEST_SECRET
 * (`access:secret`), SVC_TEST_RESOURCE, SVC_TEST_OWNER, SVC_TEST_NODE_ID
 * (the node its calls claim to come from: lockers serve cluster members only).
 */
import { DistLocker } from '../../src/cluster/dist-lock.ts';
import { RemoteLocker } from '../../src/cluster/remote-locker.ts';
import { RpcAuth } from '../../src/cluster/rpc-auth.ts';
import { PeerClient } from '../../src/cluster/rpc-client.ts';
import { systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';

const origins = (process.env['SVC_TEST_PEERS'] ?? '').split(' ').filter(Boolean);
const owner = process.env['SVC_TEST_OWNER'] ?? 'lock-holder';
const nodeId = process.env['SVC_TEST_NODE_ID'] ?? owner;
const auth = new RpcAuth(process.env['SVC_TEST_SECRET'] ?? '', systemClock);
const lockers = origins.map((origin) => new RemoteLocker(new PeerClient({ origin, nodeId, auth, clock: systemClock, logger: silentLogger })));
const locker = new DistLocker({ lockers, owner, clock: systemClock, logger: silentLogger });
const held = await locker.acquire([process.env['SVC_TEST_RESOURCE'] ?? ''], { write: true, timeoutMs: 10_000 });
process.stdout.write(`LOCKED ${held.uid}\n`);
// Hold until killed; the refresh timer is unref'd, so keep the process alive.
setInterval(() => undefined, 60_000);

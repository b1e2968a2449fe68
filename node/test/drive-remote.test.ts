import { once } from 'node:events';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { driveRpcService } from '../src/cluster/drive-rpc-service.ts';
import { RemoteDrive } from '../src/cluster/remote-drive.ts';
import { RpcAuth } from '../src/cluster/rpc-auth.ts';
import { PeerClient } from '../src/cluster/rpc-client.ts';
import { RpcServer } from '../src/cluster/rpc-server.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { runDriveConformance } from './drive-conformance.ts';

// A real RPC server on 127.0.0.1:0 serving a LocalDrive; the suite talks to
// it only through RemoteDrive.
runDriveConformance('RemoteDrive over internode RPC', async () => {
  const root = await mkdtemp(join(tmpdir(), 'svc-drive-remote-'));
  const local = new LocalDrive(root);
  await local.init();
  const auth = new RpcAuth('conformance:secret', systemClock);
  const rpc = new RpcServer({ auth, logger: silentLogger });
  rpc.registerDrive('/data/d1', driveRpcService(local));
  const server = createServer(rpc.handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const peer = new PeerClient({ origin, nodeId: 'conformance-client', auth, clock: systemClock, logger: silentLogger });
  const drive = new RemoteDrive(peer, '/data/d1', `${origin}/data/d1`);
  return {
    drive,
    cleanup: async () => {
      await peer.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await local.flush();
      await rm(root, { recursive: true, force: true });
    },
  };
});

describe('RemoteDrive online state', () => {
  it('follows the remote drive: missing root → offline, back → online; peer still online', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'svc-drive-remote-state-'));
    const root = join(parent, 'd1');
    await mkdir(root);
    const local = new LocalDrive(root);
    await local.init();
    const auth = new RpcAuth('conformance:secret', systemClock);
    const rpc = new RpcServer({ auth, logger: silentLogger });
    rpc.registerDrive('/data/d1', driveRpcService(local));
    const server = createServer(rpc.handle);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const peer = new PeerClient({ origin, nodeId: 'state-client', auth, clock: systemClock, logger: silentLogger });
    const drive = new RemoteDrive(peer, '/data/d1', `${origin}/data/d1`);
    try {
      await drive.makeVol('bkt');
      expect(drive.isOnline()).toBe(true);
      await rename(root, `${root}.gone`);
      await expect(drive.statVol('bkt')).rejects.toMatchObject({ code: 'DiskNotFound' });
      expect(drive.isOnline()).toBe(false);
      expect(peer.isOnline()).toBe(true);
      await rename(`${root}.gone`, root);
      expect((await drive.statVol('bkt')).name).toBe('bkt');
      expect(drive.isOnline()).toBe(true);
    } finally {
      await peer.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(parent, { recursive: true, force: true });
    }
  });
});

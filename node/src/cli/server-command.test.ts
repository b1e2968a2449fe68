import { describe, expect, it } from 'vitest';
import { readyBanner } from './server-command.ts';

const v4 = (address: string, port: number) => ({ address, family: 'IPv4', port });
const v6 = (address: string, port: number) => ({ address, family: 'IPv6', port });

describe('the ready banner at a terminal', () => {
  it('names S3, the console, the default root user and the client command that connects', () => {
    const text = readyBanner({
      version: '1.2.3',
      cli: 'npx svc',
      scheme: 'http',
      address: v6('::', 9000),
      console: v4('0.0.0.0', 9001),
      credentials: { accessKey: 'svcadmin', secretKey: 'svcadmin', isDefault: true },
    });
    expect(text.split('\n')).toEqual([
      'svc 1.2.3 is ready.',
      '  S3 API    http://localhost:9000',
      '  Console   http://localhost:9001',
      '  Root user svcadmin / svcadmin (the default: set SVC_ACCESS_KEY and SVC_SECRET_KEY for anything but a try-out)',
      '  Client    npx svc alias set local http://localhost:9000 svcadmin svcadmin',
    ]);
  });

  it('never prints a secret of the operator’s own; a bound address as typed; no console line without a console', () => {
    const text = readyBanner({
      version: '1.2.3',
      cli: 'svc',
      scheme: 'https',
      address: v6('fd00::7', 9443),
      console: undefined,
      credentials: { accessKey: 'ops', secretKey: 'not-for-the-terminal', isDefault: false },
    });
    expect(text).not.toContain('not-for-the-terminal');
    expect(text.split('\n')).toEqual([
      'svc 1.2.3 is ready.',
      '  S3 API    https://[fd00::7]:9443',
      '  Root user ops',
      '  Client    svc alias set local https://[fd00::7]:9443 ops "$SVC_SECRET_KEY"',
    ]);
  });
});

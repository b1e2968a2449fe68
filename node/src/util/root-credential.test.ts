import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { silentLogger } from './logger.ts';
import { ROOT_CREDENTIAL_RELOAD_MS, rootCredentialSource, staticRootCredential } from './root-credential.ts';

/** Key files in memory; `reads` counts every read. */
function files(initial: Record<string, string>) {
  const fs = { ...initial };
  let reads = 0;
  return {
    fs,
    get reads() {
      return reads;
    },
    readFile: async (p: string) => {
      reads++;
      const v = fs[p];
      if (v === undefined) throw new Error(`ENOENT: ${p}`);
      return v;
    },
  };
}

const FILES = { accessKey: '/run/secrets/svc/accessKey', secretKey: '/run/secrets/svc/secretKey' };
const creds = (accessKey: string, secretKey: string) => ({ accessKey, secretKey, isDefault: false, files: FILES });

describe('root credential source', () => {
  it('values given directly never change and nothing is read', async () => {
    const clock = new ManualClock(1_000);
    const f = files({});
    const src = rootCredentialSource({ accessKey: 'a', secretKey: 's', isDefault: false }, { clock, logger: silentLogger, readFile: f.readFile });
    await clock.advance(10 * ROOT_CREDENTIAL_RELOAD_MS);
    expect(f.reads).toBe(0);
    expect(src.current()).toEqual({ accessKey: 'a', secretKey: 's' });
    expect(src.lookup('a')?.secretKey).toBe('s');
    expect(src.lookup('b')).toBeUndefined();
  });

  it('a changed key pair replaces the credential on the next tick; the previous one is kept for the grace period only', async () => {
    const clock = new ManualClock(1_000);
    const f = files({ [FILES.accessKey]: 'old-ak\n', [FILES.secretKey]: 'old-sk\n' });
    const src = rootCredentialSource(creds('old-ak', 'old-sk'), { clock, logger: silentLogger, readFile: f.readFile, graceMs: 60_000 });
    const seen: string[] = [];
    src.onChange((c) => seen.push(c.accessKey));
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.previous()).toBeUndefined();
    expect(seen).toEqual([]);

    f.fs[FILES.accessKey] = 'new-ak\n';
    f.fs[FILES.secretKey] = 'new-sk';
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'new-ak', secretKey: 'new-sk' });
    expect(seen).toEqual(['new-ak']);
    // Requests: only the new pair. Internode tokens: the previous one too, for the grace period.
    expect(src.lookup('old-ak')).toBeUndefined();
    expect(src.lookup('new-ak')?.secretKey).toBe('new-sk');
    expect(src.previous()).toEqual({ accessKey: 'old-ak', secretKey: 'old-sk' });
    await clock.advance(60_000);
    expect(src.previous()).toBeUndefined();
    src.close();
  });

  it('an unreadable or empty file keeps the current credential, and a later good read switches', async () => {
    const clock = new ManualClock(1_000);
    const f = files({ [FILES.accessKey]: 'ak', [FILES.secretKey]: 'sk' });
    const src = rootCredentialSource(creds('ak', 'sk'), { clock, logger: silentLogger, readFile: f.readFile });
    f.fs[FILES.secretKey] = '\n';
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'ak', secretKey: 'sk' });
    delete f.fs[FILES.accessKey];
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'ak', secretKey: 'sk' });
    f.fs[FILES.accessKey] = 'ak2';
    f.fs[FILES.secretKey] = 'sk2';
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'ak2', secretKey: 'sk2' });
    src.close();
  });

  it('a pair caught mid-swap (the access key changes between reads) is not taken', async () => {
    const clock = new ManualClock(1_000);
    const f = files({ [FILES.accessKey]: 'ak', [FILES.secretKey]: 'sk' });
    // The swap lands between the secret-key read and the second access-key read.
    const readFile = async (p: string) => {
      const v = await f.readFile(p);
      if (p === FILES.secretKey && f.fs[FILES.accessKey] === 'ak') {
        f.fs[FILES.accessKey] = 'ak2';
        f.fs[FILES.secretKey] = 'sk2';
      }
      return v;
    };
    const src = rootCredentialSource(creds('ak', 'sk'), { clock, logger: silentLogger, readFile });
    f.fs[FILES.secretKey] = 'sk-torn';
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    // Not ak/sk-torn nor ak/sk2: the read saw the swap and kept the current pair.
    expect(src.current()).toEqual({ accessKey: 'ak', secretKey: 'sk' });
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'ak2', secretKey: 'sk2' });
    src.close();
  });

  it('only the secret key from a file: the access key stays the configured value', async () => {
    const clock = new ManualClock(1_000);
    const f = files({ '/s': 'sk' });
    const src = rootCredentialSource({ accessKey: 'ak', secretKey: 'sk', isDefault: false, files: { secretKey: '/s' } }, { clock, logger: silentLogger, readFile: f.readFile });
    f.fs['/s'] = 'sk2';
    await clock.advance(ROOT_CREDENTIAL_RELOAD_MS);
    expect(src.current()).toEqual({ accessKey: 'ak', secretKey: 'sk2' });
    src.close();
  });

  it('a static source answers the same forever', () => {
    const src = staticRootCredential({ accessKey: 'a', secretKey: 's' });
    expect(src.current()).toEqual({ accessKey: 'a', secretKey: 's' });
    expect(src.previous()).toBeUndefined();
    expect(src.lookup('a')).toEqual({ accessKey: 'a', secretKey: 's' });
  });
});

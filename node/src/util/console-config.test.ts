import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { normalizePathPrefix, parseConsoleConfig } from './console-config.ts';

describe('console config', () => {
  it('defaults', () => {
    expect(parseConsoleConfig({})).toEqual({ basePath: '', sessionIdleMs: 30 * 60_000, sessionMaxMs: 12 * 3_600_000, serverUrl: undefined, capacityAlert: 0.8 });
    const { config } = loadConfig({ args: ['/x/d{1...4}'], env: { SVC_CONSOLE_BASE_PATH: '/storage/' }, cwd: '/', readFile: () => '' });
    expect(config.console.basePath).toBe('/storage');
  });

  it('parses every variable', () => {
    expect(parseConsoleConfig({ SVC_CONSOLE_BASE_PATH: 'a/b/', SVC_CONSOLE_SESSION_TIMEOUT: '15m', SVC_CONSOLE_CAPACITY_ALERT: '90%', SVC_SERVER_URL: 'https://s3.example.com/' })).toEqual({
      basePath: '/a/b',
      sessionIdleMs: 15 * 60_000,
      sessionMaxMs: 12 * 3_600_000,
      serverUrl: 'https://s3.example.com',
      capacityAlert: 0.9,
    });
    expect(parseConsoleConfig({ SVC_CONSOLE_SESSION_TIMEOUT: '90' }).sessionIdleMs).toBe(90_000);
  });

  it('refuses what it cannot use, naming the variable', () => {
    const msg = (env: Record<string, string>) => {
      try {
        parseConsoleConfig(env);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(msg({ SVC_CONSOLE_BASE_PATH: '/a/../b' })).toMatch(/^SVC_CONSOLE_BASE_PATH: /);
    expect(msg({ SVC_CONSOLE_BASE_PATH: '/a;b' })).toMatch(/^SVC_CONSOLE_BASE_PATH: /);
    expect(msg({ SVC_CONSOLE_SESSION_TIMEOUT: '0' })).toMatch(/^SVC_CONSOLE_SESSION_TIMEOUT: /);
    expect(msg({ SVC_CONSOLE_SESSION_TIMEOUT: '13h' })).toMatch(/at most 12h/);
    expect(msg({ SVC_CONSOLE_CAPACITY_ALERT: '120' })).toMatch(/^SVC_CONSOLE_CAPACITY_ALERT: /);
    expect(msg({ SVC_SERVER_URL: 'ftp://x' })).toMatch(/^SVC_SERVER_URL: /);
    expect(msg({ SVC_SERVER_URL: 'https://x/s3' })).toMatch(/has a path/);
  });

  it('path prefixes', () => {
    expect(normalizePathPrefix('')).toBe('');
    expect(normalizePathPrefix('/')).toBe('');
    expect(normalizePathPrefix('/storage')).toBe('/storage');
    expect(normalizePathPrefix('storage//x')).toBeUndefined();
    expect(normalizePathPrefix('//evil.example')).toBeUndefined();
    expect(normalizePathPrefix('/a,b')).toBeUndefined();
  });
});

/** The identity store at start-up: stored documents load even when they name actions svc now refuses on write. */
import { describe, expect, it } from 'vitest';
import { emptyDoc, encodeDoc } from '../iam/state.ts';
import { ManualClock } from '../util/clock.ts';
import { createLogger } from '../util/logger.ts';
import { IAM_DOC_PATH, type IamRecords, IamService } from './iam-service.ts';

describe('IamService start-up', () => {
  it('a stored policy naming an unknown action (written before svc checked them) loads, resolves and is logged once', async () => {
    const typo = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:GetObjcet'], Resource: '*' }] });
    const doc = emptyDoc({ v: 'plain', s: Buffer.alloc(32, 7).toString('base64') }, 0);
    doc.policies['typo'] = { text: typo, createdAt: 0, updatedAt: 0 };
    doc.users['alice'] = { secret: { v: 'plain', s: 'alice-secret' }, status: 'enabled', policies: ['typo'], createdAt: 0, updatedAt: 0 };
    const stored = new Map([[IAM_DOC_PATH, encodeDoc(doc)]]);
    const records: IamRecords = { read: async (p) => stored.get(p), update: async () => undefined };
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    const iam = new IamService({ root: () => ({ accessKey: 'root', secretKey: 'root-secret' }), clock: new ManualClock(), logger });

    expect(await iam.load(records)).toMatch(/1 custom policies/);
    expect(iam.lookup('alice')?.principal.policies?.[0]?.unknownActions).toEqual(['s3:GetObjcet']);
    expect(lines.filter((l) => l.event === 'iam_policy_unknown_actions')).toEqual([
      expect.objectContaining({ level: 'warn', policy: 'typo', actions: ['s3:GetObjcet'], msg: expect.stringMatching(/^policy typo names actions no service has/) }),
    ]);
  });
});

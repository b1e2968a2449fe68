/**
 * The canned policies every deployment has (MinIO's names, so policies and
 * scripts written for `mc admin policy attach ... readwrite` read the same
 * here). They cannot be changed or removed; custom policies sit beside them.
 *
 * Decision: svc's `readonly` also allows listing (`s3:ListBucket`,
 * `s3:ListAllMyBuckets`, versions) and reading tags, so a read-only user
 * can browse; MinIO's allows only GetObject and GetBucketLocation, which
 * leaves `mc ls` failing for such a user.
 */
import { parseIdentityPolicy, type PolicyDocument } from './policy.ts';

const ALL = 'arn:aws:s3:::*';

const DOCS: Readonly<Record<string, object>> = {
  readwrite: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: [ALL] }] },
  readonly: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          's3:GetBucketLocation',
          's3:GetObject',
          's3:GetObjectVersion',
          's3:GetObjectTagging',
          's3:GetObjectVersionTagging',
          's3:GetBucketVersioning',
          's3:ListBucket',
          's3:ListBucketVersions',
          's3:ListAllMyBuckets',
        ],
        Resource: [ALL],
      },
    ],
  },
  writeonly: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: [ALL] }] },
  diagnostics: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['admin:ServerInfo', 'admin:ServerTrace', 'admin:Profiling', 'admin:ConsoleLog', 'admin:TopLocksInfo', 'admin:OBDInfo', 'admin:BandwidthMonitor', 'admin:Prometheus'],
        Resource: [ALL],
      },
    ],
  },
  consoleAdmin: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['admin:*', 'kms:*', 's3:*', 'sts:*'], Resource: [ALL] }] },
};

/** Canned policy names in display order. */
export const CANNED_POLICY_NAMES: readonly string[] = Object.keys(DOCS);

const parsed = new Map<string, { doc: PolicyDocument; text: string }>(
  Object.entries(DOCS).map(([name, d]) => {
    const text = JSON.stringify(d);
    return [name, { doc: parseIdentityPolicy(text), text }];
  }),
);

export function isCannedPolicy(name: string): boolean {
  return parsed.has(name);
}

/** The canned policy `name`, parsed, with its JSON text; undefined for other names. */
export function cannedPolicy(name: string): { doc: PolicyDocument; text: string } | undefined {
  return parsed.get(name);
}

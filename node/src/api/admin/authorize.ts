/**
 * Admin authorization: every route names the permission it needs (the
 * MinIO policy action names, so IAM policies written for them read the same
 * here) and an `AdminAuthorizer` decides per verified access key. Today the
 * only identity is the root credential, which holds every admin permission;
 * an IAM policy engine plugs in behind the same interface.
 */
export type AdminAction = 'admin:ServerInfo' | 'admin:Decommission' | 'admin:Rebalance' | 'admin:Heal';

export interface AdminAuthorizer {
  /** True when the identity behind `accessKey` may perform `action`. */
  allowed(accessKey: string, action: AdminAction): boolean;
}

/** The root credential holds every admin permission; no other identity exists yet. Its access key may change (rotation). */
export function rootAuthorizer(rootAccessKey: string | (() => string)): AdminAuthorizer {
  const current = typeof rootAccessKey === 'string' ? () => rootAccessKey : rootAccessKey;
  return { allowed: (accessKey) => accessKey === current() };
}

/**
 * The parsed shape of an AWS policy document (the policy language's data,
 * no behaviour): a leaf that principals, which carry their policies, and the
 * language itself (`policy.ts`: parsing, matching) both use.
 */
import type { ConditionBlock } from './conditions.ts';

export interface PrincipalSpec {
  /** `"*"` or `{"AWS": "*"}`: everyone, anonymous included. */
  any: boolean;
  ids: string[];
}

export interface Statement {
  sid?: string;
  effect: 'Allow' | 'Deny';
  principal?: PrincipalSpec;
  notPrincipal?: PrincipalSpec;
  action?: string[];
  notAction?: string[];
  resource?: string[];
  notResource?: string[];
  condition?: ConditionBlock;
}

export interface PolicyDocument {
  version: string;
  id?: string;
  statements: Statement[];
  /**
   * Only in a document read back from storage (`parsePolicy`'s `stored`):
   * action entries that name no action of their service (a policy stored
   * before svc checked action names). They match nothing.
   */
  unknownActions?: string[];
}

/**
 * Authentication by bearer token and RBAC authorization from the Roles,
 * ClusterRoles and bindings stored in the API server, as kube-apiserver's
 * RBAC authorizer decides: a request is allowed when a rule of a role bound
 * to the user (directly, through a group, or as a ServiceAccount) names its
 * verb, API group, resource (with `/subresource`) and, when the rule lists
 * any, the object's name. RoleBindings grant in their namespace only.
 * `system:masters` bypasses RBAC. Refusals are the API server's 403 text.
 *
 * Every allowed request of a user is recorded with the rule that allowed it,
 * so a test can list the grants a component never used.
 */
import { ApiError } from './errors.ts';
import type { Obj, ResourceType, Store } from './store.ts';

export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
}

export interface RequestAttributes {
  readonly verb: string;
  readonly apiGroup: string;
  /** Plural, with `/subresource` when there is one. */
  readonly resource: string;
  readonly name?: string | undefined;
  readonly namespace?: string | undefined;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** One grant: a verb on a resource of an API group, from one rule of one role. */
export interface Grant {
  readonly role: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly resourceNames?: readonly string[];
}

export const grantKey = (g: Pick<Grant, 'role' | 'verb' | 'apiGroup' | 'resource'>): string => `${g.role}: ${g.verb} ${g.resource}${g.apiGroup ? `.${g.apiGroup}` : ''}`;

export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return { name: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] };
}

export class Rbac {
  readonly #store: Store;
  /** Grants used, per user name (grantKey values). */
  readonly used = new Map<string, Set<string>>();
  /** Every refusal, as sent. */
  readonly denied: string[] = [];

  constructor(store: Store) {
    this.#store = store;
  }

  #type(plural: string): ResourceType {
    return this.#store.find('rbac.authorization.k8s.io', 'v1', plural)!;
  }

  #subjectMatches(b: Obj, user: UserInfo): boolean {
    const subjects = (b['subjects'] as { kind: string; name: string; namespace?: string }[] | undefined) ?? [];
    return subjects.some(
      (s) =>
        (s.kind === 'User' && s.name === user.name) ||
        (s.kind === 'Group' && user.groups.includes(s.name)) ||
        (s.kind === 'ServiceAccount' && `system:serviceaccount:${s.namespace ?? b.metadata.namespace}:${s.name}` === user.name),
    );
  }

  /** The rules that apply to `user` in `namespace` (cluster-wide rules always), with the role each came from. */
  rulesFor(user: UserInfo, namespace: string | undefined): { role: string; rule: Rule }[] {
    const out: { role: string; rule: Rule }[] = [];
    const roleRules = (ref: { kind: string; name: string }, ns: string | undefined) => {
      const t = this.#type(ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles');
      const role = this.#store.tryGet(t, ref.kind === 'ClusterRole' ? undefined : ns, ref.name);
      const label = ref.kind === 'ClusterRole' ? `ClusterRole/${ref.name}` : `Role/${ns}/${ref.name}`;
      for (const rule of ((role?.['rules'] as Rule[] | undefined) ?? [])) out.push({ role: label, rule });
    };
    for (const b of this.#store.list(this.#type('clusterrolebindings'))) {
      if (this.#subjectMatches(b, user)) roleRules(b['roleRef'] as { kind: string; name: string }, undefined);
    }
    if (namespace !== undefined) {
      for (const b of this.#store.list(this.#type('rolebindings'), namespace)) {
        if (this.#subjectMatches(b, user)) roleRules(b['roleRef'] as { kind: string; name: string }, namespace);
      }
    }
    return out;
  }

  /** Throws the API server's 403 unless RBAC allows the request. */
  authorize(user: UserInfo, a: RequestAttributes): void {
    if (user.groups.includes('system:masters')) return;
    for (const { role, rule } of this.rulesFor(user, a.namespace)) {
      const has = (list: string[] | undefined, v: string) => (list ?? []).includes(v) || (list ?? []).includes('*');
      if (!has(rule.verbs, a.verb) || !has(rule.apiGroups, a.apiGroup)) continue;
      const [res, sub] = a.resource.split('/');
      const resOk = has(rule.resources, a.resource) || (sub !== undefined && (rule.resources ?? []).includes(`*/${sub}`)) || (sub === undefined && (rule.resources ?? []).includes('*'));
      if (!resOk || res === undefined) continue;
      if (rule.resourceNames?.length && (a.name === undefined || !rule.resourceNames.includes(a.name))) continue;
      let set = this.used.get(user.name);
      if (!set) this.used.set(user.name, (set = new Set()));
      set.add(grantKey({ role, verb: a.verb, apiGroup: a.apiGroup, resource: a.resource }));
      return;
    }
    const what = a.name !== undefined ? `${a.resource.split('/')[0]}${a.apiGroup ? `.${a.apiGroup}` : ''} "${a.name}"` : `${a.resource.split('/')[0]}${a.apiGroup ? `.${a.apiGroup}` : ''}`;
    const scope = a.namespace !== undefined ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
    const message = `${what} is forbidden: User "${user.name}" cannot ${a.verb} resource "${a.resource}" in API group "${a.apiGroup}" ${scope}`;
    this.denied.push(message);
    throw new ApiError(403, 'Forbidden', message, { ...(a.name !== undefined ? { name: a.name } : {}), group: a.apiGroup, kind: a.resource.split('/')[0] });
  }

  /** Every grant the roles bound to `user` give (namespaced roles in `namespaces`), expanded per verb and resource. */
  grants(user: UserInfo, namespaces: readonly string[]): Grant[] {
    const out = new Map<string, Grant>();
    for (const ns of [undefined, ...namespaces]) {
      for (const { role, rule } of this.rulesFor(user, ns)) {
        for (const verb of rule.verbs ?? []) {
          for (const apiGroup of rule.apiGroups ?? []) {
            for (const resource of rule.resources ?? []) {
              const g: Grant = { role, verb, apiGroup, resource, ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}) };
              out.set(grantKey(g), g);
            }
          }
        }
      }
    }
    return [...out.values()];
  }
}

/**
 * Identity: users, groups, policies (an editor whose documents the server
 * validates) and access keys (with an expiry; the secret key is shown once,
 * right after creation). Each section appears only when the signed-in
 * identity's policies allow it; everyone sees their own access keys.
 */
import type { SessionInfo } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { badge, confirmDialog, errorBox, loading, pageHeader, section, table } from '../ui.js';

interface UserEntry {
  policyName: string;
  status: string;
  memberOf: string[];
}

interface GroupEntry {
  name: string;
  status: string;
  members: string[];
  policy: string;
}

interface AccessKeyEntry {
  accessKey: string;
  parentUser: string;
  accountStatus: string;
  expiration: string | null;
  name: string;
}

const may = (s: SessionInfo, action: string) => s.permissions[action] === true;

function field(id: string, label: string, input: HTMLElement, hint?: string): HTMLElement {
  return h('p', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('span', { class: 'hint' }, hint) : null);
}

export function renderIdentity(main: HTMLElement, session: SessionInfo): void {
  const result = h('div', { class: 'action-result', id: 'identity-result', role: 'status' });
  const say = (text: string) => {
    replaceContent(result, h('p', null, text));
    announce(text);
  };
  const fail = (err: unknown) => replaceContent(result, errorBox(err));
  const parts: HTMLElement[] = [];

  // ---- users
  if (may(session, 'admin:ListUsers')) {
    const list = h('div', { id: 'users-list' }, loading('the users'));
    const load = async () => {
      try {
        const users = await api<Record<string, UserEntry>>('GET', 'iam/users');
        const names = Object.keys(users);
        replaceContent(
          list,
          names.length === 0
            ? h('p', { class: 'muted' }, 'No users yet.')
            : table(
                'Users',
                ['User', 'Status', 'Policies', 'Groups', ''],
                names.map((n) => {
                  const u = users[n]!;
                  const enabled = u.status === 'enabled';
                  return [
                    n,
                    badge(enabled ? 'ok' : 'warn', u.status),
                    u.policyName || '–',
                    u.memberOf.join(', ') || '–',
                    h(
                      'span',
                      { class: 'row-actions' },
                      h('button', { type: 'button', class: 'button button-quiet', id: `user-status-${n}`, disabled: !may(session, enabled ? 'admin:DisableUser' : 'admin:EnableUser'), onclick: () => void setStatus(n, !enabled) }, enabled ? 'Disable' : 'Enable'),
                      h('button', { type: 'button', class: 'button button-quiet', id: `user-remove-${n}`, disabled: !may(session, 'admin:DeleteUser'), onclick: () => void removeUser(n) }, 'Remove…'),
                    ),
                  ];
                }),
                { id: 'users-table' },
              ),
        );
      } catch (err) {
        replaceContent(list, errorBox(err, () => void load()));
      }
    };
    const setStatus = async (user: string, enabled: boolean) => {
      try {
        await api('PUT', `iam/users/${encodeURIComponent(user)}/status`, { enabled });
        say(`User ${user} ${enabled ? 'enabled' : 'disabled'}.`);
        await load();
      } catch (err) {
        fail(err);
      }
    };
    const removeUser = async (user: string) => {
      if (!(await confirmDialog({ title: `Remove user ${user}?`, body: 'Its access keys go with it; its sessions stop working.', confirmLabel: 'Remove user', danger: true }))) return;
      try {
        await api('DELETE', `iam/users/${encodeURIComponent(user)}`);
        say(`User ${user} removed.`);
        await load();
      } catch (err) {
        fail(err);
      }
    };
    const ak = h('input', { id: 'new-user-name', type: 'text', required: true, autocomplete: 'off' });
    const sk = h('input', { id: 'new-user-secret', type: 'password', required: true, autocomplete: 'new-password', minlength: 8, maxlength: 40 });
    const add = h('form', { id: 'add-user', class: 'form form-inline' }, field('new-user-name', 'Access key (user name)', ak), field('new-user-secret', 'Secret key', sk, '8 to 40 characters'), h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'add-user-submit' }, 'Add user')));
    add.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void (async () => {
        try {
          await api('POST', 'iam/users', { accessKey: ak.value.trim(), secretKey: sk.value });
          say(`User ${ak.value.trim()} added.`);
          ak.value = '';
          sk.value = '';
          await load();
        } catch (err) {
          fail(err);
        }
      })();
    });
    parts.push(section('Users', 'users-title', may(session, 'admin:CreateUser') ? add : null, list));
    void load();
  }

  // ---- groups
  if (may(session, 'admin:ListGroups')) {
    const list = h('div', { id: 'groups-list' }, loading('the groups'));
    void (async () => {
      try {
        const groups = await api<GroupEntry[]>('GET', 'iam/groups');
        replaceContent(
          list,
          groups.length === 0
            ? h('p', { class: 'muted' }, 'No groups.')
            : table('Groups', ['Group', 'Status', 'Policies', 'Members'], groups.map((g) => [g.name, badge(g.status === 'enabled' ? 'ok' : 'warn', g.status), g.policy || '–', g.members.join(', ') || '–']), { id: 'groups-table' }),
        );
      } catch (err) {
        replaceContent(list, errorBox(err));
      }
    })();
    parts.push(section('Groups', 'groups-title', list));
  }

  // ---- policies
  if (may(session, 'admin:ListUserPolicies')) {
    const list = h('div', { id: 'policies-list' }, loading('the policies'));
    const name = h('input', { id: 'policy-name', type: 'text', required: true, autocomplete: 'off' });
    const doc = h('textarea', { id: 'policy-document', rows: 12, cols: 72, spellcheck: 'false', required: true });
    doc.value = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::bucket/*'] }] }, null, 2);
    const load = async () => {
      try {
        const policies = await api<Record<string, unknown>>('GET', 'iam/policies');
        replaceContent(
          list,
          table(
            'Policies',
            ['Policy', ''],
            Object.keys(policies).map((p) => [
              p,
              h('button', { type: 'button', class: 'button button-quiet', id: `policy-edit-${p}`, onclick: () => {
                name.value = p;
                doc.value = JSON.stringify(policies[p], null, 2);
                doc.focus();
              } }, 'Open in the editor'),
            ]),
            { id: 'policies-table' },
          ),
        );
      } catch (err) {
        replaceContent(list, errorBox(err, () => void load()));
      }
    };
    const editor = h(
      'form',
      { id: 'policy-editor', class: 'form' },
      field('policy-name', 'Name', name),
      field('policy-document', 'Policy document (JSON, Version 2012-10-17)', doc, 'Checked by the server when saved: a mistake is shown with what is wrong.'),
      h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'policy-save', disabled: !may(session, 'admin:CreatePolicy') }, 'Save policy')),
    );
    editor.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void (async () => {
        try {
          JSON.parse(doc.value);
        } catch (err) {
          fail(new Error(`The document is not JSON: ${(err as Error).message}`));
          return;
        }
        try {
          await api('PUT', `iam/policies/${encodeURIComponent(name.value.trim())}`, { document: doc.value });
          say(`Policy ${name.value.trim()} saved.`);
          await load();
        } catch (err) {
          fail(err);
        }
      })();
    });
    parts.push(section('Policies', 'policies-title', editor, list));
    void load();
  }

  // ---- access keys (everyone: their own)
  {
    const list = h('div', { id: 'keys-list' }, loading('your access keys'));
    const secretBox = h('div', { id: 'new-key', class: 'action-result' });
    const expiry = h('input', { id: 'key-expiry', type: 'datetime-local' });
    const policy = h('textarea', { id: 'key-policy', rows: 5, cols: 72, spellcheck: 'false' });
    const load = async () => {
      try {
        const r = await api<{ accounts: AccessKeyEntry[] }>('GET', 'iam/accesskeys');
        replaceContent(
          list,
          r.accounts.length === 0
            ? h('p', { class: 'muted' }, 'No access keys.')
            : table(
                'Access keys',
                ['Access key', 'Status', 'Expires', ''],
                r.accounts.map((k) => [
                  k.accessKey,
                  badge(k.accountStatus === 'on' ? 'ok' : 'warn', k.accountStatus === 'on' ? 'enabled' : 'disabled'),
                  k.expiration ?? 'never',
                  h('button', { type: 'button', class: 'button button-quiet', id: `key-remove-${k.accessKey}`, onclick: () => void removeKey(k.accessKey) }, 'Remove…'),
                ]),
                { id: 'keys-table' },
              ),
        );
      } catch (err) {
        replaceContent(list, errorBox(err, () => void load()));
      }
    };
    const removeKey = async (key: string) => {
      if (!(await confirmDialog({ title: `Remove access key ${key}?`, body: 'Its next request is refused.', confirmLabel: 'Remove access key', danger: true }))) return;
      try {
        await api('DELETE', `iam/accesskeys/${encodeURIComponent(key)}`);
        say(`Access key ${key} removed.`);
        await load();
      } catch (err) {
        fail(err);
      }
    };
    const form = h(
      'form',
      { id: 'create-key', class: 'form' },
      field('key-expiry', 'Expires (optional)', expiry),
      field('key-policy', 'Policy narrowing it (optional JSON)', policy, 'Never more than your own rights.'),
      h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'create-key-submit' }, 'Create access key')),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void (async () => {
        try {
          const body: Record<string, string> = {};
          if (expiry.value !== '') body.expiresAt = new Date(expiry.value).toISOString();
          if (policy.value.trim() !== '') body.policy = policy.value;
          const k = await api<{ accessKey: string; secretKey: string; expiration: string }>('POST', 'iam/accesskeys', body);
          replaceContent(
            secretBox,
            h('p', { class: 'warning' }, 'Copy the secret key now: it is not shown again.'),
            h('dl', { class: 'facts' }, h('dt', null, 'Access key'), h('dd', { id: 'new-key-access' }, k.accessKey), h('dt', null, 'Secret key'), h('dd', { id: 'new-key-secret' }, k.secretKey)),
          );
          announce('Access key created; copy its secret key now.');
          await load();
        } catch (err) {
          fail(err);
        }
      })();
    });
    parts.push(section('Your access keys', 'keys-title', form, secretBox, list));
    void load();
  }

  main.replaceChildren(pageHeader('Identity', 'Users, groups, policies and access keys.'), result, ...parts);
}

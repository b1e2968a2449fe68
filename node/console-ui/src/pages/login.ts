/**
 * Signing in: access key and secret key (or, with an LDAP server configured,
 * an LDAP user name and password) are posted once to `api/session`, which
 * answers with an HttpOnly session cookie; the secret is cleared from the
 * form at once and kept nowhere in the browser.
 */
import type { SessionInfo, SignInOptions, SignInRequest } from '../../../src/api/console/wire.ts';
import { api, ApiError } from '../api.js';
import { announce, h } from '../dom.js';
import { errorBox } from '../ui.js';

export function renderLogin(root: HTMLElement, notice: string | undefined, onSignedIn: (s: SessionInfo) => void): void {
  const access = h('input', { id: 'access-key', name: 'accessKey', type: 'text', autocomplete: 'username', required: true, spellcheck: 'false', autocapitalize: 'off' });
  const secret = h('input', { id: 'secret-key', name: 'secretKey', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'button button-primary', id: 'sign-in' }, 'Sign in');
  const messages = h('div', { id: 'login-messages' }, notice ? h('p', { class: 'notice', role: 'status' }, notice) : null);
  const form = h(
    'form',
    { class: 'login-form', 'aria-labelledby': 'login-title', novalidate: true },
    h('h1', { id: 'login-title', tabindex: '-1' }, 'Sign in to svc'),
    h('p', { class: 'subtitle' }, 'Use an access key and secret key of this cluster (the root credential or a user’s).'),
    messages,
    h('p', { class: 'field' }, h('label', { for: 'access-key' }, 'Access key'), access),
    h('p', { class: 'field' }, h('label', { for: 'secret-key' }, 'Secret key'), secret),
    h('p', null, submit),
    h('p', { class: 'hint' }, 'The secret key is sent once over this connection and never stored by your browser; the console keeps you signed in with a session cookie.'),
  );
  // keys, or an LDAP account when the node has an LDAP server (the choice appears once the node says so)
  let ldap = false;
  const accessLabel = form.querySelector<HTMLLabelElement>('label[for=access-key]')!;
  const secretLabel = form.querySelector<HTMLLabelElement>('label[for=secret-key]')!;
  const useLdap = (on: boolean) => {
    ldap = on;
    accessLabel.textContent = on ? 'LDAP user name' : 'Access key';
    secretLabel.textContent = on ? 'LDAP password' : 'Secret key';
    messages.replaceChildren();
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      const accessKey = access.value.trim();
      const secretKey = secret.value;
      if (accessKey === '' || secretKey === '') {
        messages.replaceChildren(errorBox(new ApiError(400, 'InvalidArgument', ldap ? 'Both the user name and the password are needed.' : 'Both keys are needed.', ldap ? 'Enter your LDAP user name and password.' : 'Enter the access key and the secret key.')));
        (accessKey === '' ? access : secret).focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = 'Signing in…';
      try {
        const body: SignInRequest = ldap ? { ldapUsername: accessKey, ldapPassword: secretKey } : { accessKey, secretKey };
        const session = await api<SessionInfo>('POST', 'session', body);
        secret.value = '';
        announce(`Signed in as ${session.accessKey}`);
        onSignedIn(session);
      } catch (err) {
        secret.value = '';
        messages.replaceChildren(errorBox(err));
        secret.focus();
      } finally {
        submit.disabled = false;
        submit.textContent = 'Sign in';
      }
    })();
  });
  root.replaceChildren(h('main', { id: 'main', class: 'login' }, form));
  access.focus();
  // back from a single sign-on that failed: say why (the reason is the server's, shown as text)
  const ssoError = new URLSearchParams(location.search).get('sso_error');
  if (ssoError !== null) {
    messages.replaceChildren(errorBox(new ApiError(401, 'AccessDenied', ssoError, 'Try again, or sign in with keys.')));
    history.replaceState(null, '', location.pathname + location.hash);
  }
  // an OpenID provider configured: offer single sign-on (a plain link; the server redirects to the provider)
  void api<SignInOptions>('GET', 'sso')
    .then((sso) => {
      if (sso.ldap) {
        const choice = (id: string, label: string, on: boolean) => {
          const input = h('input', { type: 'radio', name: 'sign-in-with', id, ...(on ? { checked: true } : {}) });
          input.addEventListener('change', () => useLdap(id === 'sign-in-with-ldap'));
          return h('label', { for: id, class: 'choice' }, input, ` ${label}`);
        };
        const modes = h('fieldset', { class: 'sign-in-with' }, h('legend', null, 'Sign in with'), choice('sign-in-with-keys', 'Access keys', true), choice('sign-in-with-ldap', 'LDAP account', false));
        form.insertBefore(modes, messages.nextSibling);
      }
      if (!sso.enabled) return;
      const link = h('a', { href: 'sso/start', class: 'button', id: 'sign-in-sso' }, `Sign in with ${sso.name ?? 'SSO'}`);
      form.insertBefore(h('p', { class: 'sso' }, link), submit.parentElement!.nextSibling);
    })
    .catch((err: unknown) => {
      // signing in with keys still works; say why the single sign-on button may be missing
      const reason = err instanceof ApiError ? err.message : String(err);
      messages.append(h('p', { class: 'hint', id: 'sso-unknown' }, `Could not ask the server whether single sign-on is offered (${reason}).`));
    });
}

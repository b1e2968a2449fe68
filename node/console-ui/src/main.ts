/**
 * The console page: asks who is signed in, shows the sign-in form or the
 * console (top bar, navigation, the current page), and follows the URL
 * fragment from page to page. Each page renders into `<main>` and returns
 * a function that stops its refreshing.
 */
import type { SessionInfo } from '../../src/api/console/wire.ts';
import { api, ApiError, setCsrfToken, SIGNED_OUT_EVENT } from './api.js';
import { announce, h } from './dom.js';
import { formatTime } from './format.js';
import { renderBucket } from './pages/bucket.js';
import { renderBuckets } from './pages/buckets.js';
import { renderHealing } from './pages/healing.js';
import { renderIdentity } from './pages/identity.js';
import { renderLogin } from './pages/login.js';
import { renderObject } from './pages/object.js';
import { renderOverview } from './pages/overview.js';
import { renderPools } from './pages/pools.js';
import { renderMetrics } from './pages/metrics.js';
import { parseRoute, type Route, sectionOf } from './router.js';
import { trayElement } from './tray.js';
import { errorBox, pageHeader } from './ui.js';

export interface AppContext {
  readonly session: SessionInfo;
}

type Dispose = () => void;
type Page = (main: HTMLElement, route: Route, app: AppContext) => Dispose | void;

const PAGES: Record<Route['page'], Page> = {
  overview: renderOverview,
  pools: renderPools,
  healing: renderHealing,
  metrics: renderMetrics,
  buckets: renderBuckets,
  bucket: renderBucket,
  object: renderObject,
  identity: (main, _route, app) => renderIdentity(main, app.session),
  'not-found': (main, route) => {
    main.replaceChildren(
      pageHeader('Page not found'),
      errorBox(new ApiError(404, 'NotFound', `There is no console page at ${route.page === 'not-found' ? route.path : ''}.`, 'Use the navigation above.')),
    );
  },
};

const NAV: readonly { readonly section: 'overview' | 'pools' | 'healing' | 'metrics' | 'buckets' | 'identity'; readonly href: string; readonly label: string; readonly admin: boolean }[] = [
  { section: 'overview', href: '#/', label: 'Overview', admin: true },
  { section: 'pools', href: '#/pools', label: 'Pools', admin: true },
  { section: 'healing', href: '#/healing', label: 'Healing', admin: true },
  { section: 'metrics', href: '#/metrics', label: 'Metrics', admin: true },
  { section: 'buckets', href: '#/buckets', label: 'Buckets', admin: false },
  // everyone: their own access keys; users, groups and policies by permission
  { section: 'identity', href: '#/identity', label: 'Identity', admin: false },
];

const root = document.getElementById('app')!;
let dispose: Dispose | undefined;
let onHash: (() => void) | undefined;

function stopPage(): void {
  dispose?.();
  dispose = undefined;
}

function showLogin(notice?: string): void {
  stopPage();
  if (onHash) window.removeEventListener('hashchange', onHash);
  onHash = undefined;
  document.title = 'Sign in · svc console';
  renderLogin(root, notice, (s) => showApp(s));
}

async function signOut(): Promise<void> {
  try {
    await api('DELETE', 'session');
  } catch {
    // the session may be gone already: signed out either way
  }
  setCsrfToken('');
  announce('Signed out');
  showLogin('You are signed out.');
}

function showApp(session: SessionInfo): void {
  setCsrfToken(session.csrfToken);
  const app: AppContext = { session };
  const links = NAV.filter((n) => session.admin || !n.admin).map((n) => ({ ...n, el: h('a', { href: n.href, class: 'nav-link', id: `nav-${n.section}` }, n.label) }));
  const main = h('main', { id: 'main', tabindex: '-1' });
  const skip = h('a', { href: '#main', class: 'skip-link' }, 'Skip to content');
  skip.addEventListener('click', (ev) => {
    ev.preventDefault();
    main.focus();
  });
  const signOutButton = h('button', { type: 'button', class: 'button button-quiet', id: 'sign-out', onclick: () => void signOut() }, 'Sign out');
  root.replaceChildren(
    skip,
    h(
      'header',
      { class: 'topbar' },
      h('a', { href: '#/', class: 'brand' }, h('img', { src: `assets/${document.documentElement.dataset.build ?? ''}/logo.svg`, alt: '', width: 24, height: 24 }), ' svc console'),
      h('div', { class: 'topbar-user' }, h('span', { class: 'user', title: 'Signed in as' }, h('span', { class: 'visually-hidden' }, 'Signed in as '), session.accessKey), signOutButton),
    ),
    h('nav', { 'aria-label': 'Main', class: 'nav' }, h('ul', null, ...links.map((l) => h('li', null, l.el)))),
    // uploads and bulk actions live beside the pages: they go on while you move around the console
    trayElement(),
    main,
    h(
      'footer',
      { class: 'footer' },
      `svc ${session.version} · session ends after ${Math.round(session.idleTimeoutSeconds / 60)} min idle, at the latest ${formatTime(session.expiresAt)}`,
    ),
  );
  const go = () => {
    stopPage();
    let route = parseRoute(location.hash);
    // plain S3 users have no cluster pages: start them at their buckets
    if (!session.admin && sectionOf(route) !== 'buckets' && sectionOf(route) !== 'identity' && route.page !== 'not-found') route = { page: 'buckets' };
    const current = sectionOf(route);
    for (const l of links) {
      if (l.section === current) l.el.setAttribute('aria-current', 'page');
      else l.el.removeAttribute('aria-current');
    }
    main.replaceChildren();
    dispose = PAGES[route.page](main, route, app) ?? undefined;
    const title = main.querySelector('h1')?.textContent ?? 'svc console';
    document.title = `${title} · svc console`;
    // after following a link, start reading (and tabbing) at the new page's heading;
    // on the first page, leave focus at the start so the first Tab reaches the skip link
    if (navigated) document.getElementById('page-title')?.focus({ preventScroll: true });
  };
  let navigated = false;
  if (onHash) window.removeEventListener('hashchange', onHash);
  onHash = () => {
    navigated = true;
    go();
  };
  window.addEventListener('hashchange', onHash);
  go();
}

window.addEventListener(SIGNED_OUT_EVENT, (ev) => {
  const err = (ev as CustomEvent<ApiError>).detail;
  showLogin(err?.code === 'XSvcConsoleSessionExpired' ? 'Your session has ended. Sign in again.' : 'Sign in to continue.');
});

async function start(): Promise<void> {
  try {
    const s = await api<SessionInfo>('GET', 'session');
    showApp(s);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) showLogin(err.code === 'XSvcConsoleSessionExpired' ? 'Your session has ended. Sign in again.' : undefined);
    else root.replaceChildren(h('main', { id: 'main' }, pageHeader('svc console'), errorBox(err, () => void start())));
  }
}

void start();

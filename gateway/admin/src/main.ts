import './styles.css';
import { gql, errorText, setUnauthenticatedHandler } from './api';
import { fill, h } from './dom';
import { Live, type LiveEvent, type LiveState } from './live';
import type { Page, PageContext } from './page';
import { alertsPage } from './pages/alerts';
import { messagesPage } from './pages/messages';
import { privacyLogPage } from './pages/privacy';
import { privacyConsentsPage, privacyRightsPage } from './pages/privacy-registers';
import { privacyReportPage } from './pages/privacy-report';
import { providersPage } from './pages/providers';
import { templatesPage } from './pages/templates';
import { webhookPage } from './pages/webhook';
import { webhooksPage } from './pages/webhooks';
import { clearSession, loadSession, readClaims, saveSession, type Session } from './session';

const app = document.getElementById('app')!;

const NAV: Array<{ hash: string; label: string }> = [
  { hash: '#/webhooks', label: 'Webhooks' },
  { hash: '#/alerts', label: 'Alerts' },
  { hash: '#/messages', label: 'Messages' },
  { hash: '#/templates', label: 'Templates' },
  { hash: '#/providers', label: 'Providers' },
  { hash: '#/privacy', label: 'Privacy' },
];

/** `#/webhooks/<id>` → the page and its parameters. */
function route(hash: string): { page: Page; params: string[]; nav: string } {
  const [, first = 'webhooks', second, ...rest] = hash.replace(/^#/, '').split('/');
  switch (first) {
    case 'webhooks':
      return second ? { page: webhookPage, params: [decodeURIComponent(second)], nav: '#/webhooks' } : { page: webhooksPage, params: [], nav: '#/webhooks' };
    case 'alerts':
      return { page: alertsPage, params: [], nav: '#/alerts' };
    case 'messages':
      return { page: messagesPage, params: [], nav: '#/messages' };
    case 'templates':
      return { page: templatesPage, params: [], nav: '#/templates' };
    case 'providers':
      return { page: providersPage, params: [], nav: '#/providers' };
    case 'privacy':
      if (second === 'consents') return { page: privacyConsentsPage, params: [], nav: '#/privacy' };
      if (second === 'rights') return { page: privacyRightsPage, params: [], nav: '#/privacy' };
      if (second === 'report') return { page: privacyReportPage, params: rest.slice(0, 2).map(decodeURIComponent), nav: '#/privacy' };
      return { page: privacyLogPage, params: [], nav: '#/privacy' };
    default:
      return { page: webhooksPage, params: [], nav: '#/webhooks' };
  }
}

let live: Live | undefined;
let leavePage: (() => void) | undefined;
let signOutNotice = '';

function signOut(notice = ''): void {
  leavePage?.();
  leavePage = undefined;
  void live?.close();
  live = undefined;
  clearSession();
  signOutNotice = notice;
  render();
}

setUnauthenticatedHandler((message) => signOut(`Signed out: the server refused the token (${message}). Paste a new one.`));

function render(): void {
  const session = loadSession();
  if (!session) renderSignIn();
  else renderShell(session);
}

function renderSignIn(): void {
  const token = h('textarea', {
    id: 'token',
    name: 'token',
    rows: 4,
    required: true,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'token-hint',
  });
  const tenant = h('input', { id: 'tenant', name: 'tenant', type: 'text', autocomplete: 'off', 'aria-describedby': 'tenant-hint' });
  const error = h('p', { role: 'alert', class: 'error-line' }, signOutNotice);
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card signin',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        const value = token.value.trim().replace(/^Bearer\s+/i, '');
        const claims = readClaims(value);
        if (!claims) {
          error.textContent = 'That is not a JWT (three dot-separated parts).';
          token.focus();
          return;
        }
        if (claims.exp && claims.exp * 1000 < Date.now()) {
          error.textContent = 'That token has expired. Make a new one.';
          token.focus();
          return;
        }
        const session: Session = { token: value, ...(tenant.value.trim() ? { tenantId: tenant.value.trim() } : {}) };
        saveSession(session);
        submit.disabled = true;
        try {
          // Any call checks the token and the tenant; this one reads nothing.
          await gql<{ __typename: string }>('query { __typename }');
          signOutNotice = '';
          if (!location.hash) history.replaceState(null, '', '#/webhooks');
          render();
        } catch (err) {
          clearSession();
          error.textContent = `Sign-in failed: ${errorText(err)}`;
          submit.disabled = false;
          token.focus();
        }
      },
    },
    h('h1', null, 'CareGraph admin'),
    h('p', null, 'Sign in with a bearer token. It is kept in this tab only (session storage) and sent to this server’s GraphQL API.'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'token' }, 'Bearer token'),
      token,
      h('p', { class: 'hint', id: 'token-hint' }, 'For the dev server: ', h('code', null, 'npm run --silent token -- --tenant demo --role admin')),
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'tenant' }, 'Tenant id (optional)'),
      tenant,
      h('p', { class: 'hint', id: 'tenant-hint' }, 'Needed when the token grants several tenants.'),
    ),
    submit,
    error,
  );
  fill(app, h('main', { id: 'main', class: 'signin-main' }, form));
  token.focus();
}

const STATE_TEXT: Record<LiveState, string> = {
  connecting: 'Live updates: connecting…',
  live: 'Live updates: on',
  offline: 'Live updates: reconnecting…',
  refused: 'Live updates: refused',
};

function renderShell(session: Session): void {
  const claims = readClaims(session.token) ?? {};
  const liveState = h('span', { class: 'live-state', 'data-state': 'connecting' }, STATE_TEXT.connecting);
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    h(
      'ul',
      null,
      NAV.map((item) => h('li', null, h('a', { href: item.hash, 'data-nav': item.hash }, item.label))),
    ),
  );
  const main = h('main', { id: 'main' });
  fill(
    app,
    h(
      'a',
      { class: 'skip-link', href: '#main', onclick: (event: MouseEvent) => (event.preventDefault(), main.querySelector<HTMLElement>('h1')?.focus()) },
      'Skip to content',
    ),
    h(
      'header',
      { class: 'top' },
      h('p', { class: 'brand' }, 'CareGraph admin'),
      nav,
      h(
        'div',
        { class: 'who' },
        h(
          'span',
          null,
          `${claims.sub ?? 'unknown'} · ${(claims.roles ?? []).join(', ') || 'no roles'} · tenant ${session.tenantId ?? claims.tenants?.[0] ?? '?'}`,
        ),
        liveState,
        h('button', { type: 'button', class: 'secondary', onclick: () => signOut() }, 'Sign out'),
      ),
    ),
    main,
  );

  live = new Live(
    session,
    (state, detail) => {
      liveState.dataset.state = state;
      liveState.textContent = STATE_TEXT[state] + (detail ? ` (${detail})` : '');
    },
    (reason) => signOut(`Signed out: the live connection refused the token (${reason}). Paste a new one.`),
  );
  live.start();
  showPage(main, nav, false);
}

let shownHash: string | undefined;

function showPage(main: HTMLElement, nav: HTMLElement, focus: boolean): void {
  leavePage?.();
  const { page, params, nav: current } = route(location.hash);
  shownHash = location.hash;
  for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-nav]')) {
    if (link.dataset.nav === current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  let active = true;
  const stops: Array<() => void> = [];
  const ctx: PageContext = {
    main,
    onEvent: (listener: (event: LiveEvent) => void) => void (live && stops.push(live.listen(listener))),
    onLeave: (cleanup) => void stops.push(cleanup),
    active: () => active,
  };
  leavePage = () => {
    active = false;
    for (const stop of stops) stop();
  };
  main.replaceChildren();
  Promise.resolve(page(ctx, ...params))
    .then(() => {
      const title = main.querySelector('h1');
      document.title = `${title?.textContent ?? 'Admin'} · CareGraph admin`;
      if (focus && active) title?.focus();
    })
    .catch((err) => fill(main, h('h1', { tabindex: '-1' }, 'Something went wrong'), h('p', { role: 'alert' }, errorText(err))));
}

window.addEventListener('hashchange', () => {
  const main = document.getElementById('main');
  const nav = document.querySelector<HTMLElement>('nav[aria-label="Main"]');
  if (!main || !nav || !loadSession() || location.hash === shownHash || location.hash === '#main') return;
  showPage(main, nav, true);
});

render();

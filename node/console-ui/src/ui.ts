/**
 * The console's small set of building blocks: page headings, state badges
 * (an icon and a word, never colour alone), usage meters with the numbers
 * written out, tables with captions, local times, error boxes that say what
 * to do, and confirmation dialogs (native `<dialog>`: focus stays inside,
 * Escape cancels).
 */
import { ApiError } from './api.js';
import { announce, type Child, h } from './dom.js';
import { formatBytes, formatPercent, formatTime, isUnsetTime } from './format.js';

export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'idle';

const ICONS: Record<Tone, string> = { ok: '●', warn: '▲', bad: '✕', info: '◆', idle: '○' };

/** A state as an icon and a word; `tone` sets the colour. */
export function badge(tone: Tone, text: string, attrs: Record<string, string> = {}): HTMLElement {
  return h('span', { class: `badge badge-${tone}`, ...attrs }, h('span', { class: 'badge-icon', 'aria-hidden': 'true' }, ICONS[tone]), ' ', text);
}

/** The page's heading; focused after navigation so screen readers start there. */
export function pageHeader(title: string, subtitle?: Child, ...actions: Child[]): HTMLElement {
  return h(
    'header',
    { class: 'page-header' },
    h('div', null, h('h1', { id: 'page-title', tabindex: '-1' }, title), subtitle ? h('p', { class: 'subtitle' }, subtitle) : null),
    actions.length > 0 ? h('div', { class: 'page-actions' }, ...actions) : null,
  );
}

export function section(title: string, id: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

/** Used of total as a meter, with the numbers in words beside it. */
export function usage(used: number, total: number, label: string, alertAt = 0.8): HTMLElement {
  const f = total > 0 ? used / total : 0;
  const text = total > 0 ? `${formatBytes(used)} of ${formatBytes(total)} (${formatPercent(f)})` : 'unknown';
  return h(
    'div',
    { class: 'usage' },
    h('meter', { min: 0, max: 1, low: alertAt * 0.85, high: alertAt, optimum: 0, value: Math.min(1, f), 'aria-label': `${label}: ${text}` }),
    h('span', { class: 'usage-text' }, text),
  );
}

/** An RFC 3339 time in the user's zone; the exact UTC value on hover. */
export function time(iso: string): HTMLElement {
  if (isUnsetTime(iso)) return h('span', null, '–');
  return h('time', { datetime: iso, title: new Date(iso).toISOString() }, formatTime(iso));
}

export function table(caption: string, headers: readonly string[], rows: readonly (readonly Child[])[], attrs: Record<string, string> = {}): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', ...attrs },
    h(
      'table',
      null,
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', null, h('tr', null, ...headers.map((x) => h('th', { scope: 'col' }, x)))),
      // `data-label`: on phones each row becomes a card, each cell labelled by its column
      h('tbody', null, ...rows.map((r) => h('tr', null, ...r.map((c, i) => h('td', { 'data-label': headers[i] ?? '' }, c))))),
    ),
  );
}

/** Definition list of label → value. */
export function facts(pairs: readonly (readonly [string, Child])[]): HTMLElement {
  return h('dl', { class: 'facts' }, ...pairs.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

/** A checkbox with its label, and a hint (`<id>-hint`, for the box's `aria-describedby`) when given. */
export function checkRow(input: HTMLInputElement, label: string, hint?: string): HTMLElement {
  return h('p', { class: 'check' }, input, ' ', h('label', { for: input.id }, label), hint !== undefined ? h('span', { class: 'hint', id: `${input.id}-hint` }, ` ${hint}`) : null);
}

/** What an action did, in `out` and announced to screen readers. */
export function showDone(out: HTMLElement, words: string): void {
  out.replaceChildren(h('p', { role: 'status', class: 'success' }, words));
  announce(words);
}

/** What went wrong and what to do, announced to screen readers. */
export function errorBox(err: unknown, retry?: () => void): HTMLElement {
  const e = err instanceof ApiError ? err : new ApiError(0, 'Error', err instanceof Error ? err.message : String(err), 'Reload the page and try again.');
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('p', { class: 'error-message' }, h('strong', null, 'Something went wrong: '), e.message),
    h('p', { class: 'error-action' }, h('strong', null, 'What to do: '), e.action),
    h('p', { class: 'error-code' }, `Error code: ${e.code}${e.status ? ` (HTTP ${e.status})` : ''}`),
    retry ? h('button', { type: 'button', class: 'button', onclick: retry }, 'Retry') : null,
  );
}

export function loading(what: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, `Loading ${what}…`);
}

export interface ConfirmOptions {
  readonly title: string;
  readonly body: Child;
  readonly confirmLabel: string;
  readonly danger?: boolean;
  /** The user must type this to confirm (irreversible actions). */
  readonly typeToConfirm?: string;
}

/** A modal confirmation; resolves true when confirmed. */
export function confirmDialog(o: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const typed = o.typeToConfirm !== undefined ? h('input', { id: 'confirm-typed', type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'confirm-hint' }) : null;
    const ok = h('button', { type: 'submit', class: `button ${o.danger ? 'button-danger' : 'button-primary'}`, id: 'confirm-ok', disabled: o.typeToConfirm !== undefined }, o.confirmLabel);
    const cancel = h('button', { type: 'button', class: 'button', id: 'confirm-cancel' }, 'Cancel');
    const form = h(
      'form',
      { method: 'dialog' },
      h('h2', { id: 'confirm-title' }, o.title),
      h('div', { class: 'dialog-body' }, o.body),
      typed
        ? h('p', null, h('label', { for: 'confirm-typed', id: 'confirm-hint' }, 'Type ', h('code', null, o.typeToConfirm), ' to confirm:'), ' ', typed)
        : null,
      h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-title', class: 'dialog' }, form);
    let result = false;
    typed?.addEventListener('input', () => {
      ok.disabled = typed.value !== o.typeToConfirm;
    });
    cancel.addEventListener('click', () => dialog.close());
    form.addEventListener('submit', (ev) => {
      if (typed && typed.value !== o.typeToConfirm) {
        ev.preventDefault();
        return;
      }
      result = true;
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (typed ?? cancel).focus();
  });
}

/** A pill linking to a page (`#/...`). */
export function link(href: string, text: Child, attrs: Record<string, string> = {}): HTMLAnchorElement {
  return h('a', { href, ...attrs }, text);
}

/**
 * Building the page without HTML strings: every element is made with
 * `createElement` and filled with `textContent`, so nothing a server or a
 * user wrote can become markup (the page's Content-Security-Policy enforces
 * it: Trusted Types with no policy make every HTML sink throw).
 */

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type AttrValue = string | number | boolean | null | undefined;
export type Attrs = Record<string, AttrValue | ((ev: never) => void)>;

function append(el: Element, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

function setAttrs(el: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') {
      el.addEventListener(k.replace(/^on/, '').toLowerCase(), v as EventListener);
    } else if (v === undefined || v === null || v === false) {
      continue;
    } else if (k === 'class') {
      el.setAttribute('class', String(v));
    } else if ((k === 'value' || k === 'checked') && (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement)) {
      (el as unknown as Record<string, unknown>)[k] = k === 'checked' ? Boolean(v) : String(v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

/** `h('button', {type: 'button', onclick: fn}, 'Save')`. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/**
 * Replaces `el`'s content with `children`, keeping keyboard focus on the
 * element with the same `id` when there is one (pages refresh while people
 * tab through them).
 */
export function replaceContent(el: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const focusId = active instanceof HTMLElement && el.contains(active) ? active.id : '';
  clear(el);
  append(el, children);
  if (focusId !== '') {
    const again = document.getElementById(focusId);
    if (again instanceof HTMLElement) again.focus({ preventScroll: true });
  }
}

/** Says `message` to screen readers (and shows it in the status line). */
export function announce(message: string): void {
  const live = document.getElementById('live');
  if (live === null) return;
  live.textContent = '';
  // a separate task, so repeating the same message is announced again
  setTimeout(() => {
    live.textContent = message;
  }, 30);
}

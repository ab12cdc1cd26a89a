import { errorText } from './api';
import { fill, h, type Child } from './dom';
import type { LiveEvent } from './live';

/** What a page gets from the shell: its container and the live events while it is shown. */
export interface PageContext {
  main: HTMLElement;
  /** Listens to live events until the user leaves the page. */
  onEvent(listener: (event: LiveEvent) => void): void;
  /** Runs when the user leaves the page (timers and such). */
  onLeave(cleanup: () => void): void;
  /** False once the user has left the page: late answers are dropped. */
  active(): boolean;
}

export type Page = (ctx: PageContext, ...params: string[]) => Promise<void> | void;

/** The page heading; focused after navigation so keyboard and screen reader users start there. */
export function heading(text: string): HTMLHeadingElement {
  return h('h1', { tabindex: '-1', id: 'page-title' }, text);
}

/** A polite status line for results of actions ("Test event sent…"). */
export function statusLine(): HTMLParagraphElement {
  return h('p', { role: 'status', class: 'status-line' });
}

/** An assertive error line (role=alert), empty until something fails. */
export function errorLine(): HTMLParagraphElement {
  return h('p', { role: 'alert', class: 'error-line' });
}

export function showError(line: HTMLElement, err: unknown): void {
  line.textContent = errorText(err);
}

/**
 * Reads a list into `area` (again on each call): `empty` when it has no rows, else what `render` makes of them.
 * A failed read shows in `error` and keeps the last list; an answer after the user left the page is dropped.
 */
export async function loadList<T>(
  ctx: PageContext,
  area: HTMLElement,
  error: HTMLElement,
  list: { read: () => Promise<T[]>; empty: string; render: (rows: T[]) => Child },
): Promise<void> {
  try {
    const rows = await list.read();
    if (!ctx.active()) return;
    error.textContent = '';
    fill(area, rows.length === 0 ? h('p', null, list.empty) : list.render(rows));
  } catch (err) {
    showError(error, err);
  }
}

export function section(title: string, id: string, ...children: Child[]): HTMLElement {
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), children);
}

/**
 * Disables a button while its action runs, so a double press does not act
 * twice; a button that had the focus gets it back (disabling may drop it).
 */
export async function busy<T>(button: HTMLButtonElement, action: () => Promise<T>): Promise<T> {
  const hadFocus = document.activeElement === button;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await action();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    if (hadFocus && button.isConnected && (document.activeElement === null || document.activeElement === document.body)) button.focus();
  }
}

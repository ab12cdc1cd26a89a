/**
 * A tiny DOM helper: elements from a tag, attributes and children. Text is
 * always inserted as text nodes (never as HTML), so data from the API, such
 * as a receiver's answer or a payload, cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type Listener = (event: any) => void;
export type Attrs = Record<string, string | number | boolean | null | undefined | Listener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
}

/**
 * A data table with a caption; each cell carries its column label so narrow
 * screens can show rows as labelled cards (see styles.css).
 */
export function table<T>(caption: string, columns: Column<T>[], rows: T[], rowAttrs?: (row: T) => Attrs): HTMLTableElement {
  return h(
    'table',
    { class: 'data' },
    h('caption', null, caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((c) => h('th', { scope: 'col' }, c.label)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((row) =>
        h(
          'tr',
          rowAttrs?.(row) ?? null,
          columns.map((c) => h('td', { 'data-label': c.label }, c.cell(row))),
        ),
      ),
    ),
  );
}

export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function timeElement(value: string | null | undefined): Child {
  return value ? h('time', { datetime: value }, formatTime(value)) : '—';
}

export function badge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status.replace(/[^a-z]/g, '')}` }, status);
}

/** A labelled form field: the label's `for` points at the control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: hintId }, hint) : null);
}

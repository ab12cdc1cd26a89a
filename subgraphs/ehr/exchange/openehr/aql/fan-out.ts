import type { Path, PathPart, Predicate } from './parser';
import { typeOf } from './rm-tree';

/**
 * One result row per value, as EHRbase answers (docs/exchange.md "AQL"): the
 * paths of SELECT, ORDER BY and aggregates form one tree per FROM variable
 * (paths with the same first steps share them), and each binding of the
 * containments gives one row per combination of the objects the tree
 * reaches: every list a step reaches fans out, a shared step is the same
 * object in every column, and branches that part multiply. Where a step
 * reaches nothing, its columns are NULL, except inside the archetyped
 * structure (HISTORY, events, item structures, CLUSTER, ELEMENT, a feeder
 * audit…): an object whose one structural branch reaches nothing gives no
 * row, one whose several structural branches all reach nothing gives none
 * either. A variable itself always gives a row.
 */

type Json = Record<string, any>;
export type Binding = Record<string, Json>;

interface Node {
  key: string;
  part?: PathPart;
  variable: string;
  predicate?: Predicate;
  children: Node[];
  /** Whether a path of the query ends here. */
  ends: boolean;
}

/** A containment binding, and what each node of the path tree reached in this row (absent: NULL). */
export interface Row {
  binding: Binding;
  at: Map<Node, unknown>;
}

/** How the evaluator walks one step, and CareGraph's simple form where the RM path finds nothing. */
export interface Walker {
  /** The values one step reaches from an object (a list fans out, a predicate narrows). */
  step(object: Json, part: PathPart): unknown[];
  matches(object: Json, predicate: Predicate | undefined): boolean;
  /** Whether the object has a simple form, and what `parts` read in it. */
  hasLegacy(object: Json): boolean;
  legacy(object: Json, parts: PathPart[]): unknown;
}

/** The RM classes EHRbase stores as the archetyped structure of a composition or EHR_STATUS. */
const STRUCTURE = new Set([
  'COMPOSITION',
  'EHR_STATUS',
  'EVENT_CONTEXT',
  'SECTION',
  'OBSERVATION',
  'EVALUATION',
  'INSTRUCTION',
  'ACTION',
  'ADMIN_ENTRY',
  'GENERIC_ENTRY',
  'ACTIVITY',
  'INSTRUCTION_DETAILS',
  'HISTORY',
  'POINT_EVENT',
  'INTERVAL_EVENT',
  'ITEM_TREE',
  'ITEM_LIST',
  'ITEM_SINGLE',
  'ITEM_TABLE',
  'CLUSTER',
  'ELEMENT',
]);
/** The attributes by which a structural object holds the next level of the structure (a feeder audit is one, as EHRbase stores it). */
export const STRUCTURAL_ATTRIBUTES = new Set([
  'feeder_audit',
  'content',
  'context',
  'other_context',
  'other_details',
  'items',
  'item',
  'rows',
  'data',
  'state',
  'protocol',
  'description',
  'activities',
  'instruction_details',
  'wf_details',
  'events',
  'summary',
]);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const partKey = (part: PathPart) => `${part.name}${part.predicate ? JSON.stringify(part.predicate) : ''}`;
const rootKey = (path: Path) => `${path.variable}${path.predicate ? JSON.stringify(path.predicate) : ''}`;

type Cells = Map<Node, unknown>;
const product = (left: Cells[], right: Cells[]): Cells[] => left.flatMap((l) => right.map((r) => new Map([...l, ...r])));

export class PathTree {
  private readonly roots = new Map<string, Node>();

  constructor(
    paths: Path[],
    private readonly walker: Walker,
  ) {
    for (const path of paths) {
      const key = rootKey(path);
      let node: Node | undefined = this.roots.get(key);
      if (!node) this.roots.set(key, (node = { key, variable: path.variable, predicate: path.predicate, children: [], ends: false }));
      for (const part of path.parts) {
        const childKey = partKey(part);
        let child: Node | undefined = node.children.find((c) => c.key === childKey);
        if (!child) node.children.push((child = { key: childKey, part, variable: path.variable, children: [], ends: false }));
        node = child;
      }
      node.ends = true;
    }
  }

  /** The rows one binding gives: the product of each variable's. */
  rows(binding: Binding): Row[] {
    let cells: Cells[] = [new Map()];
    for (const root of this.roots.values()) {
      const object = binding[root.variable];
      const own = object !== undefined && this.walker.matches(object, root.predicate) ? this.expand(root, object, true) : [];
      cells = product(cells, own.length > 0 ? own : [new Map()]);
    }
    return cells.map((at) => ({ binding, at }));
  }

  /**
   * The deepest object of `path` this row holds, and how many of the path's steps lead to it; undefined when the
   * row holds none (its variable not in the tree).
   */
  anchor(path: Path, row: Row): { value: unknown; depth: number } | undefined {
    let node = this.roots.get(rootKey(path));
    if (!node || !row.at.has(node)) return undefined;
    let value = row.at.get(node);
    let depth = 0;
    for (const part of path.parts) {
      const child: Node | undefined = node.children.find((c) => c.key === partKey(part));
      if (!child || row.at.get(child) === undefined) break;
      node = child;
      value = row.at.get(child);
      depth++;
    }
    return { value, depth };
  }

  /** The rows below one node: each a combination of what its branches reach; none where the structure drops it. */
  private expand(node: Node, value: unknown, root = false): Cells[] {
    const own: Cells = new Map([[node, value]]);
    if (node.children.length === 0 || !isObject(value)) return [own];
    const join = root ? 'outer' : this.joinOf(node, value);
    let rows = [own];
    let reached = false;
    for (const child of node.children) {
      let found = this.walker.step(value, child.part!).flatMap((item) => this.expand(child, item));
      if (this.walker.hasLegacy(value) && !found.some((cells) => hasEnd(child, cells))) {
        const legacy = this.legacy(child, value);
        if (legacy) found = [legacy];
      }
      if (found.length === 0) {
        if (join === 'inner') return [];
        found = [new Map()];
      } else reached = true;
      rows = product(rows, found);
    }
    return join === 'fork' && !reached ? [] : rows;
  }

  /**
   * How a node joins its branches: a structural object no path ends at, all of whose branches are structural, needs
   * its one branch (`inner`) or one of its several (`fork`); anything else keeps a row of NULLs (`outer`).
   */
  private joinOf(node: Node, object: Json): 'outer' | 'inner' | 'fork' {
    const type = typeOf(object);
    if (node.ends || !type || !STRUCTURE.has(type) || node.children.some((c) => !STRUCTURAL_ATTRIBUTES.has(c.part!.name))) return 'outer';
    return node.children.length === 1 ? 'inner' : 'fork';
  }

  /** The values the paths below `child` read in the simple form of `object` (one row), if any. */
  private legacy(child: Node, object: Json): Cells | undefined {
    const cells: Cells = new Map();
    const visit = (node: Node, parts: PathPart[]) => {
      if (node.ends && !parts.some((p) => p.predicate)) {
        const value = this.walker.legacy(object, parts);
        if (value !== undefined) cells.set(node, value);
      }
      node.children.forEach((c) => visit(c, [...parts, c.part!]));
    };
    visit(child, [child.part!]);
    return cells.size > 0 ? cells : undefined;
  }
}

/** Whether the cells hold a value for a path ending at or below `node`. */
function hasEnd(node: Node, cells: Cells): boolean {
  return (node.ends && cells.get(node) !== undefined) || node.children.some((c) => hasEnd(c, cells));
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../../common/paths';
import type { Scrape } from './metrics';

/** The PromQL expressions of deploy/: every alert rule and every dashboard query, named for messages. */
export function shippedQueries(): Array<{ where: string; expr: string }> {
  const root = projectRoot();
  const rules = parseYaml(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ name: string; rules: Array<{ alert: string; expr: string }> }>;
  };
  const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/caregraph-dashboard.json'), 'utf8')) as {
    panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  };
  return [
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
    ...dashboard.panels.flatMap((p) => p.targets.map((t) => ({ where: `panel '${p.title}'`, expr: t.expr }))),
  ];
}

/**
 * What is wrong with a PromQL expression against a real scrape, parsed with
 * Prometheus's own grammar: syntax errors, selectors naming a series the
 * scrape lacks, and label matchers or groupings naming a label no sample of
 * those series carries.
 */
export function problemsOf(expr: string, scrape: Scrape): string[] {
  const problems: string[] = [];
  const tree = parser.parse(expr);
  const selected: Array<{ name: string; labels: string[] }> = [];
  const grouped: string[] = [];
  const cursor = tree.cursor();
  do {
    const text = expr.slice(cursor.from, cursor.to);
    if (cursor.type.isError) problems.push(`syntax error at ${cursor.from}: '${expr.slice(cursor.from, cursor.from + 20)}'`);
    if (cursor.name === 'VectorSelector') {
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(text)?.[0] ?? '';
      const labels = [...text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((m) => m[1]);
      selected.push({ name, labels });
    }
    if (cursor.name === 'GroupingLabels') grouped.push(...[...text.matchAll(/[a-zA-Z_][a-zA-Z0-9_]*/g)].map((m) => m[0]));
  } while (cursor.next());
  const known = new Set<string>();
  for (const { name, labels } of selected) {
    if (!scrape.names.has(name)) {
      problems.push(`series ${name} is not in the scrape`);
      continue;
    }
    const has = scrape.labelsOf(name);
    for (const label of labels) if (!has.has(label)) problems.push(`${name} has no label '${label}'`);
    has.forEach((l) => known.add(l));
  }
  for (const label of grouped) if (!known.has(label)) problems.push(`no selected series has the label '${label}' it groups by`);
  return problems;
}

/**
 * The shape shared by the subgraphs' policy tables (subgraphs/ehr/policy/rules.ts,
 * subgraphs/messaging/policy/rules.ts): grants per role and area, written as
 * `-` (nothing), `r` (read) or `rw` (read and write).
 */
export type Grant = '-' | 'r' | 'rw';
export type Action = 'read' | 'write';

export function grants(grant: Grant, action: Action): boolean {
  return action === 'read' ? grant !== '-' : grant === 'rw';
}

export function grantOf(read: boolean, write: boolean): Grant {
  return write ? 'rw' : read ? 'r' : '-';
}

/** A GitHub-flavoured Markdown table (the docs render the policy tables with it). */
export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

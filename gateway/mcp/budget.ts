/**
 * The size budget of an MCP tool answer: agents pay for every token they read,
 * and a whole record would crowd out the conversation. Lists are newest first,
 * so the budget drops items from the end of the largest list until the JSON
 * fits, and says how many it dropped.
 */
export const DEFAULT_MAX_BYTES = 16_000;
export const MIN_MAX_BYTES = 1_000;
export const MAX_MAX_BYTES = 200_000;

export interface BudgetReport {
  maxBytes: number;
  bytes: number;
  truncated: boolean;
  omittedItems: number;
}

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Every array inside the value (not the value itself when it is one). */
function arraysIn(value: unknown, found: unknown[][] = []): unknown[][] {
  if (Array.isArray(value)) {
    found.push(value);
    for (const item of value) arraysIn(item, found);
  } else if (value && typeof value === 'object') {
    for (const child of Object.values(value)) arraysIn(child, found);
  }
  return found;
}

/**
 * Trims `value` in place to at most `maxBytes` of JSON (with the report
 * included) by dropping trailing list items; a value that cannot fit even with
 * every list emptied is returned as small as it gets, `truncated` set.
 */
export function fitToBudget<T extends object>(value: T, maxBytes: number): T & { budget: BudgetReport } {
  const result = value as T & { budget: BudgetReport };
  // While trimming, `bytes` holds maxBytes: at least as many digits as the final count, so the final answer only shrinks.
  result.budget = { maxBytes, bytes: maxBytes, truncated: false, omittedItems: 0 };
  let bytes = size(result);
  while (bytes > maxBytes) {
    const lists = arraysIn(value).filter((list) => list.length > 0);
    if (lists.length === 0) break;
    const largest = lists.reduce((a, b) => (size(b) > size(a) ? b : a));
    largest.pop();
    result.budget.omittedItems++;
    result.budget.truncated = true;
    bytes = size(result);
  }
  // The count is part of what it counts: settle it (one or two rounds as its digits change).
  while (result.budget.bytes !== size(result)) result.budget.bytes = size(result);
  return result;
}

import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../common/errors';
import { DEFAULT_MAX_BYTES, fitToBudget, MAX_MAX_BYTES, MIN_MAX_BYTES } from './budget';

/** What every tool set shares: the size budget argument, its report, and how answers and refusals are shaped. */

export const maxBytes = z
  .number()
  .int()
  .min(MIN_MAX_BYTES)
  .max(MAX_MAX_BYTES)
  .default(DEFAULT_MAX_BYTES)
  .describe(`Size budget of the answer in bytes of JSON (${MIN_MAX_BYTES}..${MAX_MAX_BYTES}); lists are trimmed from the end to fit`);

export const budget = z.object({ maxBytes: z.number(), bytes: z.number(), truncated: z.boolean(), omittedItems: z.number() });

/**
 * A tool answer: structured content (within the budget when the tool takes one), and the same JSON as text
 * for clients without structured output.
 */
export function answer(value: object, maxBytes?: number): CallToolResult {
  const fitted = maxBytes === undefined ? (value as Record<string, unknown>) : fitToBudget(value, maxBytes);
  return { structuredContent: fitted, content: [{ type: 'text', text: JSON.stringify(fitted) }] };
}

/** Refusals and bad input come back as tool errors the model can read (code and message), not as protocol errors. */
export async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    const error = err instanceof AppError ? err : new AppError('INTERNAL_ERROR', 'Internal server error');
    return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
  }
}

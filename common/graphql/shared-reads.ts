import type { Identity } from '../auth/principal';
import type { SubgraphRequest, SubgraphResponse } from './subgraph-server';

/**
 * What one request's execution read and did, as its subgraph accounts for it.
 * A subgraph that can give this lets identical reads in flight share one
 * execution (SharedReads).
 */
export interface ReadAccount {
  /** False once the execution began a change: its result is then its caller's alone. */
  readonly shareable: boolean;
  /** Writes the access log entries the execution wrote for its caller once more for each of these requests. */
  logReadsFor(requestIds: readonly string[]): Promise<void>;
}

interface Flight {
  /** Requests that arrived while the execution ran and take its result. */
  joiners: { requestId: string; settle: (response: SubgraphResponse | null) => void }[];
}

/**
 * Identical read operations of the same caller identity in flight at the same
 * time run once: a query-plan fetch that arrives while an identical one (same
 * document, operation, variables and identity, so the same access decisions)
 * is executing waits for that execution instead of running its own. Accountability
 * stays per request: before the others get the result, the access log entries
 * the execution wrote are written again under each of their request ids. An
 * execution that answered errors or began a change is not shared: the others
 * then run on their own. Each caller gets its own copy of the data (the gateway
 * merges into what a fetch returns).
 */
export class SharedReads {
  private readonly flights = new Map<string, Flight>();

  /** `onShared` counts the requests answered from another's execution. */
  constructor(private readonly onShared: (requests: number) => void = () => {}) {}

  async run(
    request: SubgraphRequest,
    caller: { identity: Identity; requestId: string },
    execute: () => Promise<{ response: SubgraphResponse; account: ReadAccount }>,
  ): Promise<SubgraphResponse> {
    const key = JSON.stringify([caller.identity, request.operationName ?? null, request.query, request.variables ?? null]);
    const flight = this.flights.get(key);
    if (flight) {
      const shared = await new Promise<SubgraphResponse | null>((settle) => flight.joiners.push({ requestId: caller.requestId, settle }));
      return shared ?? (await execute()).response;
    }
    const own: Flight = { joiners: [] };
    this.flights.set(key, own);
    let result: Awaited<ReturnType<typeof execute>> | undefined;
    try {
      result = await execute();
    } finally {
      // No one joins from here on; whoever joined gets the result below, or runs alone.
      this.flights.delete(key);
      if (!result) for (const joiner of own.joiners) joiner.settle(null);
    }
    const { response, account } = result;
    const joiners = own.joiners;
    if (joiners.length === 0) return response;
    let shared = !response.errors && account.shareable;
    if (shared) {
      try {
        await account.logReadsFor(joiners.map((j) => j.requestId));
      } catch {
        shared = false;
      }
    }
    for (const joiner of joiners) joiner.settle(shared ? structuredClone(response) : null);
    if (shared) this.onShared(joiners.length);
    return response;
  }
}

import { loadSession } from './session';

/** An error of the API in the contract's vocabulary (`code` as in docs/api.md §4). */
class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Unauthenticated = (message: string) => void;
let onUnauthenticated: Unauthenticated = () => {};

/** Called when the server refuses the token (expired or invalid): the app signs out. */
export function setUnauthenticatedHandler(handler: Unauthenticated): void {
  onUnauthenticated = handler;
}

interface GraphQLBody<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
  error?: { code: string; message: string };
}

/** One operation on POST /graphql with the session's token and tenant, the public API and nothing else. */
export async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const session = loadSession();
  if (!session) throw new ApiError('UNAUTHENTICATED', 'Not signed in');
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${session.token}`,
        ...(session.tenantId ? { 'x-tenant-id': session.tenantId } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError('NETWORK_ERROR', 'The server could not be reached');
  }
  let body: GraphQLBody<T>;
  try {
    body = (await response.json()) as GraphQLBody<T>;
  } catch {
    throw new ApiError('INTERNAL_ERROR', `The server answered ${response.status} without a readable body`);
  }
  const error = body.error ?? (body.errors?.[0] && { code: body.errors[0].extensions?.code ?? 'INTERNAL_ERROR', message: body.errors[0].message });
  if (error) {
    if (error.code === 'UNAUTHENTICATED') onUnauthenticated(error.message);
    throw new ApiError(error.code, error.message);
  }
  if (!body.data) throw new ApiError('INTERNAL_ERROR', `The server answered ${response.status} without data`);
  return body.data;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

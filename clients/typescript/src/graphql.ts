import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

/** Where and as whom to call CareGraph. */
export interface ConnectionOptions {
  /** The gateway's base URL, e.g. `https://caregraph.example.com`. */
  baseUrl: string;
  /** The bearer token, or a function giving a current one (called for every request). */
  token: string | (() => string | Promise<string>);
  /** X-Tenant-Id; needed when the token grants several tenants. */
  tenantId?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/** A GraphQL error as the gateway reports it (docs/api.md: `extensions.code` is the contract code). */
export interface GraphQLErrorBody {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** The request failed: HTTP status, and the GraphQL errors when the gateway sent any. */
export class CareGraphError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errors: GraphQLErrorBody[] = [],
  ) {
    super(message);
    this.name = 'CareGraphError';
  }

  /** The contract code of the first error (`UNAUTHENTICATED`, `NOT_FOUND`, …). */
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

export async function tokenOf(options: Pick<ConnectionOptions, 'token'>): Promise<string> {
  return typeof options.token === 'function' ? options.token() : options.token;
}

export async function authHeaders(options: ConnectionOptions): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await tokenOf(options)}`, ...(options.tenantId ? { 'x-tenant-id': options.tenantId } : {}) };
}

export interface GraphQLClient {
  /** Runs a query or mutation; resolves with `data`, rejects with a CareGraphError when there are errors. */
  request<TResult, TVariables extends Record<string, unknown>>(document: TypedDocumentNode<TResult, TVariables>, variables?: TVariables): Promise<TResult>;
}

/** Queries and mutations over POST /graphql, typed by the generated documents (`./gql`). */
export function createGraphQLClient(options: ConnectionOptions): GraphQLClient {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/graphql`;
  return {
    async request(document, variables) {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...(await authHeaders(options)) },
        body: JSON.stringify({ query: print(document), variables }),
      });
      const text = await response.text();
      let body: { data?: unknown; errors?: GraphQLErrorBody[]; error?: { message: string } } | undefined;
      try {
        body = JSON.parse(text);
      } catch {
        throw new CareGraphError(`HTTP ${response.status}: not a GraphQL response`, response.status);
      }
      if (body?.errors?.length) throw new CareGraphError(body.errors.map((e) => e.message).join('; '), response.status, body.errors);
      if (!response.ok || body?.data == null) throw new CareGraphError(body?.error?.message ?? `HTTP ${response.status}`, response.status);
      return body.data as never;
    },
  };
}

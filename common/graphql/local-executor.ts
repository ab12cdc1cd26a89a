import {
  execute,
  getOperationAST,
  GraphQLError,
  OperationTypeNode,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';

import type { SubgraphRequest, SubgraphResponse } from './subgraph-server';

/** Distinct operations kept parsed and validated; the gateway's query plans reuse a handful per client operation. */
const MAX_DOCUMENTS = 1000;

type FormatError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/**
 * Runs the gateway's subgraph fetches in process straight on graphql-js:
 * each distinct operation text is parsed and validated once (a bounded cache,
 * least recently used out first), then executed with the request's context.
 * Errors get the codes Apollo Server would give them (GRAPHQL_PARSE_FAILED,
 * GRAPHQL_VALIDATION_FAILED, BAD_USER_INPUT for variables, else
 * INTERNAL_SERVER_ERROR unless the error has one) before the subgraph's own
 * formatter, so clients see the same errors as over HTTP.
 */
export class LocalExecutor {
  private readonly documents = new Map<string, DocumentNode | { errors: readonly GraphQLError[]; code: string }>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly formatError: FormatError,
  ) {}

  async run(request: SubgraphRequest, contextValue: unknown): Promise<SubgraphResponse> {
    const document = this.document(request.query);
    if ('errors' in document) return { errors: this.format(document.errors, document.code) };
    const result = await execute({ schema: this.schema, document, variableValues: request.variables, operationName: request.operationName, contextValue });
    if (!result.errors) return { data: result.data };
    // No `data` at all: the request failed before execution (variables that do not coerce, or no such operation).
    if (!('data' in result)) return { errors: this.format(result.errors, 'BAD_USER_INPUT') };
    return { data: result.data, errors: this.format(result.errors) };
  }

  /** Whether the request is a valid read (a query operation); mutations and invalid documents are not. */
  isQuery(request: SubgraphRequest): boolean {
    const document = this.document(request.query);
    return !('errors' in document) && getOperationAST(document, request.operationName)?.operation === OperationTypeNode.QUERY;
  }

  private document(query: string): DocumentNode | { errors: readonly GraphQLError[]; code: string } {
    const cached = this.documents.get(query);
    if (cached) {
      this.documents.delete(query);
      this.documents.set(query, cached);
      return cached;
    }
    let entry: DocumentNode | { errors: readonly GraphQLError[]; code: string };
    try {
      const document = parse(query);
      const errors = validate(this.schema, document);
      entry = errors.length > 0 ? { errors, code: 'GRAPHQL_VALIDATION_FAILED' } : document;
    } catch (e) {
      entry = { errors: [e instanceof GraphQLError ? e : new GraphQLError(String(e))], code: 'GRAPHQL_PARSE_FAILED' };
    }
    if (this.documents.size >= MAX_DOCUMENTS) this.documents.delete(this.documents.keys().next().value!);
    this.documents.set(query, entry);
    return entry;
  }

  private format(errors: readonly GraphQLError[], code?: string): GraphQLFormattedError[] {
    return errors.map((error) => {
      const formatted = error.toJSON();
      const extensions = { ...formatted.extensions, code: code ?? formatted.extensions?.code ?? 'INTERNAL_SERVER_ERROR' };
      return this.formatError({ ...formatted, extensions }, error);
    });
  }
}

import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
  OperationTypeNode,
} from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

/** Items assumed for a list whose size no `limit`/`first` argument states. */
const DEFAULT_LIST_SIZE = 10;
/** Items assumed when a page size comes from a variable (known only after validation): the largest page the API serves. */
const VARIABLE_PAGE_SIZE = 100;
const PAGE_ARGUMENTS = ['limit', 'first', 'last'];
const MAX_WALK = 100_000;

interface OperationMeasure {
  depth: number;
  aliases: number;
  cost: number;
}

/**
 * Measures an operation statically: nesting depth, aliased fields, and cost
 * (1 per field, children multiplied by the list size they run over: the
 * `limit`/`first` argument of the field or an ancestor page, else
 * DEFAULT_LIST_SIZE). Introspection subtrees are free: they read the schema,
 * and introspection is off in production.
 */
function measureOperation(
  operation: OperationDefinitionNode,
  rootType: GraphQLCompositeType,
  fragments: Map<string, FragmentDefinitionNode>,
  variableDefaults: Map<string, ValueNode | undefined>,
  stopAtDepth: number,
): OperationMeasure {
  let depth = 0;
  let aliases = 0;
  // Fragments reused at many places multiply the walk; past this many visited selections the cost is "too much".
  let work = 0;

  const pageSize = (field: FieldNode, definition: GraphQLField<unknown, unknown> | undefined): number | undefined => {
    for (const name of PAGE_ARGUMENTS) {
      if (!definition?.args.some((arg) => arg.name === name)) continue;
      const given = field.arguments?.find((arg) => arg.name.value === name)?.value;
      const value = given?.kind === Kind.VARIABLE ? variableDefaults.get(given.name.value) : given;
      if (value?.kind === Kind.INT) return Math.max(1, Number(value.value));
      if (given) return VARIABLE_PAGE_SIZE;
      const fallback = definition.args.find((arg) => arg.name === name)?.defaultValue;
      return typeof fallback === 'number' ? fallback : VARIABLE_PAGE_SIZE;
    }
    return undefined;
  };

  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLCompositeType | undefined,
    level: number,
    pending: number | undefined,
    path: Set<string>,
  ): number => {
    if (level > stopAtDepth) return 0;
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (++work > MAX_WALK) return Number.MAX_SAFE_INTEGER;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        if (selection.alias) aliases += 1;
        depth = Math.max(depth, level);
        if (!selection.selectionSet) {
          cost += 1;
          continue;
        }
        const definition = parent && 'getFields' in parent ? parent.getFields()[selection.name.value] : undefined;
        const named = definition ? getNamedType(definition.type) : undefined;
        const child = named && isCompositeType(named) ? named : undefined;
        const isList = definition ? isListType(getNullableType(definition.type)) : false;
        const ownPage = pageSize(selection, definition);
        // A page argument sizes the next list below it (`messages(limit:) { data }`), or the field itself when it is the list.
        const multiplier = isList ? (ownPage ?? pending ?? DEFAULT_LIST_SIZE) : 1;
        const carried = isList ? undefined : (ownPage ?? pending);
        cost += 1 + multiplier * walk(selection.selectionSet, child, level + 1, carried, path);
        if (work > MAX_WALK) return Number.MAX_SAFE_INTEGER;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += walk(selection.selectionSet, parent, level, pending, path);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || path.has(name)) continue;
        path.add(name);
        cost += walk(fragment.selectionSet, parent, level, pending, path);
        path.delete(name);
      }
      if (cost > Number.MAX_SAFE_INTEGER) cost = Number.MAX_SAFE_INTEGER;
    }
    return cost;
  };

  const cost = walk(operation.selectionSet, rootType, 1, undefined, new Set());
  return { depth, aliases, cost };
}

/** A validation rule refusing operations beyond the depth, alias and cost limits (answered as VALIDATION_ERROR). */
export function queryLimitsRule(limits: QueryLimits): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const schema = context.getSchema();
      const rootType =
        operation.operation === OperationTypeNode.QUERY
          ? schema.getQueryType()
          : operation.operation === OperationTypeNode.MUTATION
            ? schema.getMutationType()
            : schema.getSubscriptionType();
      if (!rootType) return;
      const fragments = new Map(context.getDocument().definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
      const defaults = new Map((operation.variableDefinitions ?? []).map((v) => [v.variable.name.value, v.defaultValue] as const));
      const measure = measureOperation(operation, rootType, fragments, defaults, limits.maxDepth + 1);
      if (measure.depth > limits.maxDepth) {
        context.reportError(new GraphQLError(`The operation is nested deeper than ${limits.maxDepth} levels`, { nodes: [operation] }));
      }
      if (measure.aliases > limits.maxAliases) {
        context.reportError(
          new GraphQLError(`The operation uses ${measure.aliases} aliases; at most ${limits.maxAliases} are allowed`, { nodes: [operation] }),
        );
      }
      if (measure.depth <= limits.maxDepth && measure.cost > limits.maxCost) {
        context.reportError(
          new GraphQLError(`The operation's estimated cost ${measure.cost} exceeds the limit of ${limits.maxCost}; request smaller pages or fewer fields`, {
            nodes: [operation],
          }),
        );
      }
    },
  });
}

/**
 * Whether a GraphQL document nests `{ }` and `[ ]` more than `max` deep.
 * graphql-js parses selection sets and value literals recursively, and a
 * document within the token limit can nest list literals thousands deep and
 * overflow the parser's stack. The lexer is iterative, so this runs before
 * parsing; a document the lexer rejects is left to the parser to report.
 */
export function documentNestsDeeperThan(query: string, max: number): boolean {
  const lexer = new Lexer(new Source(query));
  let depth = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L) {
        if (++depth > max) return true;
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R) {
        depth--;
      }
    }
  } catch {
    return false;
  }
  return false;
}

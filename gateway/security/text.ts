import { isUtf8 } from 'node:buffer';
import type { NextFunction, Request, Response } from 'express';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type ValidationRule } from 'graphql';
import { AppError, validationError } from '../../common/errors';

/**
 * Text CareGraph can store: no NUL (PostgreSQL text cannot hold U+0000, and
 * the database answered it with an internal error) and no unpaired UTF-16
 * surrogate (no UTF-8 encoding exists for one). Refused at the edge, once for
 * every API, instead of per field.
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isBadText(value: string): boolean {
  return BAD_TEXT.test(value);
}

/** The path of the first string (or key) in a parsed body or variables that is not storable text ('' for the root itself). */
function findBadText(root: unknown): string | undefined {
  // Iterative: bodies may nest deeper than the call stack.
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (isBadText(value)) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`]);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        if (isBadText(key)) return at;
        stack.push([item, at]);
      }
    }
  }
  return undefined;
}

const badTextError = (where: string, path: string) =>
  validationError(`${where} contains a NUL character or invalid Unicode`, [{ path, message: 'NUL bytes and invalid UTF-8 are not accepted' }]);

/** Percent-escapes decoded to the bytes they stand for (other characters as they are: Node admits only ASCII in a request target). */
function targetBytes(target: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < target.length; i++) {
    const char = target.charCodeAt(i);
    if (char === 0x25 && /^[0-9A-Fa-f]{2}$/.test(target.slice(i + 1, i + 3))) {
      bytes.push(parseInt(target.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(char & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** Refuses request targets whose path or query decodes to NUL or to invalid UTF-8, before any route reads them. */
export function requestTargetGuard() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const target = req.originalUrl;
    if (!target.includes('%')) return next();
    const query = target.indexOf('?');
    const [path, search] = query < 0 ? [target, ''] : [target.slice(0, query), target.slice(query + 1)];
    const bad = (part: string) => {
      const bytes = targetBytes(part);
      return bytes.includes(0) || !isUtf8(bytes);
    };
    if (bad(path)) return next(badTextError('The request path', 'path'));
    if (bad(search)) return next(badTextError('The query string', 'query'));
    next();
  };
}

/** body-parser `verify`: the raw body must be UTF-8 (the parsers would otherwise replace bad bytes silently). */
export function verifyUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('The request body is not valid UTF-8'), { type: 'entity.verify.failed' });
}

/** After a mount's body parsers: no NUL or unpaired surrogate in any string or key of the parsed body. */
export function parsedBodyGuard(req: Request, _res: Response, next: NextFunction) {
  const at = req.body === undefined ? undefined : findBadText(req.body);
  next(at === undefined ? undefined : badTextError(at === '' ? 'The request body' : `Body field '${at}'`, at || 'body'));
}

/** GraphQL string literals (`"\u0000"` in a document is NUL once parsed). */
export const storableTextRule: ValidationRule = (context) => ({
  StringValue(node) {
    if (isBadText(node.value)) context.reportError(new GraphQLError('A string in the document contains a NUL character or invalid Unicode', { nodes: [node] }));
  },
});

/** The variables of a GraphQL operation, however it arrived (HTTP, REST adapters). */
export function variablesProblem(variables: unknown): AppError | undefined {
  const at = findBadText(variables ?? {});
  return at === undefined ? undefined : badTextError(at ? `Variable '$${at}'` : 'The variables', at || 'variables');
}

export function storableTextPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request }) {
          const problem = variablesProblem(request.variables);
          if (problem) throw new GraphQLError(problem.message, { extensions: { code: problem.code, http: { status: problem.status } } });
        },
      };
    },
  };
}

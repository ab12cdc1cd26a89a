import type { NextFunction, Request, Response } from 'express';
import type { ApolloServerPlugin } from '@apollo/server';
import { OperationTypeNode } from 'graphql';
import { errorBody, type ErrorDetail } from '../../common/errors';
import { toGraphQLError } from '../../common/graphql/errors';
import { Deadline, deadlinePassed, OUTCOME_HEADER, outcomeOf, type RequestOutcome } from '../../common/deadline';
import type { GatewayContext } from '../context';

declare module 'express-serve-static-core' {
  interface Request {
    /** This request's deadline (see requestDeadline). */
    deadline?: Deadline;
    /** The Idempotency-Key a send runs with (the client's, or one the gateway chose): named on an `unknown` 503. */
    idempotencyKey?: string;
  }
}

/**
 * The request deadline (docs/security.md, "Request deadlines"). At `ms`:
 * - if no mutation began, the answer is 503 with `X-Request-Outcome: not-started`:
 *   nothing was changed and nothing will be (a mutation can no longer begin, see
 *   deadlinePlugin), and the deadline's signal stops work that listens to it;
 * - if a mutation began, its own answer is awaited: the subgraph refuses a write
 *   not yet started (503, not-started) or finishes the one under way and answers
 *   with its result. Only if that takes another `ms` does the gateway answer 503
 *   with `X-Request-Outcome: unknown`, naming the Idempotency-Key a send ran with
 *   so that its retry returns the first message instead of sending a second.
 * The connection is closed after a 503: an unfinished body may still be arriving on it.
 */
export function requestDeadline(ms: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const deadline = new Deadline(Date.now() + ms);
    req.deadline = deadline;
    let timer = setTimeout(() => {
      const writing = deadline.writeBegun;
      deadline.expire();
      if (res.headersSent) return;
      if (!writing) {
        answer(req, res, 'not-started', `The request was not completed within ${ms} ms; nothing was changed, and retrying is safe`);
        return;
      }
      timer = setTimeout(() => {
        if (res.headersSent) return;
        const key = req.idempotencyKey;
        if (key) res.setHeader('Idempotency-Key', key);
        const retry = key ? `retry with Idempotency-Key: ${key} to get its result without repeating it` : 'check its result before retrying';
        answer(req, res, 'unknown', `The request was not completed within ${2 * ms} ms and may still complete; ${retry}`);
      }, ms);
    }, ms);
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

function answer(req: Request, res: Response, outcome: RequestOutcome, message: string): void {
  const body: Record<string, unknown> = { ...errorBody('SERVICE_UNAVAILABLE', message) };
  if (req.path === '/graphql') body.errors = [{ message, extensions: { code: 'SERVICE_UNAVAILABLE', outcome } }];
  res.setHeader(OUTCOME_HEADER, outcome);
  res.setHeader('Connection', 'close');
  res.status(503).json(body);
}

/**
 * Marks a mutation as begun when the gateway is about to execute it, or refuses
 * it once the deadline has passed (the client may already have been told that
 * nothing was changed). Queries only read: they never mark anything. A GraphQL
 * answer that is only subgraph refusals gets the X-Request-Outcome header too.
 */
export function deadlinePlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, contextValue }) {
          const deadline = contextValue.deadline;
          if (operation?.operation !== OperationTypeNode.MUTATION || !deadline) return;
          if (deadline.expired) throw toGraphQLError(deadlinePassed());
          deadline.beginWrite();
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const { data, errors } = response.body.singleResult;
          // Only when every root field was refused: one that answered, or failed otherwise, may have done its work.
          const nothingAnswered = !data || Object.values(data).every((value) => value === null);
          const allRefused = !!errors?.length && errors.every((error) => outcomeOf(error.extensions?.details as ErrorDetail[] | undefined));
          if (nothingAnswered && allRefused) response.http.headers.set(OUTCOME_HEADER, 'not-started');
        },
      };
    },
  };
}

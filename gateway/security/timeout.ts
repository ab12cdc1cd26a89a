import type { NextFunction, Request, Response } from 'express';
import { errorBody } from '../../common/errors';

/**
 * Answers 503 SERVICE_UNAVAILABLE when a request is not answered within `ms`
 * (a stalled upload, a slow subgraph) so clients get the contract's body
 * instead of a dropped connection. The connection is closed afterwards: an
 * unfinished body may still be arriving on it.
 */
export function requestDeadline(ms: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      const body: Record<string, unknown> = { ...errorBody('SERVICE_UNAVAILABLE', `The request was not completed within ${ms} ms; try again`) };
      if (req.path === '/graphql') body.errors = [{ message: (body.error as { message: string }).message, extensions: { code: 'SERVICE_UNAVAILABLE' } }];
      res.setHeader('Connection', 'close');
      res.status(503).json(body);
    }, ms);
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

import type { Request, RequestHandler } from 'express';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { contextFrom, tracingEnabled } from './tracing';

/** The route template express matched (`/v1/messages/:id`), the mount of middleware that answered (`/graphql`), or 'unmatched'. */
export function routeOf(req: Request): string {
  return req.route?.path !== undefined ? `${req.baseUrl}${String(req.route.path)}` : req.baseUrl || 'unmatched';
}

/**
 * One SERVER span per HTTP request, continuing the caller's W3C trace
 * context (`traceparent`), named by the route template when the answer is
 * finished. The request and response emitters are bound to the span's
 * context, so body parsing and everything after it runs inside the span.
 */
export function traceRequests(component: string): RequestHandler {
  return (req, res, next) => {
    if (!tracingEnabled()) return next();
    const parent = contextFrom(req.headers);
    const span = trace
      .getTracer('caregraph')
      .startSpan(
        `${component} ${req.method}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'caregraph.component': component } },
        parent,
      );
    const active = trace.setSpan(parent, span);
    context.bind(active, req);
    context.bind(active, res);
    res.once('finish', () => {
      const route = routeOf(req);
      span.updateName(`${component} ${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, next);
  };
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { startTracing } from './setup';
import { activeTraceIds, contextFrom, inSpan, traceCarrier, tracingEnabled } from './tracing';
import { createLogger } from '../logger';

describe('tracing', () => {
  it('is off without an endpoint: no span, no carrier, no ids in log lines', async () => {
    const tracing = startTracing(undefined, 'test');
    expect(tracingEnabled()).toBe(false);
    await inSpan('nothing', {}, async () => {
      expect(traceCarrier()).toEqual({});
      expect(activeTraceIds()).toEqual({});
    });
    await tracing.shutdown();
  });

  it('with an endpoint: spans nest, traceparent round-trips, log lines carry trace_id and span_id, spans reach the collector', async () => {
    const bodies: any[] = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const tracing = startTracing(`http://127.0.0.1:${(collector.address() as AddressInfo).port}`, 'caregraph-test');
    try {
      const lines: any[] = [];
      const logger = createLogger('info', 'test', new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
      let carrier: Record<string, string> = {};
      const ids = await inSpan('outer', {}, async (outer) => {
        logger.info('inside');
        carrier = traceCarrier();
        return outer.spanContext();
      });
      logger.info('outside');
      expect(carrier.traceparent).toBe(`00-${ids.traceId}-${ids.spanId}-01`);
      expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
      expect(lines[1].trace_id).toBeUndefined();
      // A job run from the stored carrier is a child in the same trace.
      const child = await inSpan('job', { parent: contextFrom(carrier) }, async (span) => span.spanContext());
      expect(child.traceId).toBe(ids.traceId);
    } finally {
      await tracing.shutdown();
      await new Promise((resolve) => collector.close(resolve));
    }
    const spans = bodies.flatMap((b) => b.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)));
    expect(spans.map((s: any) => s.name).sort()).toEqual(['job', 'outer']);
    expect(tracingEnabled()).toBe(false);
  });
});

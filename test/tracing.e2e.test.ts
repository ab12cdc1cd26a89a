import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually } from './messaging-helpers';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';
import { startCollector, type Collector } from './support/otlp-collector';

describe(`tracing (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let collector: Collector;

  beforeAll(async () => {
    receiver = await startReceiver();
    collector = await startCollector();
    t = await startTestPlatform({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      // The gateway reaches the subgraphs over HTTP, as in scale-out: the trace context crosses it in the traceparent header.
      SUBGRAPH_TRANSPORT: 'http',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
    });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
    await collector?.close();
  });

  it('one trace spans the gateway, the subgraph, the delivery worker and the webhook, whose receiver gets its traceparent', async () => {
    expect(
      (await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/traced'), events: ['message.delivered'], secret: 'whsec-tracing-0123456789' } }))
        .status,
    ).toBe(201);
    const sent = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
    });
    expect(sent.status).toBe(201);
    const hook = await waitFor('the webhook delivery', () => receiver.received('/traced')[0]);
    const traceparent = String(hook.headers.traceparent);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, webhookSpanId] = traceparent.split('-');

    // Spans are exported in batches: wait for the webhook send span, the last of the trace.
    await eventually(async () => (collector.spans.some((s) => s.spanId === webhookSpanId) ? true : undefined), 'the exported webhook span');
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    const named = (pattern: RegExp) => spans.filter((s) => pattern.test(s.name));
    const gateway = named(/^gateway POST \/v1\/messages$/);
    expect(gateway).toHaveLength(1);
    expect(gateway[0].parentSpanId).toBeUndefined();
    // Apollo Gateway's own spans (it uses the OpenTelemetry API) join the same trace.
    expect(named(/^gateway\.request$/)).toHaveLength(1);
    const fetch = named(/^fetch messaging$/);
    expect(fetch).toHaveLength(1);
    const subgraph = named(/^subgraph messaging POST \/graphql$/);
    expect(subgraph).toHaveLength(1);
    expect(subgraph[0].parentSpanId).toBe(fetch[0].spanId);
    expect(named(/^job messaging-deliver$/)).toHaveLength(1);
    expect(named(/^provider simulator send$/)).toHaveLength(1);
    expect(named(/^job messaging-simulator-report$/)).toHaveLength(1);
    const webhook = named(/^webhook send$/);
    expect(webhook.map((s) => s.spanId)).toEqual([webhookSpanId]);
    // Every span's parent is in the trace: one tree from the gateway request down to the webhook.
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['caregraph']));
    await eventually(async () => ((await t.request('GET', `/v1/messages/${sent.body.id}`)).body.status === 'delivered' ? true : undefined), 'delivery');
  });
});

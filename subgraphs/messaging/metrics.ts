import type { CircuitState, ProviderSendOutcome } from './delivery/providers/failover';
import { Counter, defineOnce, Gauge, Histogram, LATENCY_BUCKETS, type MetricsRegistry } from '../../common/metrics/registry';

/** What messaging records (the subgraph and the worker); series defined here only. */
export interface MessagingMetrics {
  /** A message's status moved (`from` is 'none' for an accepted message). */
  statusChanged(from: string, to: string, channel: string): void;
  /** A message reached 'delivered', `seconds` after it was queued. */
  delivered(channel: string, seconds: number): void;
  /** One webhook delivery attempt. */
  webhookAttempt(outcome: WebhookAttemptOutcome, seconds: number): void;
  /** One send handed (or not, its circuit open) to a channel provider. */
  providerSend(provider: string, channel: string, outcome: ProviderSendOutcome): void;
  /** A provider's circuit breaker changed state (in this process). */
  circuitState(provider: string, channel: string, state: CircuitState): void;
}

/** The gauge's values: 0 closed, 1 half-open, 2 open. */
const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/** success: 2xx; http_error: any other answer; error: no answer (timeout, connection, TLS) or the target was refused. */
type WebhookAttemptOutcome = 'success' | 'http_error' | 'error';

/** Queued → delivered spans provider and handset delays: seconds to an hour. */
const DELIVERY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export function messagingMetrics(registry: MetricsRegistry): MessagingMetrics {
  return defineOnce(registry, 'messaging', (registers) => {
    const transitions = new Counter({
      name: 'caregraph_message_status_transitions_total',
      help: 'Message status changes by from, to and channel',
      labelNames: ['from', 'to', 'channel'],
      registers: [registers],
    });
    const delivery = new Histogram({
      name: 'caregraph_message_delivery_seconds',
      help: 'Time from queued to delivered, by channel',
      labelNames: ['channel'],
      buckets: DELIVERY_BUCKETS,
      registers: [registers],
    });
    const attempts = new Counter({
      name: 'caregraph_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'],
      registers: [registers],
    });
    const attemptDuration = new Histogram({
      name: 'caregraph_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempt latency by outcome',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registers],
    });
    const providerSends = new Counter({
      name: 'caregraph_provider_sends_total',
      help: 'Sends per channel provider by outcome (sent, rejected for the recipient, failed on the provider side, skipped while its circuit was open)',
      labelNames: ['provider', 'channel', 'outcome'],
      registers: [registers],
    });
    const circuit = new Gauge({
      name: 'caregraph_provider_circuit_state',
      help: "A channel provider's circuit breaker in this process: 0 closed, 1 half-open, 2 open",
      labelNames: ['provider', 'channel'],
      registers: [registers],
    });
    return {
      providerSend: (provider, channel, outcome) => providerSends.inc({ provider, channel, outcome }),
      circuitState: (provider, channel, state) => circuit.set({ provider, channel }, CIRCUIT_VALUE[state]),
      statusChanged: (from, to, channel) => transitions.inc({ from, to, channel }),
      delivered: (channel, seconds) => delivery.observe({ channel }, seconds),
      webhookAttempt: (outcome, seconds) => {
        attempts.inc({ outcome });
        attemptDuration.observe({ outcome }, seconds);
      },
    };
  });
}

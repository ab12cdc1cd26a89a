import type { Clock } from '../../../../common/clock';
import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

export type CircuitState = 'closed' | 'open' | 'half_open';

/** sent: taken; rejected: refused for the recipient or the message; failed: the provider's own failure; skipped: its circuit was open. */
export type ProviderSendOutcome = 'sent' | 'rejected' | 'failed' | 'skipped';

/** What the chain reports as it goes (metrics). */
export interface ProviderObserver {
  sendOutcome(provider: string, channel: string, outcome: ProviderSendOutcome): void;
  circuitState(provider: string, channel: string, state: CircuitState): void;
}

export interface CircuitSettings {
  /** Consecutive provider-side failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit skips the provider before one probe goes through. */
  cooldownMs: number;
}

/**
 * One provider's circuit breaker, in this process: `closed` lets every send through; `failureThreshold`
 * consecutive provider-side failures open it; while `open` the provider is skipped; after `cooldownMs` it is
 * `half_open` and lets one probe through, which closes it on success and opens it again on failure. A refusal
 * of one recipient is an answer, so it counts as the provider working.
 */
export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly settings: CircuitSettings,
    private readonly clock: Clock,
    private readonly changed: (state: CircuitState) => void,
  ) {}

  get state(): CircuitState {
    return this.current;
  }

  /** Whether a send may go to the provider now; `true` in half-open makes this call the probe. */
  tryAcquire(): boolean {
    if (this.current === 'open') {
      if (this.clock.now().getTime() - this.openedAt < this.settings.cooldownMs) return false;
      this.move('half_open');
    }
    if (this.current === 'half_open') {
      if (this.probing) return false;
      this.probing = true;
    }
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.probing = false;
    // A send begun before the circuit opened says nothing about the provider now.
    if (this.current === 'half_open') this.move('closed');
  }

  failed(): void {
    if (this.current === 'half_open') {
      this.probing = false;
      this.open();
    } else if (this.current === 'closed' && ++this.failures >= this.settings.failureThreshold) {
      this.open();
    }
  }

  private open(): void {
    this.failures = 0;
    this.openedAt = this.clock.now().getTime();
    this.move('open');
  }

  private move(state: CircuitState): void {
    this.current = state;
    this.changed(state);
  }
}

/**
 * A channel's providers in order of preference, each behind its breaker. A send goes to the first provider whose
 * circuit lets it through; a provider-side failure (5xx, timeout, refused connection) moves it to the next one; a
 * refusal of the recipient or the message is final and goes nowhere else. When no provider took it, the error is
 * transient: the worker retries the send later with backoff.
 */
export class FailoverProvider implements ChannelProvider {
  readonly name: string;
  private readonly chain: { provider: ChannelProvider; breaker: CircuitBreaker }[];

  constructor(
    providers: ChannelProvider[],
    private readonly channel: 'sms' | 'email',
    settings: CircuitSettings,
    clock: Clock,
    private readonly observer: ProviderObserver,
  ) {
    this.name = providers.map((p) => p.name).join(',');
    this.chain = providers.map((provider) => {
      observer.circuitState(provider.name, channel, 'closed');
      return { provider, breaker: new CircuitBreaker(settings, clock, (state) => observer.circuitState(provider.name, channel, state)) };
    });
  }

  /** Each provider's circuit, in order (the admin dashboard shows them). */
  circuits(): { provider: string; channel: 'sms' | 'email'; state: CircuitState }[] {
    return this.chain.map(({ provider, breaker }) => ({ provider: provider.name, channel: this.channel, state: breaker.state }));
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const failures: string[] = [];
    for (const { provider, breaker } of this.chain) {
      if (!breaker.tryAcquire()) {
        this.observer.sendOutcome(provider.name, this.channel, 'skipped');
        failures.push(`${provider.name}: circuit open`);
        continue;
      }
      try {
        const result = await provider.send(message);
        breaker.succeeded();
        this.observer.sendOutcome(provider.name, this.channel, 'sent');
        return { ...result, provider: provider.name };
      } catch (err) {
        if (err instanceof ProviderError && err.permanent) {
          breaker.succeeded();
          this.observer.sendOutcome(provider.name, this.channel, 'rejected');
          throw err;
        }
        breaker.failed();
        this.observer.sendOutcome(provider.name, this.channel, 'failed');
        if (!(err instanceof ProviderError)) throw err;
        failures.push(`${provider.name}: ${err.message}`);
      }
    }
    throw new ProviderError(`PROVIDER_ERROR: no provider took the message (${failures.join('; ')})`, false);
  }

  async close(): Promise<void> {
    // One provider may sit in both chains (the simulator): each is closed once.
    const closing = new Set(this.chain.map(({ provider }) => provider));
    for (const provider of closing) if (provider.close) await provider.close();
  }
}

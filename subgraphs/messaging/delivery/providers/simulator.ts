import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { failureText } from '../reports';
import type { ChannelProvider, OutboundMessage, SendResult } from './provider';

/**
 * docs/api.md §5 simulator: takes SIM_SEND_DELAY_MS to send, reports the outcome
 * SIM_DELIVER_DELAY_MS later. An SMS to a number ending in 0000 fails; every
 * other message is delivered.
 */
export class SimulatorProvider implements ChannelProvider {
  readonly name = 'simulator';

  constructor(
    private readonly sendDelayMs: number,
    private readonly deliverDelayMs: number,
  ) {}

  async send(message: OutboundMessage): Promise<SendResult> {
    if (this.sendDelayMs > 0) await sleep(this.sendDelayMs);
    const fails = message.channel === 'sms' && message.to.replace(/\D/g, '').endsWith('0000');
    return {
      providerMessageId: `sim_${randomUUID()}`,
      status: 'sent',
      report: fails
        ? {
            status: 'failed',
            error: failureText('RECIPIENT_UNREACHABLE', 'Simulated carrier rejection: the number is unreachable'),
            afterMs: this.deliverDelayMs,
          }
        : { status: 'delivered', afterMs: this.deliverDelayMs },
    };
  }
}

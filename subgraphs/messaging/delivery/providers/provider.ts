/** One outgoing message as a channel provider sees it. */
export interface OutboundMessage {
  messageId: string;
  channel: 'sms' | 'email';
  to: string;
  subject: string | null;
  body: string;
  /** HTML alternative (email). */
  html?: string;
}

export interface SendResult {
  /** The provider's id of the message (status callbacks name it). */
  providerMessageId: string;
  /** What the provider's answer already proves. */
  status: 'sent' | 'delivered';
  /** Which provider took it, when the one asked was a failover chain. */
  provider?: string;
  /** The simulator's delivery report, due `afterMs` from now (a durable job). */
  report?: { status: 'delivered' | 'failed'; error?: string; afterMs: number };
}

/**
 * A provider refused or could not take the message. `permanent` errors (about the recipient or the message)
 * fail it at once; others are the provider's own failures: the next provider is tried, and when none took it
 * the send is retried with backoff until attempts run out.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** A way to reach a patient on one channel. */
export interface ChannelProvider {
  readonly name: string;
  send(message: OutboundMessage): Promise<SendResult>;
  close?(): Promise<void>;
}

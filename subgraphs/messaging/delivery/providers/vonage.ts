import { failureText, sendRefusal } from '../reports';
import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

export interface VonageSettings {
  apiKey: string;
  apiSecret: string;
  /** The sender: a number or an alphanumeric sender id. */
  from: string;
  /** https://rest.nexmo.com unless VONAGE_API_URL points elsewhere (a test double, a proxy). */
  apiUrl: string;
  /** Where Vonage posts delivery receipts; omitted when no public URL is configured. */
  callbackUrl?: string;
  /** A call not answered in this time is Vonage's failure. */
  timeoutMs: number;
}

interface VonageAnswer {
  messages?: { status?: string; 'message-id'?: string; 'error-text'?: string }[];
}

/**
 * SMS through Vonage's SMS API (`POST /sms/json`). Its answer is 200 with a status per message part: "0" is
 * taken, a refusal about the number or the text fails the message, any other status (throttling, its own
 * outage, our account) is Vonage's failure. Delivery receipts arrive on the callback. A long text is split into
 * parts by Vonage; the first part's id is the message's.
 */
export class VonageProvider implements ChannelProvider {
  readonly name = 'vonage';

  constructor(private readonly settings: VonageSettings) {}

  async send(message: OutboundMessage): Promise<SendResult> {
    const { apiKey, apiSecret, from, apiUrl, callbackUrl, timeoutMs } = this.settings;
    const form = new URLSearchParams({
      api_key: apiKey,
      api_secret: apiSecret,
      from,
      // Vonage takes the number in international form without the leading '+'.
      to: message.to.replace(/^\+/, ''),
      text: message.body,
      'client-ref': message.messageId,
    });
    // Text outside 7-bit ASCII goes as unicode so that it arrives as written.
    if (/[^\x20-\x7e\n\r]/.test(message.body)) form.set('type', 'unicode');
    if (callbackUrl) form.set('callback', callbackUrl);
    let response: Response;
    let answer: VonageAnswer;
    try {
      response = await fetch(`${apiUrl.replace(/\/$/, '')}/sms/json`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      answer = response.ok ? ((await response.json()) as VonageAnswer) : {};
    } catch (err) {
      throw new ProviderError(`Vonage not reachable: ${(err as Error).message}`, false);
    }
    if (!response.ok) throw new ProviderError(`Vonage answered ${response.status}`, false);
    const first = answer.messages?.[0];
    if (first?.status === '0' && first['message-id']) return { providerMessageId: first['message-id'], status: 'sent' };
    const detail = `Vonage status ${first?.status ?? 'missing'}: ${first?.['error-text'] ?? 'no reason given'}`;
    const refusal = sendRefusal('vonage', first?.status);
    throw refusal ? new ProviderError(failureText(refusal, detail), true) : new ProviderError(detail, false);
  }
}

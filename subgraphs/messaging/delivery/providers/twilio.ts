import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com unless TWILIO_API_URL points elsewhere (a test double, a proxy). */
  apiUrl: string;
  /** Where Twilio posts status callbacks; omitted when no public URL is configured. */
  statusCallbackUrl?: string;
}

const TIMEOUT_MS = 15_000;

/** SMS through Twilio's Messages REST API; statuses arrive on the status callback. */
export class TwilioProvider implements ChannelProvider {
  readonly name = 'twilio';

  constructor(private readonly settings: TwilioSettings) {}

  async send(message: OutboundMessage): Promise<SendResult> {
    const { accountSid, authToken, from, apiUrl, statusCallbackUrl } = this.settings;
    const form = new URLSearchParams({ To: message.to, From: from, Body: message.body });
    if (statusCallbackUrl) form.set('StatusCallback', statusCallbackUrl);
    let response: Response;
    try {
      response = await fetch(`${apiUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new ProviderError(`Twilio not reachable: ${(err as Error).message}`, false);
    }
    const body = (await response.json().catch(() => ({}))) as { sid?: string; status?: string; message?: string; code?: number };
    if (response.status === 429 || response.status >= 500) throw new ProviderError(`Twilio answered ${response.status}`, false);
    if (!response.ok || !body.sid) {
      throw new ProviderError(
        `Twilio refused the message (${response.status}${body.code ? ` code ${body.code}` : ''}): ${body.message ?? 'no reason given'}`,
        true,
      );
    }
    return { providerMessageId: body.sid, status: 'sent' };
  }
}

/** Twilio's MessageStatus values mapped onto ours (accepted/queued/sending say nothing new). */
export function twilioStatus(value: string): 'sent' | 'delivered' | 'failed' | undefined {
  switch (value) {
    case 'sent':
      return 'sent';
    case 'delivered':
    case 'read':
      return 'delivered';
    case 'undelivered':
    case 'failed':
      return 'failed';
    default:
      return undefined;
  }
}

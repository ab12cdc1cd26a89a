import { failureText, sendRefusal } from '../reports';
import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com unless TWILIO_API_URL points elsewhere (a test double, a proxy). */
  apiUrl: string;
  /** Where Twilio posts status callbacks; omitted when no public URL is configured. */
  statusCallbackUrl?: string;
  /** A call not answered in this time is Twilio's failure. */
  timeoutMs: number;
}

/** SMS through Twilio's Messages REST API; statuses arrive on the status callback. */
export class TwilioProvider implements ChannelProvider {
  readonly name = 'twilio';

  constructor(private readonly settings: TwilioSettings) {}

  async send(message: OutboundMessage): Promise<SendResult> {
    const { accountSid, authToken, from, apiUrl, statusCallbackUrl, timeoutMs } = this.settings;
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
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ProviderError(`Twilio not reachable: ${(err as Error).message}`, false);
    }
    let body: { sid?: string; status?: string; message?: string; code?: number } = {};
    try {
      body = (await response.json()) as typeof body;
    } catch (err) {
      // A body cut off by the time limit is as much Twilio's failure as no answer; a non-JSON one is judged by its status.
      if ((err as Error).name === 'TimeoutError') throw new ProviderError(`Twilio did not answer in time: ${(err as Error).message}`, false);
    }
    const detail = `Twilio ${response.status}${body.code ? ` code ${body.code}` : ''}: ${body.message ?? 'no reason given'}`;
    if (response.ok && body.sid) return { providerMessageId: body.sid, status: 'sent' };
    // Only a refusal about the recipient or the message is final; any other (429, 5xx, our account's 401) is Twilio's side.
    const refusal =
      response.status >= 400 && response.status < 500 ? sendRefusal('twilio', body.code === undefined ? undefined : String(body.code)) : undefined;
    throw refusal ? new ProviderError(failureText(refusal, detail), true) : new ProviderError(detail, false);
  }
}

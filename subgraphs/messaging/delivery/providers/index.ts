import type { Clock } from '../../../../common/clock';
import type { Config } from '../../../../common/config';
import { FailoverProvider, type ProviderObserver } from './failover';
import type { ChannelProvider } from './provider';
import { SimulatorProvider } from './simulator';
import { TwilioProvider } from './twilio';
import { VonageProvider } from './vonage';

export interface Providers {
  sms: FailoverProvider;
  email: FailoverProvider;
}

/** The public URLs providers post their delivery reports to (none without a public URL). */
export interface CallbackUrls {
  twilioStatusUrl?: string;
  vonageStatusUrl?: string;
}

/**
 * The channel providers the configuration asks for, in its order (SMS_PROVIDER; EMAIL_PROVIDER with one SMTP
 * relay per SMTP_URL entry, named `smtp`, `smtp2`, …), each channel a failover chain.
 * The SMTP provider's module loads only when it is asked for: nodemailer is a tenth of a second of every start otherwise.
 */
export async function createProviders(config: Config, observer: ProviderObserver, clock: Clock, callbacks: CallbackUrls = {}): Promise<Providers> {
  const simulator = new SimulatorProvider(config.SIM_SEND_DELAY_MS, config.SIM_DELIVER_DELAY_MS);
  const timeoutMs = config.PROVIDER_TIMEOUT_MS;
  const sms = config.SMS_PROVIDER.map((name): ChannelProvider => {
    switch (name) {
      case 'twilio':
        return new TwilioProvider({
          accountSid: config.TWILIO_ACCOUNT_SID!,
          authToken: config.TWILIO_AUTH_TOKEN!,
          from: config.TWILIO_FROM!,
          apiUrl: config.TWILIO_API_URL ?? 'https://api.twilio.com',
          statusCallbackUrl: callbacks.twilioStatusUrl,
          timeoutMs,
        });
      case 'vonage':
        return new VonageProvider({
          apiKey: config.VONAGE_API_KEY!,
          apiSecret: config.VONAGE_API_SECRET!,
          from: config.VONAGE_FROM!,
          apiUrl: config.VONAGE_API_URL ?? 'https://rest.nexmo.com',
          callbackUrl: callbacks.vonageStatusUrl,
          timeoutMs,
        });
      default:
        return simulator;
    }
  });
  let email: ChannelProvider[] = [simulator];
  if (config.EMAIL_PROVIDER === 'smtp') {
    const { SmtpEmailProvider } = await import('./email');
    email = config.SMTP_URL.map((url, i) => new SmtpEmailProvider(i === 0 ? 'smtp' : `smtp${i + 1}`, url, config.EMAIL_FROM, timeoutMs));
  }
  const circuit = { failureThreshold: config.PROVIDER_FAILURE_THRESHOLD, cooldownMs: config.PROVIDER_COOLDOWN_MS };
  return {
    sms: new FailoverProvider(sms, 'sms', circuit, clock, observer),
    email: new FailoverProvider(email, 'email', circuit, clock, observer),
  };
}

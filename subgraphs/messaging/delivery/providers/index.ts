import type { Config } from '../../../../common/config';
import type { ChannelProvider } from './provider';
import { SimulatorProvider } from './simulator';
import { TwilioProvider } from './twilio';

export interface Providers {
  sms: ChannelProvider;
  email: ChannelProvider;
}

/**
 * The channel providers the configuration asks for (SMS_PROVIDER, EMAIL_PROVIDER); `twilioStatusUrl` is the public callback route.
 * The SMTP provider's module loads only when it is asked for: nodemailer is a tenth of a second of every start otherwise.
 */
export async function createProviders(config: Config, callbacks: { twilioStatusUrl?: string } = {}): Promise<Providers> {
  const simulator = new SimulatorProvider(config.SIM_SEND_DELAY_MS, config.SIM_DELIVER_DELAY_MS);
  const sms =
    config.SMS_PROVIDER === 'twilio'
      ? new TwilioProvider({
          accountSid: config.TWILIO_ACCOUNT_SID!,
          authToken: config.TWILIO_AUTH_TOKEN!,
          from: config.TWILIO_FROM!,
          apiUrl: config.TWILIO_API_URL ?? 'https://api.twilio.com',
          statusCallbackUrl: callbacks.twilioStatusUrl,
        })
      : simulator;
  const email = config.EMAIL_PROVIDER === 'smtp' ? new (await import('./email')).SmtpEmailProvider(config.SMTP_URL!, config.EMAIL_FROM) : simulator;
  return { sms, email };
}

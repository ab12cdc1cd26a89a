import nodemailer, { type Transporter } from 'nodemailer';
import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

/**
 * Email over SMTP (nodemailer). SMTP has no delivery receipts: the receiving
 * server's 250 acceptance is the last thing we can know, so it counts as
 * `delivered`. 5xx answers fail the message; 4xx and connection problems are retried.
 */
export class SmtpEmailProvider implements ChannelProvider {
  readonly name = 'smtp';
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    const url = new URL(smtpUrl);
    const secure = url.protocol === 'smtps:';
    this.transport = nodemailer.createTransport({
      host: url.hostname,
      port: url.port ? Number(url.port) : secure ? 465 : 587,
      secure,
      ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
      // `?tls=insecure` accepts a self-signed certificate (a local relay in development).
      ...(url.searchParams.get('tls') === 'insecure' ? { tls: { rejectUnauthorized: false } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 15_000,
    });
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject ?? '',
        text: message.body,
        ...(message.html ? { html: message.html } : {}),
        headers: { 'X-CareGraph-Message-Id': message.messageId },
      });
      if (info.rejected && info.rejected.length > 0) throw new ProviderError(`The mail server refused ${info.rejected.join(', ')}`, true);
      return { providerMessageId: info.messageId, status: 'delivered' };
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      const code = (err as { responseCode?: number }).responseCode;
      throw new ProviderError(`SMTP: ${(err as Error).message}`, code !== undefined && code >= 500);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

import nodemailer, { type Transporter } from 'nodemailer';
import { failureText } from '../reports';
import { ProviderError, type ChannelProvider, type OutboundMessage, type SendResult } from './provider';

/**
 * Email over SMTP (nodemailer). SMTP has no delivery receipts: the receiving
 * server's 250 acceptance is the last thing we can know, so it counts as
 * `delivered`. A 5xx refusal of the recipient fails the message; 4xx answers and connection problems are the
 * relay's failure (the next relay is tried).
 */
export class SmtpEmailProvider implements ChannelProvider {
  private readonly transport: Transporter;

  constructor(
    /** `smtp` for the first relay, `smtp2`, … for the ones after it. */
    readonly name: string,
    smtpUrl: string,
    private readonly from: string,
    timeoutMs: number,
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
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
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
      if (info.rejected && info.rejected.length > 0)
        throw new ProviderError(failureText('RECIPIENT_INVALID', `The mail server refused ${info.rejected.join(', ')}`), true);
      return { providerMessageId: info.messageId, status: 'delivered' };
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      const code = (err as { responseCode?: number }).responseCode;
      // A 5xx to RCPT TO is about the address, to DATA about the message; any other (a 5xx to the connection
      // or to AUTH, a 4xx, no answer) is the relay's.
      const command = (err as { command?: string }).command;
      const refusal =
        code !== undefined && code >= 500 ? (command === 'RCPT TO' ? 'RECIPIENT_INVALID' : command === 'DATA' ? 'CONTENT_REJECTED' : undefined) : undefined;
      throw refusal
        ? new ProviderError(failureText(refusal, `SMTP: ${(err as Error).message}`), true)
        : new ProviderError(`SMTP ${this.name}: ${(err as Error).message}`, false);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/**
 * The one place where what a provider says about a message becomes CareGraph's status and error code
 * (docs/messaging.md, "Delivery reports"): its delivery callbacks, and its refusals when we send.
 */

/** The statuses a provider can move a message to. */
type ReportedStatus = 'sent' | 'delivered' | 'failed';

/** Why a message failed, the same for every provider. */
export type DeliveryErrorCode =
  'RECIPIENT_INVALID' | 'RECIPIENT_UNREACHABLE' | 'RECIPIENT_BLOCKED' | 'CONTENT_REJECTED' | 'EXPIRED' | 'PROVIDER_ERROR' | 'UNKNOWN';

export interface NormalizedReport {
  status: ReportedStatus;
  /** Set when `status` is failed. */
  errorCode?: DeliveryErrorCode;
}

/** Twilio's MessageStatus values (accepted, queued, sending and unknown ones say nothing new). */
const TWILIO_STATUS: Record<string, ReportedStatus> = { sent: 'sent', delivered: 'delivered', read: 'delivered', undelivered: 'failed', failed: 'failed' };

/** Twilio's error codes, on a callback (30xxx) or refusing a send (21xxx). */
const TWILIO_ERRORS: Record<string, DeliveryErrorCode> = {
  '21211': 'RECIPIENT_INVALID',
  '21614': 'RECIPIENT_INVALID',
  '21610': 'RECIPIENT_BLOCKED',
  '30003': 'RECIPIENT_UNREACHABLE',
  '30004': 'RECIPIENT_BLOCKED',
  '30005': 'RECIPIENT_INVALID',
  '30006': 'RECIPIENT_INVALID',
  '30007': 'CONTENT_REJECTED',
  '21617': 'CONTENT_REJECTED',
  '30008': 'UNKNOWN',
  '30001': 'PROVIDER_ERROR',
  '30002': 'PROVIDER_ERROR',
};

/** Vonage's delivery-receipt `status` values (`unknown` says nothing new). */
const VONAGE_STATUS: Record<string, NormalizedReport> = {
  accepted: { status: 'sent' },
  buffered: { status: 'sent' },
  delivered: { status: 'delivered' },
  expired: { status: 'failed', errorCode: 'EXPIRED' },
  failed: { status: 'failed' },
  rejected: { status: 'failed' },
};

/** Vonage's delivery-receipt `err-code` values. */
const VONAGE_ERRORS: Record<string, DeliveryErrorCode> = {
  '1': 'UNKNOWN',
  '2': 'RECIPIENT_UNREACHABLE',
  '3': 'RECIPIENT_INVALID',
  '4': 'RECIPIENT_BLOCKED',
  '5': 'PROVIDER_ERROR',
  '6': 'CONTENT_REJECTED',
  '7': 'RECIPIENT_UNREACHABLE',
  '8': 'PROVIDER_ERROR',
  '9': 'RECIPIENT_INVALID',
  '10': 'CONTENT_REJECTED',
  '11': 'RECIPIENT_INVALID',
  '12': 'RECIPIENT_UNREACHABLE',
  '13': 'RECIPIENT_BLOCKED',
  '14': 'RECIPIENT_BLOCKED',
  '15': 'RECIPIENT_BLOCKED',
  '99': 'UNKNOWN',
};

/**
 * Vonage's send answer, `messages[].status`, other than "0" (success): codes about the recipient or the message
 * fail it; every other code is the provider's (throttling, its outage, our account) and the next provider is tried.
 */
const VONAGE_SEND_REFUSALS: Record<string, DeliveryErrorCode> = {
  '6': 'RECIPIENT_INVALID',
  '7': 'RECIPIENT_BLOCKED',
  '12': 'CONTENT_REJECTED',
  '22': 'RECIPIENT_INVALID',
  '33': 'RECIPIENT_INVALID',
};

/** A provider's delivery callback as CareGraph's status and error code; undefined when it says nothing new. */
export function normalizeReport(provider: 'twilio' | 'vonage', status: string, errorCode: string | null): NormalizedReport | undefined {
  if (provider === 'twilio') {
    const target = TWILIO_STATUS[status];
    if (target !== 'failed') return target ? { status: target } : undefined;
    return { status: 'failed', errorCode: (errorCode && TWILIO_ERRORS[errorCode]) || 'UNKNOWN' };
  }
  const report = VONAGE_STATUS[status];
  if (!report || report.status !== 'failed') return report;
  return { status: 'failed', errorCode: report.errorCode ?? ((errorCode && VONAGE_ERRORS[errorCode]) || 'UNKNOWN') };
}

/** A refusal when sending: the error code when it is about the recipient or the message (the message fails), undefined when it is the provider's. */
export function sendRefusal(provider: 'twilio' | 'vonage', code: string | undefined): DeliveryErrorCode | undefined {
  if (code === undefined) return undefined;
  const refusal = provider === 'twilio' ? TWILIO_ERRORS[code] : VONAGE_SEND_REFUSALS[code];
  return refusal === 'PROVIDER_ERROR' || refusal === 'UNKNOWN' ? undefined : refusal;
}

/** The message's `error` text: the code first, then what the provider said. */
export function failureText(code: DeliveryErrorCode, detail: string): string {
  return `${code}: ${detail}`;
}

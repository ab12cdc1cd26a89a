/**
 * SMS provider webhooks (Twilio inbound messages and status callbacks) carry no
 * bearer token and no tenant: the gateway proves them by the provider's
 * signature and calls the graph as this identity, and messaging finds the
 * tenant from the message the webhook is about.
 */
export const PROVIDER_SUBJECT = 'system:sms-provider';
export const PROVIDER_TENANT = '*';

export function isProviderIdentity(identity: { sub: string; tenantId: string }): boolean {
  return identity.sub === PROVIDER_SUBJECT && identity.tenantId === PROVIDER_TENANT;
}

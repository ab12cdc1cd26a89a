import type { Identity } from '../../../common/auth/principal';
import { assertCan } from '../policy/rules';
import { tenantClient } from '../../../common/db/tenant-session';
import { messageByProviderId } from '../db/cross-tenant';
import { twilioStatus } from './providers/twilio';
import { advanceStatus, type StatusDeps } from './transitions';

/**
 * A provider's status callback (Twilio MessageStatus). Unknown statuses and
 * messages, duplicates and late reports change nothing; the answer says
 * whether this report moved the message.
 */
export async function recordProviderStatus(
  deps: StatusDeps,
  identity: Identity,
  providerMessageId: string,
  providerStatus: string,
  errorCode: string | null,
): Promise<boolean> {
  assertCan(identity, 'reportDeliveryStatus');
  const target = twilioStatus(providerStatus);
  if (!target) return false;
  // The callback names no tenant: the message it is about does.
  const message = await messageByProviderId(deps.prisma, 'twilio', providerMessageId);
  if (!message) return false;
  const { recorded } = await advanceStatus({ ...deps, prisma: tenantClient(deps.prisma, message.tenantId) }, { id: message.id }, target, {
    error: target === 'failed' ? `Carrier reported ${providerStatus}${errorCode ? ` (error ${errorCode})` : ''}` : null,
  });
  return recorded.length > 0;
}

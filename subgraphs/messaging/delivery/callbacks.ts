import type { Identity } from '../../../common/auth/principal';
import { forbidden } from '../../../common/errors';
import type { EventBus } from '../../../common/events/bus';
import type { MessagingPrisma } from '../db/client';
import { isProviderIdentity } from '../replies/provider-identity';
import { twilioStatus } from './providers/twilio';
import { advanceStatus } from './transitions';

/**
 * A provider's status callback (Twilio MessageStatus). Unknown statuses and
 * messages, duplicates and late reports change nothing; the answer says
 * whether this report moved the message.
 */
export async function recordProviderStatus(
  deps: { prisma: MessagingPrisma; events: EventBus },
  identity: Identity,
  providerMessageId: string,
  providerStatus: string,
  errorCode: string | null,
): Promise<boolean> {
  if (!isProviderIdentity(identity)) throw forbidden('Only the SMS provider reports delivery statuses');
  const target = twilioStatus(providerStatus);
  if (!target) return false;
  const { recorded } = await advanceStatus(deps.prisma, deps.events, { provider: 'twilio', providerMessageId }, target, {
    error: target === 'failed' ? `Carrier reported ${providerStatus}${errorCode ? ` (error ${errorCode})` : ''}` : null,
  });
  return recorded.length > 0;
}

import type { Identity } from '../../../common/auth/principal';
import { validationError } from '../../../common/errors';
import { assertCan } from '../policy/rules';
import { tenantClient } from '../../../common/db/tenant-session';
import { messageByProviderId } from '../db/cross-tenant';
import { failureText, normalizeReport } from './reports';
import { advanceStatus, type StatusDeps } from './transitions';

const REPORTING_PROVIDERS = ['twilio', 'vonage'] as const;

/**
 * A provider's delivery report (Twilio's status callback, Vonage's delivery receipt), mapped onto our lifecycle
 * and error codes in one place (reports.ts). Unknown statuses and messages, duplicates and late reports change
 * nothing; the answer says whether this report moved the message.
 */
export async function recordProviderStatus(
  deps: StatusDeps,
  identity: Identity,
  provider: string,
  providerMessageId: string,
  providerStatus: string,
  errorCode: string | null,
): Promise<boolean> {
  assertCan(identity, 'reportDeliveryStatus');
  if (!(REPORTING_PROVIDERS as readonly string[]).includes(provider)) {
    throw validationError(`provider must be one of ${REPORTING_PROVIDERS.join(', ')}`, [{ path: 'provider', message: 'unknown provider' }]);
  }
  const report = normalizeReport(provider as (typeof REPORTING_PROVIDERS)[number], providerStatus, errorCode);
  if (!report) return false;
  // The report names no tenant: the message it is about does.
  const message = await messageByProviderId(deps.prisma, provider, providerMessageId);
  if (!message) return false;
  const detail = `${provider} reported ${providerStatus}${errorCode ? ` (error ${errorCode})` : ''}`;
  const { recorded } = await advanceStatus({ ...deps, prisma: tenantClient(deps.prisma, message.tenantId) }, { id: message.id }, report.status, {
    error: report.status === 'failed' ? failureText(report.errorCode!, detail) : null,
  });
  return recorded.length > 0;
}

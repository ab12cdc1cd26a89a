/**
 * Subjects the platform's own components act as. They reach data through
 * explicit rules of the subgraphs' policy tables (never through the roles they
 * carry); the `system:` prefix is reserved, so a client token can never name one.
 */
export const SYSTEM_SUBJECTS = {
  /** Provider webhooks (inbound SMS, delivery statuses), proven by the provider's signature, in every tenant. */
  smsProvider: 'system:sms-provider',
  /** The messaging service calling the clinical record (contacts, appointments, a patient's reply). */
  messagingService: 'system:messaging',
  /** Messaging's reminder scheduler, sending the automatic appointment reminders of one tenant. */
  reminderScheduler: 'system:reminders',
  /** The scheduled retention purge (docs/privacy.md), acting in one tenant at a time. */
  retention: 'system:retention',
  /** The gateway reading a tenant's record (status and limits) before it serves a call. */
  gateway: 'system:gateway',
} as const;

/** The tenant of a reserved identity that acts in one tenant at a time, whichever it is (the reminder scheduler). */
export const EACH_TENANT = 'each tenant';

/** The tenant of an identity that acts across tenants (the SMS provider's webhooks only). */
export const ALL_TENANTS = '*';

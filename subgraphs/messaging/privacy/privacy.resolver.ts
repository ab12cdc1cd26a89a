import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';
import { MessagingErasure, MessagingRetentionPeriod, PatientExport } from './privacy.types';

@Resolver()
export class MessagingPrivacyResolver {
  @Mutation(() => MessagingErasure, {
    description: "Admin, on the patient's erasure request: deletes their messages, replies, preferences, events and webhook deliveries.",
  })
  erasePatientMessagingData(@Arg('patientId', () => ID) patientId: string, @Ctx() ctx: MessagingContext) {
    return ctx.privacy.erasePatient(patientId);
  }

  @Query(() => [MessagingRetentionPeriod], { description: "Admin: the tenant's retention periods of messaging data." })
  messagingRetention(@Ctx() ctx: MessagingContext) {
    return ctx.privacy.retention();
  }

  @Mutation(() => [MessagingRetentionPeriod], {
    description: "Admin: sets one retention period (days) of messaging data for the tenant, in its organisation's settings (logged as an organisation change).",
  })
  setMessagingRetention(
    @Arg('category', () => String) category: string,
    @Arg('days', () => Int) days: number,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.privacy.setRetention(category, days, reason);
  }

  @Mutation(() => PatientExport, { description: "Starts a subject access export of a patient's data (admin, or the patient for their own)." })
  requestPatientExport(@Arg('patientId', () => ID) patientId: string, @Ctx() ctx: MessagingContext) {
    return ctx.patientExports.request(patientId);
  }

  @Query(() => PatientExport, { description: 'An export job: status and progress.' })
  patientExport(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.patientExports.get(id);
  }

  @Query(() => String, { description: "One chunk (base64) of a finished export's ZIP; reading chunk 0 records a download." })
  patientExportChunk(@Arg('id', () => ID) id: string, @Arg('seq', () => Int) seq: number, @Ctx() ctx: MessagingContext) {
    return ctx.patientExports.chunk(id, seq);
  }
}

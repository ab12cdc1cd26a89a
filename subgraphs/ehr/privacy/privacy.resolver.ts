import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { RecordRestriction, RecordRetentionPeriod, RecordRights } from './privacy.types';

@Resolver()
export class RecordPrivacyResolver {
  @Query(() => RecordRestriction, { description: "Admin: whether a patient's record is restricted, when it will be deleted, and its legal hold." })
  recordRestriction(@Arg('patientId', () => ID) patientId: string, @Ctx() ctx: EhrContext) {
    return ctx.privacy.status(patientId);
  }

  @Mutation(() => RecordRestriction, {
    description: "Admin, on the patient's erasure or restriction request: the record is no longer processed and is deleted at the end of its retention period.",
  })
  restrictPatientRecord(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.privacy.restrict(patientId, reason);
  }

  @Query(() => [ID], { description: "Admin and the messaging service: the ids of the tenant's patients under legal hold." })
  legalHolds(@Ctx() ctx: EhrContext) {
    return ctx.privacy.legalHolds();
  }

  @Query(() => [RecordRights], {
    description: "Admin (privacy review): the tenant's records restricted on an erasure or restriction request, or under legal hold.",
  })
  recordRestrictions(@Ctx() ctx: EhrContext) {
    return ctx.privacy.restrictions();
  }

  @Mutation(() => RecordRestriction, { description: 'Admin: sets or lifts a legal hold on a patient record.' })
  setLegalHold(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('hold', () => Boolean) hold: boolean,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.privacy.setLegalHold(patientId, hold, reason);
  }

  @Query(() => [RecordRetentionPeriod], { description: "Admin: the tenant's retention periods of clinical data." })
  recordRetention(@Ctx() ctx: EhrContext) {
    return ctx.privacy.retention();
  }

  @Mutation(() => [RecordRetentionPeriod], { description: 'Admin: sets one retention period (days) of clinical data for the tenant.' })
  setRecordRetention(
    @Arg('category', () => String) category: string,
    @Arg('days', () => Int) days: number,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.privacy.setRetention(category, days, reason);
  }
}

import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { Consent } from '../consents/consent.types';
import { AccessFlagEnum, AccessLogReview, AccessReviewPage, AccessReviewReport } from './access-review.types';

const DATE = 'YYYY-MM-DD (to: that day included) or an ISO 8601 timestamp.';

@Resolver()
export class AccessReviewResolver {
  @Query(() => AccessReviewPage, { description: "Admin (privacy review): the tenant's access log with flags and reviews, newest first; limit 1..100." })
  accessLogReview(
    @Arg('from', () => String, { nullable: true, description: DATE }) from: string | null,
    @Arg('to', () => String, { nullable: true, description: DATE }) to: string | null,
    @Arg('patientId', () => ID, { nullable: true }) patientId: string | null,
    @Arg('actor', () => String, { nullable: true }) actor: string | null,
    @Arg('flag', () => AccessFlagEnum, { nullable: true, description: 'Only entries with this flag.' }) flag: AccessFlagEnum | null,
    @Arg('flagged', () => Boolean, { nullable: true, description: 'true: only entries with a flag; false: only entries without one.' })
    flagged: boolean | null,
    @Arg('reviewed', () => Boolean, { nullable: true, description: 'true: only reviewed entries; false: only entries not yet reviewed.' })
    reviewed: boolean | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.accessReview.list({ from, to, patientId, actor, flag, flagged, reviewed }, limit, offset);
  }

  @Mutation(() => [AccessLogReview], {
    description: 'Admin (privacy review): marks 1..100 access-log entries reviewed, with a note; audited. An entry already reviewed is a CONFLICT.',
  })
  markAccessLogReviewed(
    @Arg('entryIds', () => [ID]) entryIds: string[],
    @Arg('note', () => String, { nullable: true }) note: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.accessReview.markReviewed(entryIds, note);
  }

  @Query(() => AccessReviewReport, { description: "Admin (privacy review): the tenant's periodic access-log review report for a period." })
  accessReviewReport(
    @Arg('from', () => String, { description: DATE }) from: string,
    @Arg('to', () => String, { description: DATE }) to: string,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.accessReview.report({ from, to });
  }

  @Query(() => [Consent], {
    description: "Admin (privacy review): one patient's consents (one per purpose, recorded or default), or every consent decision recorded in the tenant.",
  })
  consentRegister(@Arg('patientId', () => ID, { nullable: true }) patientId: string | null, @Ctx() ctx: EhrContext) {
    return ctx.accessReview.consents(patientId);
  }
}

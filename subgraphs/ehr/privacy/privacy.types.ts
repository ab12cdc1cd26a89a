import { Field, ID, ObjectType } from 'type-graphql';
import { retentionPeriodType } from '../../../common/graphql/retention-period';

@ObjectType({ description: "A patient's record under the data subject's rights (GDPR art. 17/18): restriction, scheduled deletion, legal hold." })
export class RecordRestriction {
  @Field(() => ID)
  patientId!: string;

  @Field(() => Date, { nullable: true, description: 'When the record was restricted; null while it is processed normally.' })
  restrictedAt!: Date | null;

  @Field(() => Date, { nullable: true, description: 'When the retention purge deletes the restricted record (unless under legal hold).' })
  deleteAfter!: Date | null;

  @Field(() => Boolean, { description: 'A legal hold keeps the record and its access log past deleteAfter.' })
  legalHold!: boolean;
}

@ObjectType({ description: 'A record restricted or under legal hold, with who set the restriction and the hold and why (their audit records).' })
export class RecordRights extends RecordRestriction {
  @Field(() => String, { nullable: true, description: 'Who restricted the record (null while it is not restricted).' })
  restrictedBy!: string | null;

  @Field(() => String, { nullable: true, description: 'The reason given with the restriction, e.g. the erasure request.' })
  restrictionReason!: string | null;

  @Field(() => String, { nullable: true, description: 'Who set the legal hold (null while there is none).' })
  legalHoldBy!: string | null;

  @Field(() => String, { nullable: true })
  legalHoldReason!: string | null;
}

export const RecordRetentionPeriod = retentionPeriodType(
  'RecordRetentionPeriod',
  "One retention period of the clinical record's data for the tenant.",
  'clinical_record | audit | access_log',
);

import { Field, ID, Int, ObjectType } from 'type-graphql';

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

@ObjectType({ description: "One retention period of the clinical record's data for the tenant." })
export class RecordRetentionPeriod {
  @Field(() => String, { description: 'clinical_record | audit | access_log' })
  category!: string;

  @Field(() => Int)
  days!: number;

  @Field(() => String, { description: 'The regulation the default follows.' })
  rule!: string;

  @Field(() => String, { description: 'default | tenant' })
  source!: string;
}

import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Pagination } from '../../../common/graphql/pagination';
import { graphqlEnum } from '../common/types';
import { ACCESS_FLAGS, type AccessFlag } from './access-review.service';
import { AccessLogEntry } from './audit.types';

export const AccessFlagEnum = graphqlEnum(ACCESS_FLAGS);
export type AccessFlagEnum = AccessFlag;
registerEnumType(AccessFlagEnum, {
  name: 'AccessFlag',
  description: 'What the privacy review flags in an access-log entry (docs/admin.md "Privacy").',
  valuesConfig: {
    OUTSIDE_TREATMENT: {
      description: "No known grounds, or treatment grounds by an actor who is not the practitioner of any of the patient's appointments.",
    },
    BREAK_GLASS: { description: 'Declared as emergency treatment (purpose ETREAT).' },
    BULK: { description: 'The actor read at least 10 patients within 5 minutes either side of this entry.' },
    AGENT: { description: 'Read by an AI agent (an OAuth client), an integration, or for a responsible user other than the actor.' },
  },
});

@ObjectType({ description: "The privacy officer's review of one access-log entry; final once made." })
export class AccessLogReview {
  @Field(() => ID)
  entryId!: string;

  @Field(() => String)
  reviewedBy!: string;

  @Field(() => Date)
  reviewedAt!: Date;

  @Field(() => String, { nullable: true })
  note!: string | null;

  @Field(() => [AccessFlagEnum], { description: 'The entry’s flags when it was reviewed.' })
  flags!: AccessFlag[];
}

@ObjectType({ description: 'An access-log entry as the privacy review sees it: its flags and its review.' })
export class AccessReviewEntry extends AccessLogEntry {
  @Field(() => [AccessFlagEnum])
  flags!: AccessFlag[];

  @Field(() => AccessLogReview, { nullable: true, description: 'Null while the entry is not reviewed.' })
  review!: AccessLogReview | null;
}

@ObjectType()
export class AccessReviewPage {
  @Field(() => [AccessReviewEntry])
  data!: AccessReviewEntry[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@ObjectType()
export class AccessFlagCount {
  @Field(() => AccessFlagEnum)
  flag!: AccessFlag;

  @Field(() => Int)
  entries!: number;

  @Field(() => Int)
  unreviewed!: number;
}

@ObjectType({ description: "The tenant's periodic access-log review report (NEN 7513) for a period." })
export class AccessReviewReport {
  @Field(() => String)
  tenantId!: string;

  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;

  @Field(() => Date)
  generatedAt!: Date;

  @Field(() => String)
  generatedBy!: string;

  @Field(() => Int, { description: 'Entries of the period that name a patient.' })
  entries!: number;

  @Field(() => Int)
  patients!: number;

  @Field(() => Int)
  actors!: number;

  @Field(() => Int, { description: 'Entries with at least one flag.' })
  flagged!: number;

  @Field(() => Int)
  unreviewedFlagged!: number;

  @Field(() => [AccessFlagCount])
  flags!: AccessFlagCount[];

  @Field(() => [AccessReviewEntry], { description: 'Flagged entries not yet reviewed, newest first (at most 100).' })
  unreviewed!: AccessReviewEntry[];

  @Field(() => Int, { description: 'Reviews made during the period.' })
  reviewsDone!: number;

  @Field(() => [AccessLogReview], { description: 'Reviews made during the period, newest first (at most 100).' })
  reviews!: AccessLogReview[];

  @Field(() => Int, { description: 'The bulk flag: this many patients…' })
  bulkPatients!: number;

  @Field(() => Int, { description: '…within this many minutes either side of an entry.' })
  bulkWindowMinutes!: number;
}

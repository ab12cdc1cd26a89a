import { Field, ID, Int, ObjectType } from 'type-graphql';
import { retentionPeriodType } from '../../../common/graphql/retention-period';

@ObjectType({ description: "What erasing a patient's messaging data deleted (rows per table)." })
export class MessagingErasure {
  @Field(() => ID)
  patientId!: string;

  @Field(() => Int)
  messages!: number;

  @Field(() => Int)
  replies!: number;

  @Field(() => Int)
  preferenceChanges!: number;

  @Field(() => Int)
  preferences!: number;

  @Field(() => Int)
  events!: number;

  @Field(() => Int)
  webhookDeliveries!: number;
}

export const MessagingRetentionPeriod = retentionPeriodType(
  'MessagingRetentionPeriod',
  'One retention period of messaging data for the tenant.',
  'messages | webhook_deliveries',
);

@ObjectType({ description: 'A subject access export (GDPR art. 15/20): queued → running → done (or failed); the ZIP is kept until expiresAt.' })
export class PatientExport {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String, { description: 'queued | running | done | failed | expired' })
  status!: string;

  @Field(() => Int, { description: 'Percent of the archive written.' })
  progress!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Int, { nullable: true, description: 'Bytes of the finished ZIP.' })
  size!: number | null;

  @Field(() => Int, { description: 'Chunks of the finished ZIP (patientExportChunk seq 0..chunks-1).' })
  chunks!: number;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  completedAt!: Date | null;

  @Field(() => Date)
  expiresAt!: Date;
}

import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A patient reply and what it did.' })
export class ReplyResult {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: 'The message replied to.' })
  messageId!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String, { nullable: true, description: 'C, YES, CONFIRM, X, CANCEL, STOP or START when the reply was one.' })
  keyword!: string | null;

  @Field(() => String, {
    description: 'none | confirmed | cancelled | opted_out | opted_in | ignored | pending (a C/X reply the clinical record has not taken yet; retried)',
  })
  action!: string;

  @Field(() => Date)
  receivedAt!: Date;
}

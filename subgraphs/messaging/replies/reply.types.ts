import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A patient reply and what it did.' })
export class ReplyResult {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: 'The message replied to.' })
  messageId!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String, {
    nullable: true,
    description:
      "The keyword the reply was (upper case, without accents): a reminder word (C, YES, CONFIRM, X, CANCEL) or an opt-out, opt-in or help word of English or the patient's language.",
  })
  keyword!: string | null;

  @Field(() => String, {
    description:
      'none | confirmed | cancelled | opted_out | opted_in | help (answered with the automatic help reply) | ignored | pending (a C/X reply the clinical record has not taken yet; retried)',
  })
  action!: string;

  @Field(() => Date)
  receivedAt!: Date;
}

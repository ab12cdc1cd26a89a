import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A message sent to a patient from a template.' })
@Directive('@key(fields: "id")')
export class Message {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String)
  templateId!: string;

  @Field(() => String, { description: 'sms | email' })
  channel!: string;

  @Field(() => String, { description: 'The rendered text.' })
  body!: string;

  @Field(() => String, { description: 'queued | sending | sent | delivered | failed' })
  status!: string;

  @Field(() => String, { nullable: true, description: 'Why delivery failed.' })
  error!: string | null;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType()
export class Pagination {
  @Field(() => Int)
  limit!: number;

  @Field(() => Int)
  offset!: number;

  @Field(() => Int)
  total!: number;
}

@ObjectType()
export class MessagePage {
  @Field(() => [Message])
  data!: Message[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

import { Directive, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Pagination } from '../../../common/graphql/pagination';

@ObjectType({ description: 'One status a message reached, and when.' })
export class StatusChange {
  @Field(() => String)
  status!: string;

  @Field(() => Date)
  at!: Date;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

@ObjectType({ description: 'A message sent to a patient from a template.' })
@Directive('@key(fields: "id")')
export class Message {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String)
  templateId!: string;

  @Field(() => Int)
  templateVersion!: number;

  @Field(() => String)
  language!: string;

  @Field(() => String, { description: 'sms | email' })
  channel!: string;

  @Field(() => GraphQLJSONObject, { description: 'The template variables, as validated.' })
  variables!: Record<string, string>;

  @Field(() => String, { nullable: true, description: 'Email subject.' })
  subject!: string | null;

  @Field(() => String, { description: 'The rendered text.' })
  body!: string;

  @Field(() => String, { description: 'scheduled | queued | sending | sent | delivered | failed | cancelled' })
  status!: string;

  @Field(() => String, { nullable: true, description: 'Why delivery failed: a CareGraph error code (RECIPIENT_INVALID, …), a colon, what the provider said.' })
  error!: string | null;

  @Field(() => String, { nullable: true, description: 'The provider that took the message (twilio, vonage, simulator, smtp, …); null until one has.' })
  provider!: string | null;

  @Field(() => ID, { nullable: true, description: 'The appointment a reminder is about.' })
  appointmentId!: string | null;

  @Field(() => Date, { description: 'Earliest send time: sendAt when scheduled, later than createdAt when quiet hours hold the message.' })
  dueAt!: Date;

  @Field(() => Date, { nullable: true, description: 'The time the sender scheduled it for; null for a send now.' })
  sendAt!: Date | null;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => [StatusChange])
  statusHistory!: StatusChange[];
}

@ObjectType()
export class MessagePage {
  @Field(() => [Message])
  data!: Message[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@InputType()
export class SendMessageInput {
  @Field(() => ID)
  patientId!: string;

  @Field(() => String)
  templateId!: string;

  @Field(() => String, { description: 'sms | email' })
  channel!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Variable name → string value.' })
  variables?: Record<string, unknown> | null;

  @Field(() => String, {
    nullable: true,
    description: 'ISO 8601 with an offset, 1 minute to 35 days ahead: the message stays scheduled until then. Absent: send now.',
  })
  sendAt?: string | null;
}

@ObjectType()
export class BatchItemError {
  @Field(() => String)
  code!: string;

  @Field(() => String)
  message!: string;
}

@ObjectType({ description: 'One item of a batch: the queued message, or why it was refused.' })
export class BatchItemResult {
  @Field(() => Int)
  index!: number;

  @Field(() => ID, { nullable: true })
  id?: string;

  @Field(() => String, { nullable: true })
  status?: string;

  @Field(() => Date, { nullable: true })
  createdAt?: Date;

  @Field(() => BatchItemError, { nullable: true })
  error?: BatchItemError;
}

@ObjectType()
export class BatchSendResult {
  @Field(() => [BatchItemResult])
  results!: BatchItemResult[];

  @Field(() => Int)
  accepted!: number;

  @Field(() => Int)
  rejected!: number;
}

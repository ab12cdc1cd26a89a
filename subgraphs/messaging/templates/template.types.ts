import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class TemplateVariable {
  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'string | date (YYYY-MM-DD) | time (HH:MM)' })
  type!: string;

  @Field(() => Boolean)
  required!: boolean;
}

@ObjectType({ description: 'A message template with typed variables.' })
export class MessageTemplate {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  version!: number;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  channel!: string;

  @Field(() => String)
  language!: string;

  @Field(() => String)
  body!: string;

  @Field(() => [TemplateVariable])
  variables!: TemplateVariable[];
}

@ObjectType()
export class TemplateList {
  @Field(() => [MessageTemplate])
  data!: MessageTemplate[];
}

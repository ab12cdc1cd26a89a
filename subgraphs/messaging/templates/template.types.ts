import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class TemplateVariable {
  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'string | date (YYYY-MM-DD) | time (HH:MM)' })
  type!: string;

  @Field(() => Boolean)
  required!: boolean;
}

@ObjectType({ description: 'A message template with typed variables, one per language; `version` counts its edits.' })
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

  @Field(() => String, { nullable: true, description: 'Email subject (may use variables).' })
  subject!: string | null;

  @Field(() => String, { description: '{{name}} inserts a variable; {{#name}}…{{/name}} only when it is given.' })
  body!: string;

  @Field(() => [TemplateVariable])
  variables!: TemplateVariable[];
}

@ObjectType()
export class TemplateList {
  @Field(() => [MessageTemplate])
  data!: MessageTemplate[];
}

@InputType()
export class TemplateVariableInput {
  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'string | date | time' })
  type!: 'string' | 'date' | 'time';

  @Field(() => Boolean)
  required!: boolean;
}

@InputType()
export class TemplateInput {
  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'sms | email' })
  channel!: string;

  @Field(() => String, { nullable: true, description: "Language tag, default 'en'." })
  language?: string | null;

  @Field(() => String, { nullable: true })
  subject?: string | null;

  @Field(() => String)
  body!: string;

  @Field(() => [TemplateVariableInput])
  variables!: TemplateVariableInput[];
}

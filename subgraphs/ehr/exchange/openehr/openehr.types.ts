import { GraphQLJSON } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One openEHR answer: its JSON body, version uid and time.' })
export class OpenEhrResult {
  @Field(() => GraphQLJSON, { nullable: true })
  body?: unknown;

  @Field(() => String, { nullable: true, description: 'Version uid of the answered resource (the EHR id for an EHR).' })
  uid?: string;

  @Field(() => Date, { nullable: true })
  lastModified?: Date;

  @Field(() => Boolean, { nullable: true, description: 'Logically deleted.' })
  deleted?: boolean;
}

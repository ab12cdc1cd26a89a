import { GraphQLJSON } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One openEHR REST answer: its JSON body and what the HTTP headers carry.' })
export class OpenEhrResult {
  @Field(() => GraphQLJSON, { nullable: true })
  body?: unknown;

  @Field(() => String, { nullable: true, description: 'Version uid (ETag).' })
  uid?: string;

  @Field(() => Date, { nullable: true })
  lastModified?: Date;

  @Field(() => String, { nullable: true, description: 'Path below /openehr/v1 (Location).' })
  location?: string;

  @Field(() => Boolean, { nullable: true, description: 'Logically deleted (REST answers 204).' })
  deleted?: boolean;
}

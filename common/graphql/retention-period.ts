import { Field, Int, ObjectType } from 'type-graphql';

/**
 * The GraphQL type of one retention period of the tenant's data: each subgraph
 * publishes its own, under its own name and with its own categories.
 */
export function retentionPeriodType(name: string, description: string, categories: string) {
  @ObjectType(name, { description })
  class RetentionPeriod {
    @Field(() => String, { description: categories })
    category!: string;

    @Field(() => Int)
    days!: number;

    @Field(() => String, { description: 'The regulation the default follows.' })
    rule!: string;

    @Field(() => String, { description: 'default | tenant' })
    source!: string;
  }
  return RetentionPeriod;
}

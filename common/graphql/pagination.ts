import { Directive, Field, Int, ObjectType } from 'type-graphql';

/** Where a page sits in a list; every subgraph's paged lists share this one type. */
@Directive('@shareable')
@ObjectType('Pagination', { description: 'Position of a page in a list.' })
export class Pagination {
  @Field(() => Int)
  limit!: number;

  @Field(() => Int)
  offset!: number;

  @Field(() => Int)
  total!: number;
}

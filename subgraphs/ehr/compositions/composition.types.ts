import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DataAreaEnum } from '../common/types';
import { Pagination } from '../../../common/graphql/pagination';

@ObjectType({ description: 'One version of a composition (a clinical document or record).' })
export class Composition {
  @Field(() => ID, { description: 'Version uid <uuid>::<system-id>::<version>.' })
  uid!: string;

  @Field(() => ID, { description: "The versioned object's uuid (the same for every version)." })
  id!: string;

  @Field(() => ID)
  ehrId!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => String)
  templateId!: string;

  @Field(() => DataAreaEnum)
  area!: DataAreaEnum;

  @Field(() => Int)
  version!: number;

  @Field(() => String, { description: 'creation | modification | deleted' })
  changeType!: string;

  @Field(() => String, { description: 'complete | deleted' })
  lifecycleState!: string;

  @Field(() => Date)
  committedAt!: Date;

  @Field(() => String)
  committer!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'null for the deletion version.' })
  content!: Record<string, unknown> | null;
}

@ObjectType()
export class CompositionPage {
  @Field(() => [Composition])
  data!: Composition[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@InputType()
export class CreateCompositionInput {
  @Field(() => String)
  templateId!: string;

  @Field(() => ID)
  ehrId!: string;

  @Field(() => GraphQLJSONObject)
  content!: Record<string, unknown>;
}

@InputType({ description: 'Filters of composition lists; from/to (YYYY-MM-DD or ISO 8601) bound the first commit.' })
export class CompositionFilter {
  @Field(() => ID, { nullable: true })
  patientId?: string | null;

  @Field(() => ID, { nullable: true })
  ehrId?: string | null;

  @Field(() => DataAreaEnum, { nullable: true })
  area?: DataAreaEnum | null;

  @Field(() => String, { nullable: true })
  templateId?: string | null;

  @Field(() => String, { nullable: true })
  from?: string | null;

  @Field(() => String, { nullable: true })
  to?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Include logically deleted compositions (their deletion version).' })
  includeDeleted?: boolean | null;
}

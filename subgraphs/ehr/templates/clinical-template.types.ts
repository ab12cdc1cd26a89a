import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { DataAreaEnum } from '../common/types';

@ObjectType({ description: "A tenant's operational template: the structure and constraints compositions must follow." })
export class ClinicalTemplate {
  @Field(() => ID, { description: '<name>.v<version>, e.g. vital_signs.v1' })
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => DataAreaEnum)
  area!: DataAreaEnum;

  @Field(() => GraphQLJSONObject, { description: 'Constraint tree (see docs/clinical-record.md).' })
  definition!: Record<string, unknown>;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => String)
  createdBy!: string;
}

@ObjectType({ description: 'A reusable clinical model from the archetype library.' })
export class ClinicalArchetype {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  description!: string;

  @Field(() => GraphQLJSONObject)
  definition!: Record<string, unknown>;
}

@InputType()
export class UploadTemplateInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => DataAreaEnum)
  area!: DataAreaEnum;

  @Field(() => GraphQLJSONObject)
  definition!: Record<string, unknown>;
}

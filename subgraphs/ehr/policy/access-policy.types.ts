import { Field, ObjectType } from 'type-graphql';
import { AccessAreaEnum, ConfigurableRoleEnum } from '../common/types';

@ObjectType({ description: 'What one staff role may do with one area of the record in this tenant.' })
export class AccessPolicyEntry {
  @Field(() => ConfigurableRoleEnum)
  role!: ConfigurableRoleEnum;

  @Field(() => AccessAreaEnum)
  area!: AccessAreaEnum;

  @Field(() => Boolean)
  canRead!: boolean;

  @Field(() => Boolean)
  canWrite!: boolean;

  @Field(() => String, { description: 'default | tenant' })
  source!: string;

  @Field(() => Date, { nullable: true })
  updatedAt!: Date | null;

  @Field(() => String, { nullable: true })
  updatedBy!: string | null;
}

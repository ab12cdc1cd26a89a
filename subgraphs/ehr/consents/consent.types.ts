import { Field, ID, ObjectType } from 'type-graphql';
import { ConsentPurposeEnum } from '../common/types';

@ObjectType({ description: "A patient's consent for one purpose." })
export class Consent {
  @Field(() => ID)
  patientId!: string;

  @Field(() => ConsentPurposeEnum)
  purpose!: ConsentPurposeEnum;

  @Field(() => Boolean)
  granted!: boolean;

  @Field(() => Boolean, { description: "false: no decision recorded, the purpose's default applies (messaging granted, others not)." })
  recorded!: boolean;

  @Field(() => String, { nullable: true })
  note!: string | null;

  @Field(() => Date, { nullable: true })
  changedAt!: Date | null;

  @Field(() => String, { nullable: true })
  changedBy!: string | null;
}

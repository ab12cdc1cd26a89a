import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'openEHR EHR_STATUS.' })
export class EhrStatus {
  @Field(() => Boolean, { description: 'false: compositions are left out of lists and queries.' })
  isQueryable!: boolean;

  @Field(() => Boolean, { description: 'false: the EHR takes no new compositions.' })
  isModifiable!: boolean;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType({ description: 'The electronic health record of one patient.' })
export class Ehr {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => EhrStatus)
  status!: EhrStatus;
}

import { Directive, Field, ID, ObjectType } from 'type-graphql';

/** The clinical record's Patient, extended here with what messaging knows about them. */
@ObjectType()
@Directive('@key(fields: "id")')
export class Patient {
  @Field(() => ID)
  id!: string;
}

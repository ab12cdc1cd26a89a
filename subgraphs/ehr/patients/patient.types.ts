import { Directive, Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A person name as FHIR HumanName: given names and family name.' })
export class HumanName {
  @Field(() => [String])
  given!: string[];

  @Field(() => String)
  family!: string;
}

@ObjectType()
export class ContactDetails {
  @Field(() => String, { nullable: true })
  phone!: string | null;

  @Field(() => String, { nullable: true })
  email!: string | null;
}

@ObjectType({ description: 'Patient demographics, owned by the clinical record.' })
@Directive('@key(fields: "id")')
export class Patient {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The patient\'s EHR id.' })
  ehrId!: string;

  @Field(() => HumanName)
  name!: HumanName;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' })
  birthDate!: string | null;

  @Field(() => String, { nullable: true, description: 'male | female | other | unknown' })
  gender!: string | null;

  @Field(() => ContactDetails)
  contact!: ContactDetails;
}

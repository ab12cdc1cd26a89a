import { Directive, Field, ID, InputType, ObjectType } from 'type-graphql';
import { Pagination } from '../../../common/graphql/pagination';

@ObjectType({ description: 'A person name as FHIR HumanName: given names and family name; a patient registered without a name has neither.' })
export class HumanName {
  @Field(() => [String], { description: 'Empty when the patient has no given name.' })
  given!: string[];

  @Field(() => String, { nullable: true, description: 'Null when the patient has no family name.' })
  family!: string | null;
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

  @Field(() => String, { description: "The patient's EHR id." })
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

@ObjectType()
export class PatientPage {
  @Field(() => [Patient])
  data!: Patient[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@InputType({ description: 'A new patient; an EHR `ehr-<id>` is created with it.' })
export class PatientCreateInput {
  @Field(() => ID, { nullable: true, description: 'Defaults to a generated `p-<uuid>`.' })
  id?: string;

  @Field(() => [String])
  givenNames!: string[];

  @Field(() => String)
  family!: string;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' })
  birthDate?: string | null;

  @Field(() => String, { nullable: true, description: 'male | female | other | unknown' })
  gender?: string | null;

  @Field(() => String, { nullable: true, description: 'E.164, e.g. +31612345678' })
  phone?: string | null;

  @Field(() => String, { nullable: true })
  email?: string | null;
}

@InputType({ description: 'Fields to change; omitted fields stay as they are, null clears.' })
export class PatientUpdateInput {
  @Field(() => [String], { nullable: true })
  givenNames?: string[];

  @Field(() => String, { nullable: true })
  family?: string;

  @Field(() => String, { nullable: true })
  birthDate?: string | null;

  @Field(() => String, { nullable: true })
  gender?: string | null;

  @Field(() => String, { nullable: true })
  phone?: string | null;

  @Field(() => String, { nullable: true })
  email?: string | null;
}

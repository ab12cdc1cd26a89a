import { registerEnumType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { graphqlEnum } from '../common/types';
import { ContactDetails, Patient } from '../patients/patient.types';
import { CONTEXT_SECTIONS, type ContextSection } from './clinical-context.service';
import { PURPOSE_NAMES, type PurposeOfUse } from '../../../common/auth/purpose-of-use';

export const ContextSectionEnum = graphqlEnum(CONTEXT_SECTIONS);
export type ContextSectionEnum = ContextSection;
registerEnumType(ContextSectionEnum, {
  name: 'ClinicalContextSection',
  description: 'Parts of a clinical context; COMMUNICATION is answered by messaging through `patient` (preferences, messages).',
});

export const PurposeOfUseEnum = graphqlEnum(PURPOSE_NAMES);
export type PurposeOfUseEnum = PurposeOfUse;
registerEnumType(PurposeOfUseEnum, {
  name: 'PurposeOfUse',
  description:
    'Why the data is read; recorded in the access log as the HL7 v3 PurposeOfUse code (TREAT, CAREMGT, PATRQT, HOPERAT, ETREAT for emergency, which the privacy review flags as break-glass).',
});

@ObjectType({ description: 'A FHIR Coding: a code from a code system (LOINC, UCUM, EDQM, HL7 v3).' })
export class Coding {
  @Field(() => String)
  system!: string;
  @Field(() => String)
  code!: string;
  @Field(() => String, { nullable: true })
  display!: string | null;
}

@ObjectType({ description: 'A FHIR Quantity with a UCUM unit.' })
export class Quantity {
  @Field(() => Float)
  value!: number;
  @Field(() => String)
  unit!: string;
  @Field(() => String)
  system!: string;
  @Field(() => String)
  code!: string;
}

@ObjectType()
export class ContextObservationComponent {
  @Field(() => Coding, { nullable: true })
  code!: Coding | null;
  @Field(() => String, { nullable: true, description: 'Analyte name when the component has no code.' })
  text!: string | null;
  @Field(() => Quantity, { nullable: true })
  value!: Quantity | null;
  @Field(() => Coding, { nullable: true })
  interpretation!: Coding | null;
  @Field(() => String, { nullable: true })
  referenceRange!: string | null;
}

@ObjectType({ description: 'A vital sign or laboratory result (FHIR Observation).' })
export class ContextObservation {
  @Field(() => ID, { description: 'The FHIR Observation id.' })
  id!: string;
  @Field(() => String)
  compositionUid!: string;
  @Field(() => String)
  status!: string;
  @Field(() => String, { description: 'vital-signs | laboratory' })
  category!: string;
  @Field(() => Coding)
  code!: Coding;
  @Field(() => String, { nullable: true })
  text!: string | null;
  @Field(() => String, { description: 'When it was measured or the specimen collected (ISO 8601).' })
  effective!: string;
  @Field(() => Quantity, { nullable: true })
  value!: Quantity | null;
  @Field(() => Coding, { nullable: true })
  interpretation!: Coding | null;
  @Field(() => String, { nullable: true })
  referenceRange!: string | null;
  @Field(() => [ContextObservationComponent])
  components!: ContextObservationComponent[];
  @Field(() => String, { nullable: true, description: 'Free text (conclusion, position, rhythm); null when redacted.' })
  note!: string | null;
}

@ObjectType({ description: 'A medication order (FHIR MedicationRequest).' })
export class ContextMedication {
  @Field(() => ID)
  id!: string;
  @Field(() => String)
  compositionUid!: string;
  @Field(() => String, { description: 'active | completed' })
  status!: string;
  @Field(() => String)
  medication!: string;
  @Field(() => String)
  authoredOn!: string;
  @Field(() => Quantity, { nullable: true })
  dose!: Quantity | null;
  @Field(() => Float, { nullable: true })
  dosesPerDay!: number | null;
  @Field(() => Coding, { nullable: true, description: 'EDQM route of administration.' })
  route!: Coding | null;
  @Field(() => String, { nullable: true })
  start!: string | null;
  @Field(() => String, { nullable: true })
  end!: string | null;
  @Field(() => Boolean, { nullable: true })
  asNeeded!: boolean | null;
  @Field(() => String, { nullable: true, description: 'Free text; null when redacted.' })
  instructions!: string | null;
}

@ObjectType({ description: 'A clinical visit (FHIR Encounter).' })
export class ContextEncounter {
  @Field(() => ID)
  id!: string;
  @Field(() => String)
  compositionUid!: string;
  @Field(() => String, { description: 'in-progress | finished' })
  status!: string;
  @Field(() => Coding, { nullable: true, description: 'HL7 v3 ActCode encounter class.' })
  class!: Coding | null;
  @Field(() => String)
  start!: string;
  @Field(() => String, { nullable: true })
  end!: string | null;
  @Field(() => String, { nullable: true, description: 'Free text; null when redacted.' })
  reason!: string | null;
  @Field(() => String, { nullable: true })
  location!: string | null;
  @Field(() => ID, { nullable: true })
  appointmentId!: string | null;
}

@ObjectType({ description: 'A clinical note (FHIR DocumentReference).' })
export class ContextNote {
  @Field(() => ID)
  id!: string;
  @Field(() => String)
  compositionUid!: string;
  @Field(() => Coding, { nullable: true, description: 'LOINC document type.' })
  type!: Coding | null;
  @Field(() => String, { nullable: true, description: 'Free text; null when redacted.' })
  title!: string | null;
  @Field(() => String)
  date!: string;
  @Field(() => String, { nullable: true })
  author!: string | null;
  @Field(() => String, { nullable: true, description: 'The note text; null when redacted.' })
  text!: string | null;
}

@ObjectType({ description: 'An upcoming appointment (booked or confirmed).' })
export class ContextAppointment {
  @Field(() => ID)
  id!: string;
  @Field(() => Date)
  start!: Date;
  @Field(() => Date)
  end!: Date;
  @Field(() => String)
  status!: string;
  @Field(() => String, { nullable: true })
  location!: string | null;
}

@ObjectType({ description: 'Demographics, minimised: initials, birth year and age, gender; contact details only where role and consent allow.' })
export class ContextDemographics {
  @Field(() => ID)
  patientId!: string;
  @Field(() => String)
  initials!: string;
  @Field(() => Int, { nullable: true })
  birthYear!: number | null;
  @Field(() => Int, { nullable: true })
  ageYears!: number | null;
  @Field(() => String, { nullable: true })
  gender!: string | null;
  @Field(() => ContactDetails, { nullable: true, description: 'null when redacted.' })
  contact!: ContactDetails | null;
}

@ObjectType({ description: 'How much of a section the record holds and how much was returned.' })
export class ContextCoverage {
  @Field(() => ContextSectionEnum)
  section!: ContextSection;
  @Field(() => Int)
  total!: number;
  @Field(() => Int)
  returned!: number;
  @Field(() => Boolean)
  truncated!: boolean;
}

@ObjectType({ description: 'What this caller sees beyond coded data.' })
export class ContextDisclosure {
  @Field(() => Boolean)
  contactDetails!: boolean;
  @Field(() => Boolean)
  freeText!: boolean;
}

@ObjectType({ description: "One patient's clinical context: typed, FHIR-coded, purpose-bound and access-logged." })
export class ClinicalContext {
  @Field(() => ID)
  patientId!: string;
  @Field(() => PurposeOfUseEnum)
  purpose!: PurposeOfUse;
  @Field(() => String, { description: 'The HL7 v3 PurposeOfUse code recorded in the access log.' })
  purposeCode!: string;
  @Field(() => Date)
  generatedAt!: Date;
  @Field(() => Date, { nullable: true })
  since!: Date | null;
  @Field(() => Int)
  maxItems!: number;
  @Field(() => [ContextSectionEnum])
  sections!: ContextSection[];
  @Field(() => ContextDisclosure)
  disclosure!: ContextDisclosure;
  @Field(() => [ContextCoverage])
  coverage!: ContextCoverage[];
  @Field(() => ContextDemographics, { nullable: true })
  demographics!: ContextDemographics | null;
  @Field(() => [ContextMedication], { nullable: true })
  medications!: ContextMedication[] | null;
  @Field(() => [ContextObservation], { nullable: true })
  vitals!: ContextObservation[] | null;
  @Field(() => [ContextObservation], { nullable: true })
  labs!: ContextObservation[] | null;
  @Field(() => [ContextEncounter], { nullable: true })
  encounters!: ContextEncounter[] | null;
  @Field(() => [ContextNote], { nullable: true })
  notes!: ContextNote[] | null;
  @Field(() => [ContextAppointment], { nullable: true })
  appointments!: ContextAppointment[] | null;
  @Field(() => Patient, { description: 'The patient entity: messaging answers preferences and messages (the COMMUNICATION section).' })
  patient!: Patient;
}

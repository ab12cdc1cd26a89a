import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';

@ObjectType('EhrPagination', { description: 'Position of a page in a clinical list.' })
export class EhrPagination {
  @Field(() => Int)
  limit!: number;

  @Field(() => Int)
  offset!: number;

  @Field(() => Int)
  total!: number;
}

/** GraphQL enums of the clinical record use upper case; storage uses the lower-case names. */
export enum DataAreaEnum {
  ENCOUNTER = 'encounter',
  OBSERVATION = 'observation',
  ORDER = 'order',
  DOCUMENT = 'document',
}
registerEnumType(DataAreaEnum, { name: 'DataArea', description: 'Data areas of the clinical record that hold compositions.' });

export enum AccessAreaEnum {
  DEMOGRAPHICS = 'demographics',
  APPOINTMENT = 'appointment',
  CONSENT = 'consent',
  ENCOUNTER = 'encounter',
  OBSERVATION = 'observation',
  ORDER = 'order',
  DOCUMENT = 'document',
}
registerEnumType(AccessAreaEnum, { name: 'AccessArea', description: 'What an access-policy rule governs.' });

export enum ConsentPurposeEnum {
  MESSAGING = 'messaging',
  DATA_SHARING = 'data_sharing',
  RESEARCH = 'research',
  AI_ASSISTANCE = 'ai_assistance',
}
registerEnumType(ConsentPurposeEnum, { name: 'ConsentPurpose' });

export enum ConfigurableRoleEnum {
  CLINICIAN = 'clinician',
  NURSE = 'nurse',
  RECEPTIONIST = 'receptionist',
  INTEGRATION = 'integration',
}
registerEnumType(ConfigurableRoleEnum, { name: 'ConfigurableRole', description: 'Staff roles whose permissions a tenant admin may change.' });

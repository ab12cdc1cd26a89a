import { registerEnumType } from 'type-graphql';
import {
  ACCESS_AREAS,
  CONFIGURABLE_ROLES,
  CONSENT_PURPOSES,
  DATA_AREAS,
  type AccessArea,
  type ConfigurableRole,
  type ConsentPurpose,
  type DataArea,
} from '../policy/rules';

/**
 * GraphQL enums of the clinical record use upper case; storage uses the lower-case names. Each enum is
 * built from the policy point's list, so a value is defined once.
 */
export function graphqlEnum<T extends string>(values: readonly T[]): { [K in T as Uppercase<K>]: K } {
  return Object.fromEntries(values.map((v) => [v.toUpperCase(), v])) as { [K in T as Uppercase<K>]: K };
}

export const DataAreaEnum = graphqlEnum(DATA_AREAS);
export type DataAreaEnum = DataArea;
registerEnumType(DataAreaEnum, { name: 'DataArea', description: 'Data areas of the clinical record that hold compositions.' });

export const AccessAreaEnum = graphqlEnum(ACCESS_AREAS);
export type AccessAreaEnum = AccessArea;
registerEnumType(AccessAreaEnum, { name: 'AccessArea', description: 'What an access-policy rule governs.' });

export const ConsentPurposeEnum = graphqlEnum(CONSENT_PURPOSES);
export type ConsentPurposeEnum = ConsentPurpose;
registerEnumType(ConsentPurposeEnum, { name: 'ConsentPurpose' });

export const ConfigurableRoleEnum = graphqlEnum(CONFIGURABLE_ROLES);
export type ConfigurableRoleEnum = ConfigurableRole;
registerEnumType(ConfigurableRoleEnum, { name: 'ConfigurableRole', description: 'Staff roles whose permissions a tenant admin may change.' });

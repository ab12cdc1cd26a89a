/**
 * The ehr subgraph's published interface: what other layers may use of it
 * besides its GraphQL schema. The gateway answers FHIR `GET /metadata` without
 * a token (FHIR R4: the CapabilityStatement is public), so it builds the
 * statement itself from the same definitions the subgraph searches with. Pure
 * functions: importing this module loads no resolver, database or server code
 * (test/layers.test.ts checks it).
 */
export { capabilityStatement as fhirCapabilityStatement } from './exchange/fhir/capability';

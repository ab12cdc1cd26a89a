import { resourceScopes } from './smart-scopes';

describe('SMART scopes', () => {
  it('[SEC-018] reads v2 interactions and the v1 forms, per context and resource type', () => {
    expect(resourceScopes('launch/patient openid fhirUser patient/Observation.rs user/*.cruds system/Patient.read patient/Encounter.write')).toEqual([
      { context: 'patient', resourceType: 'Observation', read: true, write: false },
      { context: 'user', resourceType: '*', read: true, write: true },
      { context: 'system', resourceType: 'Patient', read: true, write: false },
      { context: 'patient', resourceType: 'Encounter', read: false, write: true },
    ]);
    expect(resourceScopes('user/Observation.c user/Observation.s')).toEqual([
      { context: 'user', resourceType: 'Observation', read: false, write: true },
      { context: 'user', resourceType: 'Observation', read: true, write: false },
    ]);
  });

  it('[SEC-018] gives nothing for a scope it cannot read whole: wrong order, unknown letters, search filters, other contexts', () => {
    expect(
      resourceScopes(
        'user/Observation.rc patient/Observation.rsx patient/Observation.rs?category=laboratory practitioner/*.rs user/observation.rs user/Observation.',
      ),
    ).toEqual([]);
  });
});

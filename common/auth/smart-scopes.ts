/**
 * SMART App Launch 2.0 scopes (`patient/Observation.rs`, `user/*.cruds`, and the 1.0 forms `.read`, `.write`,
 * `.*`) as the clinical record's policy point reads them. A scope names a context (`patient`: the token's patient
 * only; `user` and `system`: whatever the roles reach), a FHIR resource type or `*`, and interactions: c(reate),
 * r(ead), u(pdate), d(elete), s(earch). Other scopes (`openid`, `fhirUser`, `launch/patient`, `offline_access`…)
 * grant no data. A resource scope that is not well formed grants nothing: a token is never given more than it
 * clearly names.
 */
export interface ResourceScope {
  context: 'patient' | 'user' | 'system';
  resourceType: string;
  /** read or search. */
  read: boolean;
  /** create, update or delete. */
  write: boolean;
}

const RESOURCE_SCOPE = /^(patient|user|system)\/(\*|[A-Z][A-Za-z]+)\.(read|write|\*|c?r?u?d?s?)$/;

/** The resource scopes of a `scope` claim (well-formed ones only). */
export function resourceScopes(scope: string): ResourceScope[] {
  return scope
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((text): ResourceScope[] => {
      // A search parameter suffix (`patient/Observation.rs?category=…`) narrows a scope in SMART 2.0; CareGraph
      // does not apply such filters, so such a scope grants nothing rather than more than it says.
      const match = RESOURCE_SCOPE.exec(text);
      if (!match || match[3] === '') return [];
      const [, context, resourceType, permissions] = match;
      const v1 = permissions === 'read' || permissions === 'write' || permissions === '*';
      const read = v1 ? permissions !== 'write' : /[rs]/.test(permissions);
      const write = v1 ? permissions !== 'read' : /[cud]/.test(permissions);
      return [{ context: context as ResourceScope['context'], resourceType, read, write }];
    });
}

import { buildFederatedSchema, type FederatedSchema } from '../../common/graphql/federation';
import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { FieldCipher } from '../../common/crypto';
import type { EhrPrisma } from './db/client';
import type { EhrContext } from './context';
import { PatientResolver, patientReference } from './patients/patient.resolver';
import { PatientService } from './patients/patient.service';
import { AppointmentResolver, appointmentReference } from './appointments/appointment.resolver';
import { AppointmentService } from './appointments/appointment.service';

export const EHR_SUBGRAPH = 'ehr';

export function buildEhrSchema(): Promise<FederatedSchema> {
  return buildFederatedSchema({
    resolvers: [PatientResolver, AppointmentResolver],
    referenceResolvers: { ...patientReference, ...appointmentReference },
  });
}

export interface EhrDeps {
  prisma: EhrPrisma;
  cipher: FieldCipher;
}

/** Per-request services of the clinical record subgraph, bound to the caller's identity and tenant. */
export function createEhrContext(deps: EhrDeps) {
  return (base: BaseContext): EhrContext => ({
    ...base,
    patients: new PatientService(deps.prisma, deps.cipher, base.identity),
    appointments: new AppointmentService(deps.prisma, base.identity),
  });
}

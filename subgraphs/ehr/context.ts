import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { PatientService } from './patients/patient.service';
import type { AppointmentService } from './appointments/appointment.service';

export interface EhrContext extends BaseContext {
  patients: PatientService;
  appointments: AppointmentService;
}

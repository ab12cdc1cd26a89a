import { Arg, Ctx, FieldResolver, Int, ObjectType, Field, Resolver, Root } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient } from '../patients/patient.types';
import type { PatientView } from '../patients/patient.service';
import { Pagination } from '../../../common/graphql/pagination';
import { Appointment } from './appointment.types';

@ObjectType()
class AppointmentPage {
  @Field(() => [Appointment])
  data!: Appointment[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

// Roots typed as the view, not the class: type-graphql copies a root typed as a class into a new instance for
// every field resolved on it, reading every property (and so decrypting the contact details).
@Resolver(() => Patient)
export class PatientAppointmentsResolver {
  @FieldResolver(() => AppointmentPage, { description: "The patient's appointments, soonest first; from/to bound the start (YYYY-MM-DD or ISO 8601)." })
  appointments(
    @Root() patient: PatientView,
    @Arg('status', () => String, { nullable: true }) status: string | null,
    @Arg('from', () => String, { nullable: true }) from: string | null,
    @Arg('to', () => String, { nullable: true }) to: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.appointments.forPatient(patient.id, { status, from, to }, limit, offset);
  }

  @FieldResolver(() => Appointment, { nullable: true, description: 'The soonest booked or confirmed appointment from now; null when none.' })
  nextAppointment(@Root() patient: PatientView, @Ctx() ctx: EhrContext) {
    return ctx.appointments.next(patient.id);
  }
}

import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { Patient } from '../patients/patient.types';
import type { EhrContext } from '../context';
import { Appointment, AppointmentList } from './appointment.types';

@Resolver(() => Appointment)
export class AppointmentResolver {
  @Query(() => Appointment, { nullable: true })
  appointment(@Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.appointments.find(id);
  }

  @Query(() => AppointmentList, {
    description: 'Appointments starting between from and to (YYYY-MM-DD inclusive, UTC, or ISO 8601); default today..today+7d.',
  })
  async appointments(
    @Arg('from', () => String, { nullable: true }) from: string | null,
    @Arg('to', () => String, { nullable: true }) to: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return { data: await ctx.appointments.list(from, to) };
  }

  // Messaging (issue 3): a patient's reply confirms or cancels their appointment.
  @Mutation(() => Appointment, { description: 'Sets an appointment to confirmed or cancelled; a cancelled one cannot be confirmed (CONFLICT).' })
  updateAppointmentStatus(
    @Arg('id', () => ID) id: string,
    @Arg('status', () => String) status: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.appointments.updateStatus(id, status, reason);
  }

  @FieldResolver(() => Patient, { nullable: true })
  patient(@Root() appointment: Appointment, @Ctx() ctx: EhrContext) {
    return ctx.patients.find(appointment.patientId);
  }
}

export const appointmentReference = {
  Appointment: {
    __resolveReference: (reference: { id: string }, ctx: EhrContext) => ctx.appointments.find(reference.id),
  },
};

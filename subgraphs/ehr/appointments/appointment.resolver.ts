import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { Patient } from '../patients/patient.types';
import type { EhrContext } from '../context';
import { Appointment, AppointmentList, BookAppointmentInput, RescheduleAppointmentInput } from './appointment.types';

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
    @Arg('requestKey', () => String, {
      nullable: true,
      description:
        'Idempotency key (1..200 characters): a repeat returns the appointment without a second change; with a key, a status already set by someone else is CONFLICT.',
    })
    requestKey: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.appointments.updateStatus(id, status, reason, requestKey);
  }

  @Mutation(() => Appointment, { description: 'Books an appointment (status booked); emits appointment.booked and schedules its reminder.' })
  bookAppointment(
    @Arg('input', () => BookAppointmentInput) input: BookAppointmentInput,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.appointments.book({ ...input }, reason);
  }

  @Mutation(() => Appointment, { description: 'Moves an upcoming appointment (back to booked); emits appointment.rescheduled and moves its reminder.' })
  rescheduleAppointment(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RescheduleAppointmentInput) input: RescheduleAppointmentInput,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.appointments.reschedule(id, { ...input }, reason);
  }

  @Mutation(() => Appointment, {
    description: 'Cancels an appointment; emits appointment.cancelled and cancels its reminder; a second cancel changes nothing.',
  })
  cancelAppointment(@Arg('id', () => ID) id: string, @Arg('reason', () => String, { nullable: true }) reason: string | null, @Ctx() ctx: EhrContext) {
    return ctx.appointments.cancel(id, reason);
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

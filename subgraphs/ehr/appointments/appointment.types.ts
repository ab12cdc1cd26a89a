import { Directive, Field, ID, InputType, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A booked visit, owned by the clinical record.' })
@Directive('@key(fields: "id")')
export class Appointment {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => Date)
  start!: Date;

  @Field(() => Date)
  end!: Date;

  @Field(() => String, { description: 'booked | confirmed | cancelled | fulfilled | noshow' })
  status!: string;

  @Field(() => String, { nullable: true })
  location!: string | null;

  @Field(() => String, { nullable: true, description: 'Who sees the patient; no two upcoming appointments of one practitioner overlap.' })
  practitionerId!: string | null;

  @Field(() => String, { nullable: true, description: "IANA time zone of the appointment's local times (null: UTC); reminders show the time in it." })
  timeZone!: string | null;
}

const TIME = 'ISO 8601 with an offset (2026-12-01T09:00+01:00), or a local time (2026-12-01T09:00) read in timeZone.';

@InputType({ description: 'A new appointment. No overlap with an upcoming appointment of the same practitioner or at the same location.' })
export class BookAppointmentInput {
  @Field(() => ID)
  patientId!: string;

  @Field(() => String, { description: TIME })
  start!: string;

  @Field(() => String, { description: TIME })
  end!: string;

  @Field(() => String, { nullable: true, description: 'IANA time zone (Europe/Amsterdam); default UTC.' })
  timeZone?: string | null;

  @Field(() => String, { nullable: true })
  practitionerId?: string | null;

  @Field(() => String, { nullable: true })
  location?: string | null;
}

@InputType({ description: 'A new slot for an upcoming appointment; practitioner, location and time zone stay unless given (null clears).' })
export class RescheduleAppointmentInput {
  @Field(() => String, { description: TIME })
  start!: string;

  @Field(() => String, { description: TIME })
  end!: string;

  @Field(() => String, { nullable: true })
  timeZone?: string | null;

  @Field(() => String, { nullable: true })
  practitionerId?: string | null;

  @Field(() => String, { nullable: true })
  location?: string | null;
}

@ObjectType()
export class AppointmentList {
  @Field(() => [Appointment])
  data!: Appointment[];
}

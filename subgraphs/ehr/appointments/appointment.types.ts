import { Directive, Field, ID, ObjectType } from 'type-graphql';

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
}

@ObjectType()
export class AppointmentList {
  @Field(() => [Appointment])
  data!: Appointment[];
}

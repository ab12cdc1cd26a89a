import { Arg, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';

@ObjectType({ description: "The tenant's automatic appointment reminders." })
class ReminderSettings {
  @Field(() => Int, { description: 'Minutes before an appointment its reminder goes out (default 1440, a day); quiet hours move it.' })
  leadMinutes!: number;
}

@Resolver()
export class ReminderSettingsResolver {
  @Query(() => ReminderSettings, { description: "The tenant's reminder settings (admin)." })
  reminderSettings(@Ctx() ctx: MessagingContext) {
    return ctx.reminderSettings.get();
  }

  @Mutation(() => ReminderSettings, {
    description:
      "Sets the reminder lead time, 0..20160 minutes (admin); applies to appointments booked or moved from now on. Stored in the organisation's settings (reminderLeadMinutes) and logged as an organisation change.",
  })
  setReminderLeadTime(
    @Arg('leadMinutes', () => Int) leadMinutes: number,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.reminderSettings.setLeadMinutes(leadMinutes, reason);
  }
}

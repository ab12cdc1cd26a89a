import { Arg, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';

@ObjectType({ description: "The tenant's automatic appointment reminders." })
class ReminderSettings {
  @Field(() => Int, {
    description: 'Minutes before an appointment its first reminder goes out: the longest of leadTimes (default 1440, a day); quiet hours move it.',
  })
  leadMinutes!: number;

  @Field(() => [Int], { description: 'The cadence: minutes before an appointment of each of its reminders, longest first (default [1440]).' })
  leadTimes!: number[];
}

@Resolver()
export class ReminderSettingsResolver {
  @Query(() => ReminderSettings, { description: "The tenant's reminder settings (admin)." })
  reminderSettings(@Ctx() ctx: MessagingContext) {
    return ctx.reminderSettings.get();
  }

  @Mutation(() => ReminderSettings, {
    description:
      "Sets a single reminder lead time, 0..20160 minutes (admin), replacing any cadence; applies to appointments booked or moved from now on. Stored in the organisation's settings (reminderLeadMinutes) and logged as an organisation change.",
  })
  setReminderLeadTime(
    @Arg('leadMinutes', () => Int) leadMinutes: number,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.reminderSettings.setLeadMinutes(leadMinutes, reason);
  }

  @Mutation(() => ReminderSettings, {
    description:
      "Sets the reminder cadence (admin): 1..10 distinct lead times of 0..20160 minutes, one reminder per lead time, replacing a single lead time; applies to appointments booked or moved from now on. Stored in the organisation's settings (reminderLeadTimes) and logged as an organisation change.",
  })
  setReminderLeadTimes(
    @Arg('leadTimes', () => [Int]) leadTimes: number[],
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.reminderSettings.setLeadTimes(leadTimes, reason);
  }
}

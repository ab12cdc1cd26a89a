import { Field, InputType, ObjectType } from 'type-graphql';

@ObjectType()
export class ChannelPreferences {
  @Field(() => Boolean)
  sms!: boolean;

  @Field(() => Boolean)
  email!: boolean;
}

@ObjectType()
export class QuietHours {
  @Field(() => String, { description: 'HH:MM' })
  start!: string;

  @Field(() => String, { description: 'HH:MM' })
  end!: string;

  @Field(() => String, { description: 'IANA time zone, e.g. Europe/Amsterdam' })
  timezone!: string;
}

@ObjectType({ description: 'How and when a patient agrees to be contacted.' })
export class CommunicationPreferences {
  @Field(() => ChannelPreferences)
  channels!: ChannelPreferences;

  @Field(() => String)
  language!: string;

  @Field(() => QuietHours, { nullable: true })
  quietHours!: QuietHours | null;
}

@InputType()
export class ChannelPreferencesInput {
  @Field(() => Boolean, { nullable: true })
  sms?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  email?: boolean | null;
}

@InputType()
export class QuietHoursInput {
  @Field(() => String)
  start!: string;

  @Field(() => String)
  end!: string;

  @Field(() => String)
  timezone!: string;
}

@InputType({ description: 'Fields left out stay as they are; quietHours: null removes quiet hours.' })
export class PreferencesInput {
  @Field(() => ChannelPreferencesInput, { nullable: true })
  channels?: ChannelPreferencesInput | null;

  @Field(() => String, { nullable: true })
  language?: string | null;

  @Field(() => QuietHoursInput, { nullable: true })
  quietHours?: QuietHoursInput | null;
}

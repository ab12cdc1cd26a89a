import { Field, ObjectType } from 'type-graphql';

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

import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';
import { CommunicationPreferences, PreferencesInput } from './preference.types';

@Resolver(() => CommunicationPreferences)
export class PreferenceResolver {
  @Mutation(() => CommunicationPreferences, { description: "Changes a patient's preferences; every change is logged." })
  updatePreferences(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('input', () => PreferencesInput) input: PreferencesInput,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.preferences.update(patientId, input);
  }
}

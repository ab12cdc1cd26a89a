import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, FieldResolver, Info, Int, Resolver, Root } from 'type-graphql';
import { selectsField } from '../../../common/graphql/selection';
import type { MessagingContext } from '../context';
import { CommunicationPreferences } from '../preferences/preference.types';
import { MessagePage } from '../messages/message.types';
import { Patient } from './patient.types';

@Resolver(() => Patient)
export class PatientExtensionResolver {
  @FieldResolver(() => CommunicationPreferences)
  preferences(@Root() patient: Patient, @Ctx() ctx: MessagingContext) {
    return ctx.preferences.forPatient(patient.id);
  }

  @FieldResolver(() => MessagePage, { description: "The patient's messages, newest first." })
  messages(
    @Root() patient: Patient,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: MessagingContext,
    @Info() info: GraphQLResolveInfo,
  ) {
    return ctx.messages.list({ patientId: patient.id, limit, offset }, selectsField(info, 'pagination'));
  }
}

/** The clinical record has already decided the patient exists and is visible; messaging only needs the id. */
export const patientReference = {
  Patient: { __resolveReference: (reference: { id: string }) => ({ id: reference.id }) },
};

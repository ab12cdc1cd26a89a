import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import type { MessagingContext } from '../context';
import { Patient } from '../patients/patient.types';
import { Message, MessagePage } from './message.types';

@Resolver(() => Message)
export class MessageResolver {
  @Query(() => Message, { description: 'One message; NOT_FOUND when unknown.' })
  message(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.messages.get(id);
  }

  @Query(() => MessagePage, { description: 'Messages newest first; limit 1..100 (default 20), offset ≥ 0.' })
  messages(
    @Arg('patientId', () => ID, { nullable: true }) patientId: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.messages.list({ patientId, limit, offset });
  }

  @FieldResolver(() => Patient, { description: 'The recipient; demographics come from the clinical record.' })
  patient(@Root() message: Message) {
    return { id: message.patientId };
  }
}

export const messageReference = {
  Message: {
    __resolveReference: (reference: { id: string }, ctx: MessagingContext) => ctx.messages.get(reference.id),
  },
};

import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, FieldResolver, Info, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { selectsField } from '../../../common/graphql/selection';
import type { MessagingContext } from '../context';
import type { MessageView } from '../sealed';
import { Patient } from '../patients/patient.types';
import { BatchSendResult, Message, MessagePage, SendMessageInput, StatusChange } from './message.types';

@Resolver(() => Message)
export class MessageResolver {
  @Query(() => Message, { description: 'One message; NOT_FOUND when unknown.' })
  message(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.messages.get(id);
  }

  @Query(() => MessagePage, { description: 'Messages newest first; limit 1..100 (default 20), offset ≥ 0.' })
  messages(
    @Arg('patientId', () => ID, { nullable: true }) patientId: string | null,
    @Arg('status', () => String, { nullable: true, description: 'Only messages in this status (e.g. scheduled).' }) status: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: MessagingContext,
    @Info() info: GraphQLResolveInfo,
  ) {
    return ctx.messages.list({ patientId, status, limit, offset }, selectsField(info, 'pagination'));
  }

  // The roots are typed as the view, not the class: type-graphql copies a root typed as a class into a new
  // instance for every field resolved on it (reading every property, so decrypting the message's content).
  @FieldResolver(() => Patient, { description: 'The recipient; demographics come from the clinical record.' })
  patient(@Root() message: MessageView) {
    return { id: message.patientId };
  }

  @Mutation(() => Message, {
    description: 'Queues one message (or schedules it, with sendAt); a repeated idempotencyKey returns the first message (CONFLICT for another request).',
  })
  sendMessage(
    @Arg('input', () => SendMessageInput) input: SendMessageInput,
    @Arg('idempotencyKey', () => String, { nullable: true }) idempotencyKey: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.messages.send(input, idempotencyKey);
  }

  @Mutation(() => BatchSendResult, { description: '1..1000 messages, each accepted or refused on its own.' })
  sendMessages(
    @Arg('messages', () => [SendMessageInput]) messages: SendMessageInput[],
    @Arg('idempotencyKey', () => String, { nullable: true }) idempotencyKey: string | null,
    @Arg('itemKeys', () => [String], {
      nullable: true,
      description: 'One idempotency key per item, in order, instead of `<idempotencyKey>#<index>`: a caller that left items out keeps each key stable.',
    })
    itemKeys: string[] | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.messages.sendBatch(messages, idempotencyKey, itemKeys);
  }

  @Mutation(() => Message, {
    description: 'Takes back a scheduled or queued message: it is cancelled and never reaches a provider; CONFLICT from any later status (cancelled included).',
  })
  cancelMessage(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.messages.cancel(id);
  }

  @Mutation(() => Message, { description: 'Queues a reminder filled from the appointment (date, time, location); CONFLICT when it is cancelled.' })
  remindAppointment(
    @Arg('appointmentId', () => ID) appointmentId: string,
    @Arg('templateId', () => String, { nullable: true }) templateId: string | null,
    @Arg('channel', () => String, { nullable: true }) channel: string | null,
    @Arg('idempotencyKey', () => String, { nullable: true }) idempotencyKey: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.messages.remind(appointmentId, templateId, channel, idempotencyKey);
  }

  @Mutation(() => Boolean, { description: 'SMS provider delivery report (provider identity only); true when it moved the message.' })
  recordDeliveryStatus(
    @Arg('provider', () => String, { nullable: true, description: 'twilio (the default) or vonage' }) provider: string | null,
    @Arg('providerMessageId', () => String) providerMessageId: string,
    @Arg('status', () => String) status: string,
    @Arg('errorCode', () => String, { nullable: true }) errorCode: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.recordProviderStatus(provider ?? 'twilio', providerMessageId, status, errorCode);
  }

  @FieldResolver(() => [StatusChange])
  statusHistory(@Root() message: MessageView, @Ctx() ctx: MessagingContext) {
    return ctx.messages.history(message.id);
  }
}

export const messageReference = {
  Message: {
    __resolveReference: (reference: { id: string }, ctx: MessagingContext) => ctx.messages.get(reference.id),
  },
};

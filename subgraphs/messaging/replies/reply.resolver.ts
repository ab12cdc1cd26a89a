import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';
import { ReplyResult } from './reply.types';

@Resolver(() => ReplyResult)
export class ReplyResolver {
  @Mutation(() => ReplyResult, { description: 'Admin: injects a simulated patient reply to a message.' })
  simulateReply(@Arg('messageId', () => ID) messageId: string, @Arg('body', () => String) body: string, @Ctx() ctx: MessagingContext) {
    return ctx.replies.simulateReply(messageId, body);
  }

  @Mutation(() => ReplyResult, { description: 'An inbound SMS (provider webhook, or an integration posting one).' })
  receiveSms(
    @Arg('from', () => String) from: string,
    @Arg('body', () => String) body: string,
    @Arg('providerMessageId', () => String, { nullable: true }) providerMessageId: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.replies.receiveSms(from, body, providerMessageId);
  }
}

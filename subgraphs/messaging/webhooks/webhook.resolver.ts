import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { MessagingContext } from '../context';
import {
  AlertList,
  CreateWebhookInput,
  RecoverWebhookInput,
  UpdateWebhookInput,
  Webhook,
  WebhookDeliveryPage,
  WebhookList,
  WebhookRecovery,
  WebhookTestResult,
} from './webhook.types';

/** GraphQL null means "not given" here: no field of a subscription can be cleared. */
const given = (input: object) => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));

@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => WebhookList, { description: 'The webhook subscriptions of the tenant (admin, integration).' })
  async webhooks(@Ctx() ctx: MessagingContext) {
    return { data: await ctx.webhooks.list() };
  }

  @Query(() => Webhook, { description: 'One subscription; NOT_FOUND when unknown.' })
  webhook(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.get(id);
  }

  @Mutation(() => Webhook, { description: 'Subscribes a URL; without a secret one is generated and returned, this once, as secret.' })
  createWebhook(@Arg('input', () => CreateWebhookInput) input: CreateWebhookInput, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.create(given(input));
  }

  @Mutation(() => Webhook, {
    description:
      'Changes url, events, secret (the previous secret keeps signing beside the new one for WEBHOOK_SECRET_OVERLAP); status active re-enables (admin only).',
  })
  updateWebhook(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateWebhookInput) input: UpdateWebhookInput, @Ctx() ctx: MessagingContext) {
    // An explicit rateLimit null removes the limit; any other null means "not given".
    return ctx.webhooks.update(id, { ...given(input), ...(input.rateLimit === null ? { rateLimit: null } : {}) });
  }

  @Mutation(() => WebhookRecovery, {
    description:
      'Re-sends, with their original event ids, the events of the window the subscription never received (all: every one), as a job; CONFLICT when disabled.',
  })
  recoverWebhook(@Arg('id', () => ID) id: string, @Arg('input', () => RecoverWebhookInput) input: RecoverWebhookInput, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.recover(id, given(input));
  }

  @Query(() => WebhookRecovery, { description: 'One recovery of a subscription, with its progress; NOT_FOUND when unknown.' })
  webhookRecovery(@Arg('webhookId', () => ID) webhookId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.recovery(webhookId, id);
  }

  @Mutation(() => ID, { description: 'Deletes the subscription with its delivery log; returns its id.' })
  deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.remove(id);
  }

  @Query(() => WebhookDeliveryPage, { description: 'Deliveries newest first, each with every attempt; limit 1..100 (default 20).' })
  webhookDeliveries(
    @Arg('webhookId', () => ID) webhookId: string,
    @Arg('status', () => String, { nullable: true }) status: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.webhooks.deliveries(webhookId, { status, limit, offset });
  }

  @Mutation(() => WebhookTestResult, { description: 'Sends an example event to the subscription and reports the first attempt.' })
  sendTestEvent(@Arg('id', () => ID) id: string, @Arg('type', () => String, { nullable: true }) type: string | null, @Ctx() ctx: MessagingContext) {
    return ctx.webhooks.sendTest(id, type);
  }

  @FieldResolver(() => Int, { description: 'Failed attempts since the last successful one (0 after a success).' })
  async failureStreak(@Root() webhook: Webhook, @Ctx() ctx: MessagingContext) {
    return (await ctx.webhooks.health(webhook.id)).failureStreak;
  }

  @FieldResolver(() => Date, { nullable: true, description: 'When the latest failed attempt was made.' })
  async lastFailureAt(@Root() webhook: Webhook, @Ctx() ctx: MessagingContext) {
    return (await ctx.webhooks.health(webhook.id)).lastFailureAt;
  }

  @FieldResolver(() => String, { nullable: true, description: 'The error of the latest failed attempt.' })
  async lastFailureError(@Root() webhook: Webhook, @Ctx() ctx: MessagingContext) {
    return (await ctx.webhooks.health(webhook.id)).lastFailureError;
  }

  @Query(() => AlertList, { description: 'Alerts of the tenant, newest first (e.g. webhook.disabled).' })
  async alerts(@Arg('limit', () => Int, { nullable: true }) limit: number | null, @Ctx() ctx: MessagingContext) {
    return { data: await ctx.webhooks.alerts(limit) };
  }
}

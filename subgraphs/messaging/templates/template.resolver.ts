import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';
import { MessageTemplate, TemplateList } from './template.types';

@Resolver(() => MessageTemplate)
export class TemplateResolver {
  @Query(() => TemplateList)
  async templates(@Ctx() ctx: MessagingContext) {
    return { data: await ctx.templates.list() };
  }

  @Query(() => MessageTemplate, { description: 'One template; NOT_FOUND when unknown.' })
  template(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.templates.get(id);
  }
}

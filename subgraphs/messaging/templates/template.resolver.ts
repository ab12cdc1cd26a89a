import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { MessagingContext } from '../context';
import { MessageTemplate, TemplateInput, TemplateList } from './template.types';

@Resolver(() => MessageTemplate)
export class TemplateResolver {
  @Query(() => TemplateList, { description: 'Every template, each language variant on its own.' })
  async templates(@Ctx() ctx: MessagingContext) {
    return { data: await ctx.templates.list() };
  }

  @Query(() => MessageTemplate, { description: 'One template (the given language, else English); NOT_FOUND when unknown.' })
  template(@Arg('id', () => ID) id: string, @Arg('language', () => String, { nullable: true }) language: string | null, @Ctx() ctx: MessagingContext) {
    return ctx.templates.get(id, language);
  }

  @Mutation(() => MessageTemplate, { description: 'Admin: a new template, or a new language of one; CONFLICT when it exists.' })
  createTemplate(@Arg('id', () => ID) id: string, @Arg('input', () => TemplateInput) input: TemplateInput, @Ctx() ctx: MessagingContext) {
    return ctx.templates.create({ ...input, id });
  }

  @Mutation(() => MessageTemplate, { description: 'Admin: publishes the next version of a template in one language.' })
  updateTemplate(@Arg('id', () => ID) id: string, @Arg('input', () => TemplateInput) input: TemplateInput, @Ctx() ctx: MessagingContext) {
    return ctx.templates.update(id, input);
  }
}

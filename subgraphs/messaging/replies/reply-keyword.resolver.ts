import { Arg, Ctx, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { ReplyKeywordsView } from '../organizations/organization.types';
import type { MessagingContext } from '../context';

// The same fields as a tenant's own words (ReplyKeywordsView), for the words in force.
@ObjectType({
  description: "The reply keywords in force for patients of one language (beside English): built-in and the tenant's own, upper case without accents.",
})
class ReplyKeywordSet extends ReplyKeywordsView {}

@Resolver()
export class ReplyKeywordResolver {
  @Query(() => [ReplyKeywordSet], { description: "The tenant's reply keywords per language, English first (admin)." })
  replyKeywords(@Ctx() ctx: MessagingContext) {
    return ctx.replyKeywords.inForce();
  }

  @Mutation(() => [ReplyKeywordSet], {
    description:
      "Replaces the tenant's own reply keywords of one language (admin); empty lists remove them, the built-in words stay. A word that already does something else for that language (or English) is refused. Stored in the organisation's settings (replyKeywords) and logged as an organisation change.",
  })
  setReplyKeywords(
    @Arg('language', () => String) language: string,
    @Arg('optOut', () => [String], { nullable: true }) optOut: string[] | null,
    @Arg('optIn', () => [String], { nullable: true }) optIn: string[] | null,
    @Arg('help', () => [String], { nullable: true }) help: string[] | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.replyKeywords.set(language, { optOut, optIn, help }, reason);
  }
}

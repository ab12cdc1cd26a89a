import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { OpenEhrResult } from './openehr.types';

/** openEHR REST resources beyond single compositions (CONTRIBUTION), served on REST by the gateway's openEHR adapter. */
@Resolver()
export class OpenEhrRecordResolver {
  @Mutation(() => OpenEhrResult, { description: 'Commits the versions of an openEHR CONTRIBUTION together (all or none).' })
  openehrCommitContribution(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('contribution', () => GraphQLJSON) contribution: unknown,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.contributions.commit(ehrId, contribution, reason);
  }

  @Query(() => OpenEhrResult)
  openehrContribution(@Arg('ehrId', () => ID) ehrId: string, @Arg('contributionUid', () => ID) contributionUid: string, @Ctx() ctx: EhrContext) {
    return ctx.contributions.get(ehrId, contributionUid);
  }
}

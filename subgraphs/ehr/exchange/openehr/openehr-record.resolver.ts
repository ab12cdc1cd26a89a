import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { OpenEhrResult } from './openehr.types';
import { commitAuditInput } from './versioning';

/** openEHR REST resources beyond single compositions (CONTRIBUTION, DIRECTORY), served on REST by the gateway's openEHR adapter. */
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

  // ---- DIRECTORY (VERSIONED_FOLDER) ----

  @Query(() => OpenEhrResult, {
    description: "The EHR's directory FOLDER: the latest version, one by uid or at a time; path (folder names joined by /) narrows to a sub-folder.",
  })
  openehrDirectory(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('versionUid', () => String, { nullable: true }) versionUid: string | null,
    @Arg('versionAtTime', () => String, { nullable: true }) versionAtTime: string | null,
    @Arg('path', () => String, { nullable: true }) path: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.directories.get(ehrId, versionUid, versionAtTime, path);
  }

  @Mutation(() => OpenEhrResult, { description: "Creates the EHR's directory (a FOLDER tree whose items are compositions of the EHR)." })
  openehrCreateDirectory(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('folder', () => GraphQLJSONObject) folder: Record<string, unknown>,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description}.' }) audit: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.directories.create(ehrId, folder, reason, commitAuditInput(audit));
  }

  @Mutation(() => OpenEhrResult, { description: "Replaces the EHR's directory; ifMatch names the latest version." })
  openehrUpdateDirectory(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('ifMatch', () => String) ifMatch: string,
    @Arg('folder', () => GraphQLJSONObject) folder: Record<string, unknown>,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description}.' }) audit: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.directories.update(ehrId, ifMatch, folder, reason, commitAuditInput(audit));
  }

  @Mutation(() => OpenEhrResult, { description: "Deletes the EHR's directory (a final version); ifMatch names the latest version." })
  openehrDeleteDirectory(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('ifMatch', () => String) ifMatch: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description}.' }) audit: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.directories.delete(ehrId, ifMatch, reason, commitAuditInput(audit));
  }
}

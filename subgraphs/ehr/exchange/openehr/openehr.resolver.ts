import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { CompositionCommitArgs, OpenEhrResult } from './openehr.types';
import { commitAuditInput, compositionCommit } from './versioning';
import type { TagTarget } from './item-tag.service';
import type { OpenEhrResult as Result } from './openehr.service';

/** A version's answer with its item tags, read only when the caller selects them (the REST adapter's headers). */
const withTags = (ctx: EhrContext, ehrId: string, targetType: TagTarget, result: Result): Result =>
  result.uid && !result.deleted ? { ...result, itemTags: () => ctx.itemTags.ofVersion(ehrId, targetType, result.uid!) } : result;

/** openEHR REST interactions as GraphQL fields, served on REST by the gateway's openEHR adapter. */
@Resolver()
export class OpenEhrResolver {
  @Query(() => OpenEhrResult, { description: 'EHR by id, or by subject id and namespace.' })
  openehrEhr(
    @Arg('ehrId', () => ID, { nullable: true }) ehrId: string | null,
    @Arg('subjectId', () => String, { nullable: true }) subjectId: string | null,
    @Arg('subjectNamespace', () => String, { nullable: true }) subjectNamespace: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.getEhr(ehrId, subjectId, subjectNamespace);
  }

  @Mutation(() => OpenEhrResult, { description: 'A new EHR (id given or a new UUID) with an optional EHR_STATUS.' })
  openehrCreateEhr(
    @Arg('ehrId', () => ID, { nullable: true }) ehrId: string | null,
    @Arg('ehrStatus', () => GraphQLJSON, { nullable: true }) ehrStatus: unknown,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description, lifecycleState}.' })
    audit: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.createEhr(ehrId, ehrStatus, reason, commitAuditInput(audit));
  }

  @Query(() => OpenEhrResult)
  openehrVersionedEhrStatus(@Arg('ehrId', () => ID) ehrId: string, @Ctx() ctx: EhrContext) {
    return ctx.openehr.versionedEhrStatus(ehrId);
  }

  @Query(() => OpenEhrResult)
  openehrEhrStatusRevisionHistory(@Arg('ehrId', () => ID) ehrId: string, @Ctx() ctx: EhrContext) {
    return ctx.openehr.ehrStatusRevisionHistory(ehrId);
  }

  @Query(() => OpenEhrResult, { description: 'An EHR_STATUS version (ORIGINAL_VERSION) by uid, at a time, or the latest.' })
  openehrEhrStatusVersion(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('versionUid', () => String, { nullable: true }) versionUid: string | null,
    @Arg('versionAtTime', () => String, { nullable: true }) versionAtTime: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.ehrStatusVersion(ehrId, versionUid, versionAtTime);
  }

  @Query(() => OpenEhrResult)
  async openehrEhrStatus(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('versionUid', () => String, { nullable: true }) versionUid: string | null,
    @Arg('versionAtTime', () => String, { nullable: true }) versionAtTime: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return withTags(ctx, ehrId, 'EHR_STATUS', await ctx.openehr.getEhrStatus(ehrId, versionUid, versionAtTime));
  }

  @Mutation(() => OpenEhrResult)
  async openehrUpdateEhrStatus(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('ifMatch', () => String) ifMatch: string,
    @Arg('ehrStatus', () => GraphQLJSON, { nullable: true }) ehrStatus: unknown,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description, lifecycleState}.' })
    audit: Record<string, unknown> | null,
    @Arg('itemTags', () => GraphQLJSONObject, { nullable: true, description: 'Item tags set with the commit: {versionedObject, version}.' })
    itemTags: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    const tags = ctx.itemTags.tagsForCommit('EHR_STATUS', itemTags);
    return withTags(ctx, ehrId, 'EHR_STATUS', await ctx.openehr.updateEhrStatus(ehrId, ifMatch, ehrStatus, reason, commitAuditInput(audit), tags));
  }

  @Mutation(() => OpenEhrResult)
  async openehrCreateComposition(
    @Arg('ehrId', () => ID) ehrId: string,
    @Args(() => CompositionCommitArgs) commit: CompositionCommitArgs,
    @Ctx() ctx: EhrContext,
  ) {
    const result = await ctx.openehr.createComposition(ehrId, compositionCommit(commit), ctx.itemTags.tagsForCommit('COMPOSITION', commit.itemTags));
    return withTags(ctx, ehrId, 'COMPOSITION', result);
  }

  @Query(() => OpenEhrResult, { description: 'A composition by versioned object uid (latest) or version uid.' })
  async openehrComposition(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('uid', () => ID) uid: string,
    @Arg('format', () => String, { nullable: true, description: 'JSON (canonical, default), FLAT, STRUCTURED or XML (canonical, a string)' })
    format: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return withTags(ctx, ehrId, 'COMPOSITION', await ctx.openehr.getComposition(ehrId, uid, format));
  }

  @Mutation(() => OpenEhrResult)
  async openehrUpdateComposition(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('versionedObjectUid', () => ID) versionedObjectUid: string,
    @Arg('ifMatch', () => String) ifMatch: string,
    @Args(() => CompositionCommitArgs) commit: CompositionCommitArgs,
    @Ctx() ctx: EhrContext,
  ) {
    const tags = ctx.itemTags.tagsForCommit('COMPOSITION', commit.itemTags);
    return withTags(ctx, ehrId, 'COMPOSITION', await ctx.openehr.updateComposition(ehrId, versionedObjectUid, ifMatch, compositionCommit(commit), tags));
  }

  @Mutation(() => OpenEhrResult)
  openehrDeleteComposition(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('precedingVersionUid', () => ID) precedingVersionUid: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('audit', () => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description, lifecycleState}.' })
    audit: Record<string, unknown> | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.deleteComposition(ehrId, precedingVersionUid, reason, commitAuditInput(audit));
  }

  @Query(() => OpenEhrResult)
  openehrVersionedComposition(@Arg('ehrId', () => ID) ehrId: string, @Arg('versionedObjectUid', () => ID) versionedObjectUid: string, @Ctx() ctx: EhrContext) {
    return ctx.openehr.versionedComposition(ehrId, versionedObjectUid);
  }

  @Query(() => OpenEhrResult)
  openehrRevisionHistory(@Arg('ehrId', () => ID) ehrId: string, @Arg('versionedObjectUid', () => ID) versionedObjectUid: string, @Ctx() ctx: EhrContext) {
    return ctx.openehr.revisionHistory(ehrId, versionedObjectUid);
  }

  @Query(() => OpenEhrResult)
  openehrCompositionVersion(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('versionedObjectUid', () => ID) versionedObjectUid: string,
    @Arg('versionUid', () => String, { nullable: true }) versionUid: string | null,
    @Arg('versionAtTime', () => String, { nullable: true }) versionAtTime: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.compositionVersion(ehrId, versionedObjectUid, versionUid, versionAtTime);
  }

  @Query(() => OpenEhrResult)
  openehrTemplates(@Ctx() ctx: EhrContext) {
    return ctx.openehr.listTemplates();
  }

  @Query(() => OpenEhrResult, { description: 'An example composition of an operational template.' })
  openehrTemplateExample(
    @Arg('templateId', () => ID) templateId: string,
    @Arg('format', () => String, { nullable: true, description: 'JSON (canonical, default), FLAT, STRUCTURED or XML (canonical, a string)' })
    format: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.templateExample(templateId, format);
  }

  @Query(() => OpenEhrResult, {
    description: 'A template: an OPT as its XML (a string) or a CareGraph JSON template, or either as a web template (webTemplate: true).',
  })
  openehrTemplate(
    @Arg('templateId', () => ID) templateId: string,
    @Arg('webTemplate', () => Boolean, { nullable: true }) web: boolean | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.getTemplate(templateId, web ? 'web' : 'json');
  }

  @Mutation(() => OpenEhrResult)
  openehrUploadTemplate(
    @Arg('template', () => GraphQLJSON, { nullable: true }) template: unknown,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.uploadTemplate(template, reason);
  }

  @Query(() => GraphQLJSONObject, { description: 'openEHR AQL 1.1 (docs/exchange.md#aql): a RESULTSET {meta, q, columns, rows}.' })
  aqlQuery(
    @Arg('q', () => String) q: string,
    @Arg('parameters', () => GraphQLJSONObject, { nullable: true }) parameters: Record<string, unknown> | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Arg('fetch', () => Int, { nullable: true }) fetch: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.openehr.query(q, parameters ?? {}, offset, fetch);
  }
}

import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { validationError } from '../../../../common/errors';
import type { EhrContext } from '../../context';
import { OpenEhrResult } from './openehr.types';
import { TAG_TARGETS, type TagTarget } from './item-tag.service';

const UID = 'The versioned object uid (its tags) or a version uid (that version’s tags)';

function targetType(value: string): TagTarget {
  if (!(TAG_TARGETS as readonly string[]).includes(value))
    throw validationError(`targetType must be one of ${TAG_TARGETS.join(', ')}`, [{ path: 'targetType', message: 'unknown' }]);
  return value as TagTarget;
}

/** openEHR ITEM_TAGs of compositions and EHR_STATUS, served on REST by the gateway's openEHR adapter. */
// Nullable arguments a caller leaves out arrive as undefined: the services take null.
@Resolver(() => OpenEhrResult)
export class ItemTagResolver {
  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description: "A composition's or EHR_STATUS's item tags: {versionedObject, version}, each a list of {key, value?, target_path?}.",
  })
  itemTags(@Root() result: OpenEhrResult) {
    // Answers of other resources, and deleted versions, have none; a version's are read only when selected.
    return result.itemTags?.() ?? null;
  }

  @Query(() => OpenEhrResult, { description: 'The tags of a composition or EHR_STATUS (body: ITEM_TAG list).' })
  openehrItemTags(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('targetType', () => String, { description: 'COMPOSITION or EHR_STATUS' }) type: string,
    @Arg('uid', () => String, { description: UID }) uid: string,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.itemTags.ofTarget(ehrId, targetType(type), uid);
  }

  @Query(() => OpenEhrResult, { description: 'Every readable tag in an EHR, filtered by key, value and target path (each exact).' })
  openehrEhrTags(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('key', () => String, { nullable: true }) key: string | null,
    @Arg('value', () => String, { nullable: true }) value: string | null,
    @Arg('targetPath', () => String, { nullable: true }) targetPath: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.itemTags.ofEhr(ehrId, { key: key ?? null, value: value ?? null, targetPath: targetPath ?? null });
  }

  @Mutation(() => OpenEhrResult, {
    description: 'Replaces the tags of a composition or EHR_STATUS: [{key, value?, target_path?}] (an empty list removes them).',
  })
  openehrSetItemTags(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('targetType', () => String, { description: 'COMPOSITION or EHR_STATUS' }) type: string,
    @Arg('uid', () => String, { description: UID }) uid: string,
    @Arg('tags', () => GraphQLJSON) tags: unknown,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.itemTags.replace(ehrId, targetType(type), uid, tags, reason ?? null);
  }

  @Mutation(() => OpenEhrResult, { description: 'Deletes the tags with a key (at any target path) of a composition or EHR_STATUS.' })
  openehrDeleteItemTags(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('targetType', () => String, { description: 'COMPOSITION or EHR_STATUS' }) type: string,
    @Arg('uid', () => String, { description: UID }) uid: string,
    @Arg('key', () => String) key: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.itemTags.delete(ehrId, targetType(type), uid, key, reason ?? null);
  }
}

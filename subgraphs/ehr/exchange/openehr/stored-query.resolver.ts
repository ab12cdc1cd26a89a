import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { OpenEhrResult } from './openehr.types';

const NAME = '[namespace::]query-name, e.g. org.example::blood_pressure';
const VERSION = 'major.minor.patch, or a major[.minor] prefix for its latest version; the latest version when left out';

/** openEHR stored queries (DEFINITION and QUERY resources), served on REST by the gateway's openEHR adapter. */
// Nullable arguments a caller leaves out arrive as undefined: the services take null.
@Resolver()
export class StoredQueryResolver {
  @Mutation(() => OpenEhrResult, { description: 'Stores an AQL query under a name and version (1.0.0, or the next patch version, when none is given).' })
  openehrStoreQuery(
    @Arg('name', () => String, { description: NAME }) name: string,
    @Arg('version', () => String, { nullable: true, description: 'major.minor.patch, greater than the latest' }) version: string | null,
    @Arg('q', () => String) q: string,
    @Arg('type', () => String, { nullable: true, description: 'Query language: AQL (the default and only one)' }) type: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.storedQueries.save(name, version ?? null, q, type ?? null, reason ?? null);
  }

  @Query(() => OpenEhrResult, { description: 'Every version of the stored queries whose name starts with `name` (all of them without).' })
  openehrStoredQueries(@Arg('name', () => String, { nullable: true }) name: string | null, @Ctx() ctx: EhrContext) {
    return ctx.storedQueries.list(name ?? null);
  }

  @Query(() => OpenEhrResult, { description: 'One stored query definition: {name, type, version, saved, q}.' })
  openehrStoredQuery(
    @Arg('name', () => String, { description: NAME }) name: string,
    @Arg('version', () => String, { nullable: true, description: VERSION }) version: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.storedQueries.get(name, version ?? null);
  }

  @Query(() => GraphQLJSONObject, { description: 'Runs a stored query like aqlQuery: {meta, name, q, columns, rows}.' })
  openehrRunStoredQuery(
    @Arg('name', () => String, { description: NAME }) name: string,
    @Arg('version', () => String, { nullable: true, description: VERSION }) version: string | null,
    @Arg('parameters', () => GraphQLJSONObject, { nullable: true }) parameters: Record<string, unknown> | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Arg('fetch', () => Int, { nullable: true }) fetch: number | null,
    @Arg('ehrId', () => String, { nullable: true, description: 'Runs the query within this EHR only.' }) ehrId: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.storedQueries.execute(name, version ?? null, parameters ?? {}, offset ?? null, fetch ?? null, ehrId ?? null);
  }
}

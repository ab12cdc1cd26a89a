import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../context';
import { Patient } from '../patients/patient.types';
import { DataAreaEnum } from '../common/types';
import type { CompositionView } from './composition.service';
import { Composition, CompositionFilter, CompositionPage, CreateCompositionInput } from './composition.types';

@Resolver(() => Composition)
export class CompositionResolver {
  @Query(() => Composition, { description: 'A composition version by uid (a bare uuid names the latest); NOT_FOUND when unknown.' })
  composition(@Arg('uid', () => ID) uid: string, @Ctx() ctx: EhrContext) {
    return ctx.compositions.get(uid);
  }

  @Query(() => CompositionPage, { description: 'Latest versions of compositions, newest first; limit 1..100 (default 20).' })
  compositions(
    @Arg('filter', () => CompositionFilter, { nullable: true }) filter: CompositionFilter | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.compositions.list({ ...(filter ?? {}) }, limit, offset);
  }

  @Query(() => [Composition], { description: 'Every version of a composition, oldest first.' })
  compositionHistory(@Arg('id', () => ID, { description: 'uuid or any version uid' }) id: string, @Ctx() ctx: EhrContext) {
    return ctx.compositions.history(id);
  }

  @Mutation(() => Composition, { description: 'Commits a new composition (version 1) to an EHR.' })
  createComposition(
    @Arg('input', () => CreateCompositionInput) input: CreateCompositionInput,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.compositions.create({ templateId: input.templateId, ehrId: input.ehrId, content: input.content }, reason);
  }

  @Mutation(() => Composition, { description: 'Commits a new version; ifMatch must be the latest version uid (else PRECONDITION_FAILED).' })
  updateComposition(
    @Arg('id', () => ID, { description: 'uuid or version uid' }) id: string,
    @Arg('ifMatch', () => ID) ifMatch: string,
    @Arg('content', () => GraphQLJSONObject) content: Record<string, unknown>,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.compositions.update(id, ifMatch, content, reason);
  }

  /** A demo template's composition in its simple form when that holds all of it (docs/clinical-record.md). */
  @FieldResolver(() => GraphQLJSONObject, { nullable: true, description: 'null for the deletion version.' })
  content(@Root() composition: CompositionView, @Ctx() ctx: EhrContext) {
    return ctx.compositions.presentedContent(composition);
  }

  @Mutation(() => Composition, { description: 'Logical delete: commits a final version without content. Returns that version.' })
  deleteComposition(
    @Arg('id', () => ID) id: string,
    @Arg('ifMatch', () => ID, { nullable: true }) ifMatch: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.compositions.delete(id, ifMatch, reason);
  }
}

/** Filters and paging shared by the data-area fields on Patient. */
@ArgsType()
class AreaPageArgs {
  @Field(() => String, { nullable: true })
  templateId!: string | null;

  @Field(() => String, { nullable: true })
  from!: string | null;

  @Field(() => String, { nullable: true })
  to!: string | null;

  @Field(() => Int, { nullable: true })
  limit!: number | null;

  @Field(() => Int, { nullable: true })
  offset!: number | null;
}

@ArgsType()
class PatientCompositionsArgs extends AreaPageArgs {
  @Field(() => DataAreaEnum, { nullable: true })
  area!: DataAreaEnum | null;
}

/** The data areas on Patient: compositions of one area each, with the same filters and paging. */
@Resolver(() => Patient)
export class PatientRecordResolver {
  private page(ctx: EhrContext, patient: Patient, area: DataAreaEnum | null, args: AreaPageArgs) {
    return ctx.compositions.list(
      { patientId: patient.id, area, templateId: args.templateId ?? null, from: args.from ?? null, to: args.to ?? null },
      args.limit ?? null,
      args.offset ?? null,
    );
  }

  @FieldResolver(() => CompositionPage, { description: 'All compositions of the patient, newest first.' })
  compositions(@Root() patient: Patient, @Args(() => PatientCompositionsArgs) args: PatientCompositionsArgs, @Ctx() ctx: EhrContext) {
    return this.page(ctx, patient, args.area ?? null, args);
  }

  @FieldResolver(() => CompositionPage, { description: 'Clinical visits and interactions.' })
  encounters(@Root() patient: Patient, @Args(() => AreaPageArgs) args: AreaPageArgs, @Ctx() ctx: EhrContext) {
    return this.page(ctx, patient, DataAreaEnum.ENCOUNTER, args);
  }

  @FieldResolver(() => CompositionPage, { description: 'Vital signs, lab results, assessments.' })
  observations(@Root() patient: Patient, @Args(() => AreaPageArgs) args: AreaPageArgs, @Ctx() ctx: EhrContext) {
    return this.page(ctx, patient, DataAreaEnum.OBSERVATION, args);
  }

  @FieldResolver(() => CompositionPage, { description: 'Medications, procedures, referrals.' })
  orders(@Root() patient: Patient, @Args(() => AreaPageArgs) args: AreaPageArgs, @Ctx() ctx: EhrContext) {
    return this.page(ctx, patient, DataAreaEnum.ORDER, args);
  }

  @FieldResolver(() => CompositionPage, { description: 'Clinical notes, letters, reports.' })
  documents(@Root() patient: Patient, @Args(() => AreaPageArgs) args: AreaPageArgs, @Ctx() ctx: EhrContext) {
    return this.page(ctx, patient, DataAreaEnum.DOCUMENT, args);
  }
}

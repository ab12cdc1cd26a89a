import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { ClinicalTemplate as TemplateRow } from '../db/generated/client';
import type { EhrContext } from '../context';
import { ARCHETYPES } from '../clinical/archetypes';
import { DataAreaEnum } from '../common/types';
import { ClinicalArchetype, ClinicalTemplate, UploadTemplateInput } from './clinical-template.types';

@Resolver(() => ClinicalTemplate)
export class ClinicalTemplateResolver {
  @Query(() => [ClinicalTemplate], { description: "The tenant's clinical templates, by id." })
  clinicalTemplates(@Arg('area', () => DataAreaEnum, { nullable: true }) area: DataAreaEnum | null, @Ctx() ctx: EhrContext) {
    return ctx.templates.list(area);
  }

  @Query(() => ClinicalTemplate, { description: 'One clinical template; NOT_FOUND when unknown.' })
  clinicalTemplate(@Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.templates.get(id);
  }

  @Query(() => [ClinicalArchetype], { description: 'The archetype library templates build on.' })
  clinicalArchetypes() {
    return ARCHETYPES;
  }

  /** A demo OPT shows the constraint tree of its simple form: the JSON bodies the CareGraph API takes for it. */
  @FieldResolver(() => GraphQLJSONObject, { description: 'Constraint tree (see docs/clinical-record.md).' })
  definition(@Root() template: TemplateRow, @Ctx() ctx: EhrContext) {
    return ctx.templates.simpleForm(template)?.definition ?? template.definition;
  }

  @Mutation(() => ClinicalTemplate, { description: 'Admin: adds a template version. Existing ids are immutable (CONFLICT unless identical).' })
  uploadTemplate(
    @Arg('input', () => UploadTemplateInput) input: UploadTemplateInput,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.templates.upload({ id: input.id, name: input.name, area: input.area, definition: input.definition }, reason);
  }
}

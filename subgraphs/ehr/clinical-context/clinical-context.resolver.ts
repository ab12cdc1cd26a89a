import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient } from '../patients/patient.types';
import { ClinicalContext, ContextSectionEnum, PurposeOfUseEnum } from './clinical-context.types';
import type { ClinicalContextView } from './clinical-context.service';

@Resolver(() => ClinicalContext)
export class ClinicalContextResolver {
  @Query(() => ClinicalContext, {
    description:
      "One patient's clinical context for a declared purpose of use: minimised demographics, medications, vitals and lab results with units and dates, encounters, notes, upcoming appointments (and, through `patient`, communication). Newest first, at most maxItems (1..100, default 10) per section; since/until bound clinical dates. AI agents need the patient's AI_ASSISTANCE consent.",
  })
  clinicalContext(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('purpose', () => PurposeOfUseEnum) purpose: PurposeOfUseEnum,
    @Arg('sections', () => [ContextSectionEnum], { nullable: true }) sections: ContextSectionEnum[] | null,
    @Arg('since', () => String, { nullable: true, description: 'YYYY-MM-DD or ISO 8601' }) since: string | null,
    @Arg('until', () => String, { nullable: true, description: 'YYYY-MM-DD or ISO 8601' }) until: string | null,
    @Arg('maxItems', () => Int, { nullable: true }) maxItems: number | null,
    @Arg('codes', () => [String], { nullable: true, description: 'LOINC codes to keep in vitals and labs' }) codes: string[] | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.clinicalContext.get({ patientId, purpose, sections, since, until, maxItems, codes });
  }

  @FieldResolver(() => Patient)
  patient(@Root() context: ClinicalContextView, @Ctx() ctx: EhrContext) {
    return ctx.patients.get(context.patientId);
  }
}

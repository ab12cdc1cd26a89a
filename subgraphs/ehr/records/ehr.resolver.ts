import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient } from '../patients/patient.types';
import { Ehr } from './ehr.types';

@Resolver(() => Ehr)
export class EhrResolver {
  @Query(() => Ehr, { description: 'An EHR by id; NOT_FOUND when unknown or not visible.' })
  ehr(@Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.ehrs.read(id);
  }

  @Mutation(() => Ehr, { description: 'Changes EHR_STATUS (admin, clinician).' })
  updateEhrStatus(
    @Arg('ehrId', () => ID) ehrId: string,
    @Arg('isQueryable', () => Boolean, { nullable: true }) isQueryable: boolean | null,
    @Arg('isModifiable', () => Boolean, { nullable: true }) isModifiable: boolean | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.ehrs.updateStatus(ehrId, { isQueryable, isModifiable }, reason);
  }
}

@Resolver(() => Patient)
export class PatientEhrResolver {
  @FieldResolver(() => Ehr, { nullable: true })
  ehr(@Root() patient: Patient, @Ctx() ctx: EhrContext) {
    return ctx.ehrs.forPatient(patient.id);
  }
}

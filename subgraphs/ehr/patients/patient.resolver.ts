import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient } from './patient.types';

@Resolver(() => Patient)
export class PatientResolver {
  @Query(() => Patient, { nullable: true, description: 'A patient of the caller\'s tenant; null when unknown.' })
  patient(@Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.patients.find(id);
  }
}

export const patientReference = {
  Patient: {
    __resolveReference: (reference: { id: string }, ctx: EhrContext) => ctx.patients.find(reference.id),
  },
};

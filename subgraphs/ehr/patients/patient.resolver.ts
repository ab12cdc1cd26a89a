import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient, PatientCreateInput, PatientPage, PatientUpdateInput } from './patient.types';

/** Strips type-graphql's class prototype and unset fields, so input validation sees plain data. */
const plain = <T extends object>(input: T) => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as T;

@Resolver(() => Patient)
export class PatientResolver {
  @Query(() => Patient, { nullable: true, description: "A patient of the caller's tenant; null when unknown." })
  patient(@Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.patients.find(id);
  }

  @Query(() => PatientPage, { description: 'Staff: patients by exact id or family-name prefix, family-name order; limit 1..100 (default 20).' })
  patients(
    @Arg('search', () => String, { nullable: true }) search: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.patients.list(search, limit, offset);
  }

  @Mutation(() => Patient, { description: 'Registers a patient and creates their EHR.' })
  createPatient(
    @Arg('input', () => PatientCreateInput) input: PatientCreateInput,
    @Arg('reason', () => String, { nullable: true, description: 'Why (kept in the audit trail).' }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.patients.create(plain(input), reason);
  }

  @Mutation(() => Patient, { description: 'Changes demographics; a patient may change only their own contact details.' })
  updatePatient(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => PatientUpdateInput) input: PatientUpdateInput,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.patients.update(id, plain(input), reason);
  }
}

export const patientReference = {
  Patient: {
    __resolveReference: (reference: { id: string }, ctx: EhrContext) => ctx.patients.find(reference.id),
  },
};

import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from 'type-graphql';
import type { EhrContext } from '../context';
import { Patient } from '../patients/patient.types';
import { ConsentPurposeEnum } from '../common/types';
import { Consent } from './consent.types';

@Resolver(() => Consent)
export class ConsentResolver {
  @Mutation(() => Consent, { description: "Records the patient's consent for a purpose." })
  grantConsent(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('purpose', () => ConsentPurposeEnum) purpose: ConsentPurposeEnum,
    @Arg('note', () => String, { nullable: true }) note: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.consents.set(patientId, purpose, true, note, reason);
  }

  @Mutation(() => Consent, { description: "Records the withdrawal of the patient's consent for a purpose." })
  revokeConsent(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('purpose', () => ConsentPurposeEnum) purpose: ConsentPurposeEnum,
    @Arg('note', () => String, { nullable: true }) note: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.consents.set(patientId, purpose, false, note, reason);
  }
}

@Resolver(() => Patient)
export class PatientConsentResolver {
  @FieldResolver(() => [Consent], { description: 'One entry per purpose (recorded decision or default).' })
  consents(@Root() patient: Patient, @Ctx() ctx: EhrContext) {
    return ctx.consents.list(patient.id);
  }
}

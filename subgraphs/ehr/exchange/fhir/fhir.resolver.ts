import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { FhirSearchParam } from './fhir.types';

/** FHIR R4 interactions as GraphQL fields (JSON resources), served on REST by the gateway's FHIR adapter. */
@Resolver()
export class FhirResolver {
  @Query(() => GraphQLJSONObject, { description: 'FHIR CapabilityStatement of the FHIR facade (without its address).' })
  fhirCapabilities(@Ctx() ctx: EhrContext) {
    return ctx.fhir.capabilities();
  }

  @Query(() => GraphQLJSONObject, { description: 'FHIR read, or vread with versionId.' })
  fhirRead(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('id', () => ID) id: string,
    @Arg('versionId', () => String, { nullable: true }) versionId: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.read(resourceType, id, versionId);
  }

  @Query(() => GraphQLJSONObject, {
    description: 'FHIR instance history: a history Bundle, newest version first; its URLs are relative to the FHIR service base.',
  })
  fhirHistory(@Arg('resourceType', () => String) resourceType: string, @Arg('id', () => ID) id: string, @Ctx() ctx: EhrContext) {
    return ctx.fhir.historyBundle(resourceType, id);
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'FHIR type search: a searchset Bundle with total and next links; its URLs are relative to the FHIR service base. strict (Prefer: handling=strict) refuses unknown parameters; otherwise they are ignored and reported in an OperationOutcome entry.',
  })
  fhirSearch(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('params', () => [FhirSearchParam]) params: FhirSearchParam[],
    @Arg('strict', () => Boolean, { nullable: true }) strict: boolean | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.search(resourceType, params, strict ? 'strict' : 'lenient');
  }

  @Query(() => GraphQLJSONObject, {
    description: "Patient/{id}/$everything: the patient and every resource about them; the Bundle's URLs are relative to the FHIR service base.",
  })
  fhirPatientEverything(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('params', () => [FhirSearchParam]) params: FhirSearchParam[],
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.everything(patientId, params);
  }

  @Mutation(() => GraphQLJSONObject, { description: 'FHIR create (Patient, vital-signs Observation); returns the stored resource.' })
  fhirCreate(
    @Arg('resource', () => GraphQLJSONObject) resource: Record<string, any>,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.create(resource as { resourceType: string }, reason);
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'FHIR conditional create (If-None-Exist): `{created, resource}`; one match returns it with created false, more than one is PRECONDITION_FAILED.',
  })
  fhirConditionalCreate(
    @Arg('resource', () => GraphQLJSONObject) resource: Record<string, any>,
    @Arg('ifNoneExist', () => String) ifNoneExist: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.conditionalCreate(resource as { resourceType: string }, ifNoneExist, reason);
  }

  @Mutation(() => GraphQLJSONObject, {
    description: 'FHIR conditional update (PUT [type]?[search]): `{created, resource}`; no match creates, more than one is PRECONDITION_FAILED.',
  })
  fhirConditionalUpdate(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('query', () => String) query: string,
    @Arg('resource', () => GraphQLJSONObject) resource: Record<string, any>,
    @Arg('ifMatch', () => String, { nullable: true }) ifMatch: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.conditionalUpdate(resourceType, query, resource as { resourceType: string }, ifMatch, reason);
  }

  @Mutation(() => GraphQLJSONObject, { description: 'FHIR update (Patient, vital-signs Observation); ifMatch is the expected versionId.' })
  fhirUpdate(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('id', () => ID) id: string,
    @Arg('resource', () => GraphQLJSONObject) resource: Record<string, any>,
    @Arg('ifMatch', () => String, { nullable: true }) ifMatch: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.update(resourceType, id, resource as { resourceType: string }, ifMatch, reason);
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'FHIR patch with a JSON Patch document (RFC 6902) (Patient, vital-signs Observation, Appointment); ifMatch is the expected versionId. Returns the stored resource.',
  })
  fhirPatch(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('id', () => ID) id: string,
    @Arg('patch', () => GraphQLJSON) patch: unknown,
    @Arg('ifMatch', () => String, { nullable: true }) ifMatch: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.patch(resourceType, id, patch, ifMatch, reason);
  }

  @Mutation(() => Boolean, {
    description:
      'FHIR delete (Observation): a new, audited version that deletes it (reads then answer GONE); ifMatch is the expected versionId. False when it was deleted already.',
  })
  fhirDelete(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('id', () => ID) id: string,
    @Arg('ifMatch', () => String, { nullable: true }) ifMatch: string | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.delete(resourceType, id, ifMatch, reason);
  }

  @Mutation(() => Boolean, {
    description:
      'FHIR conditional delete (DELETE [type]?[search]): deletes the one match (true), nothing without a match (false); more than one is PRECONDITION_FAILED.',
  })
  fhirConditionalDelete(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('query', () => String) query: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.conditionalDelete(resourceType, query, reason);
  }
}

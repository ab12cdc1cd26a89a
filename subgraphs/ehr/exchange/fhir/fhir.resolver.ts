import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';
import { FhirSearchParam } from './fhir.types';

/** FHIR R4 interactions as GraphQL fields (JSON resources), served on REST by the gateway at /fhir/R4. */
@Resolver()
export class FhirResolver {
  @Query(() => GraphQLJSONObject, { description: 'FHIR CapabilityStatement of the /fhir/R4 facade.' })
  fhirCapabilities(@Arg('baseUrl', () => String) baseUrl: string, @Ctx() ctx: EhrContext) {
    return ctx.fhir.capabilities(baseUrl);
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

  @Query(() => GraphQLJSONObject, { description: 'FHIR instance history: a history Bundle, newest version first.' })
  fhirHistory(@Arg('resourceType', () => String) resourceType: string, @Arg('id', () => ID) id: string, @Arg('baseUrl', () => String) baseUrl: string, @Ctx() ctx: EhrContext) {
    return ctx.fhir.historyBundle(resourceType, id, baseUrl);
  }

  @Query(() => GraphQLJSONObject, { description: 'FHIR type search: a searchset Bundle with total and next links.' })
  fhirSearch(
    @Arg('resourceType', () => String) resourceType: string,
    @Arg('params', () => [FhirSearchParam]) params: FhirSearchParam[],
    @Arg('baseUrl', () => String) baseUrl: string,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.search(resourceType, params, baseUrl);
  }

  @Query(() => GraphQLJSONObject, { description: 'Patient/{id}/$everything: the patient and every resource about them.' })
  fhirPatientEverything(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('params', () => [FhirSearchParam]) params: FhirSearchParam[],
    @Arg('baseUrl', () => String) baseUrl: string,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.fhir.everything(patientId, params, baseUrl);
  }

  @Mutation(() => GraphQLJSONObject, { description: 'FHIR create (Patient, vital-signs Observation); returns the stored resource.' })
  fhirCreate(@Arg('resource', () => GraphQLJSONObject) resource: Record<string, any>, @Arg('reason', () => String, { nullable: true }) reason: string | null, @Ctx() ctx: EhrContext) {
    return ctx.fhir.create(resource as { resourceType: string }, reason);
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
}

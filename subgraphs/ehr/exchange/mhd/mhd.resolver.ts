import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { EhrContext } from '../../context';

/** IHE MHD ITI-65 as a GraphQL field; ITI-66/67/68 are FHIR search and read (fhirSearch, fhirRead). */
@Resolver()
export class MhdResolver {
  @Mutation(() => GraphQLJSONObject, {
    description:
      'IHE MHD ITI-65 Provide Document Bundle: a FHIR transaction Bundle (SubmissionSet List, DocumentReferences, Binaries), stored in the XDS registry and repository like ITI-41, all or nothing; answers the transaction-response Bundle (URLs relative to the FHIR service base).',
  })
  mhdProvideDocumentBundle(@Arg('bundle', () => GraphQLJSONObject) bundle: Record<string, unknown>, @Ctx() ctx: EhrContext) {
    return ctx.mhd.provide(bundle);
  }
}

import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../../context';

/**
 * IHE XDS.b transactions as GraphQL fields: each takes the transaction's ebXML
 * payload (the SOAP Body's element, documents inline as base64) and answers
 * the response payload; the gateway's XDS adapter does SOAP and MTOM.
 */
@Resolver()
export class XdsResolver {
  @Mutation(() => String, {
    description: 'ITI-41 Provide and Register Document Set-b: a ProvideAndRegisterDocumentSetRequest; answers rs:RegistryResponse.',
  })
  xdsProvideAndRegister(@Arg('request', () => String) request: string, @Ctx() ctx: EhrContext) {
    return ctx.xds.provideAndRegister(request);
  }

  @Mutation(() => String, { description: 'ITI-42 Register Document Set-b: a lcm:SubmitObjectsRequest; answers rs:RegistryResponse.' })
  xdsRegister(@Arg('request', () => String) request: string, @Ctx() ctx: EhrContext) {
    return ctx.xds.register(request);
  }

  @Query(() => String, { description: 'ITI-18 Registry Stored Query: a query:AdhocQueryRequest; answers query:AdhocQueryResponse.' })
  xdsStoredQuery(@Arg('request', () => String) request: string, @Ctx() ctx: EhrContext) {
    return ctx.xds.storedQuery(request);
  }

  @Query(() => String, {
    description: 'ITI-43 Retrieve Document Set: a xdsb:RetrieveDocumentSetRequest; answers xdsb:RetrieveDocumentSetResponse, documents inline (base64).',
  })
  xdsRetrieve(@Arg('request', () => String) request: string, @Ctx() ctx: EhrContext) {
    return ctx.xds.retrieve(request);
  }
}

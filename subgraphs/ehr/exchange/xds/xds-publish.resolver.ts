import { Arg, Ctx, Field, ID, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { EhrContext } from '../../context';

@ObjectType({ description: 'A CCD published to the external XDS repository (ITI-41): what the remote registry now holds.' })
class XdsPublication {
  @Field(() => ID)
  patientId!: string;

  @Field(() => String, { description: 'XDSDocumentEntry.uniqueId: the CDA document id as an OID (2.25.…).' })
  documentUniqueId!: string;

  @Field(() => String, { description: 'XDSSubmissionSet.uniqueId (2.25.…).' })
  submissionSetUniqueId!: string;

  @Field(() => String, { description: 'SHA-1 of the CCD as sent (hex).' })
  hash!: string;

  @Field(() => Int, { description: 'Size of the CCD in bytes.' })
  size!: number;

  @Field(() => String, { description: 'creationTime (HL7 DTM, UTC).' })
  creationTime!: string;

  @Field(() => String, { description: 'The repository endpoint (XDS_REPOSITORY_URL).' })
  repository!: string;
}

/** Publishing as an XDS.b Document Source; the gateway serves it on REST as well (docs/exchange.md). */
@Resolver()
export class XdsPublishResolver {
  @Mutation(() => XdsPublication, {
    description:
      "Sends the patient's C-CDA 2.1 CCD to the external XDS repository (XDS_REPOSITORY_URL) with ITI-41 over SOAP 1.2/MTOM. CONFLICT when no repository is configured; UPSTREAM_ERROR when the repository refuses (details carry its XDS error codes) or cannot be reached. Audited either way.",
  })
  publishPatientCcd(@Arg('patientId', () => ID) patientId: string, @Ctx() ctx: EhrContext) {
    return ctx.xdsPublish.publishPatientCcd(patientId);
  }
}

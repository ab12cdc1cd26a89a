import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../../context';

/** CDA R2 documents as GraphQL fields (XML text); the gateway serves them on REST as well (docs/exchange.md). */
@Resolver()
export class CdaResolver {
  @Query(() => String, {
    description: "The patient's C-CDA 2.1 Continuity of Care Document (CDA R2 XML) from their current record; readable areas only.",
  })
  cdaPatientDocument(@Arg('patientId', () => ID) patientId: string, @Ctx() ctx: EhrContext) {
    return ctx.cda.patientDocument(patientId);
  }

  @Query(() => String, { description: 'One composition version (uid, or the latest by id) as a C-CDA 2.1 document (CDA R2 XML).' })
  cdaCompositionDocument(@Arg('uid', () => ID) uid: string, @Ctx() ctx: EhrContext) {
    return ctx.cda.compositionDocument(uid);
  }
}

import { Arg, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { AccessLogPage, AuditChainVerification, AuditRecord, AuditRecordPage, PopulationQueryPage } from './audit.types';

@Resolver(() => AuditRecord)
export class AuditResolver {
  @Query(() => AuditRecordPage, { description: "Admin: the tenant's audit trail, newest first; limit 1..100 (default 20)." })
  auditRecords(
    @Arg('entityId', () => String, { nullable: true }) entityId: string | null,
    @Arg('entityType', () => String, { nullable: true }) entityType: string | null,
    @Arg('actor', () => String, { nullable: true }) actor: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.audit.list({ entityId, entityType, actor }, limit, offset);
  }

  @Query(() => AuditChainVerification, { description: "Admin: recomputes the tenant's audit hash chain and reports the first broken record." })
  verifyAuditChain(@Ctx() ctx: EhrContext) {
    return ctx.audit.verify();
  }

  @Query(() => AuditChainVerification, {
    description: "Admin: recomputes the tenant's access-log hash chain and reports the first broken entry, or an emptied or shortened log.",
  })
  verifyAccessLog(@Ctx() ctx: EhrContext) {
    return ctx.audit.verifyAccessLog();
  }

  @Query(() => AccessLogPage, { description: "Who read a patient's record, newest first (admin, or the patient for their own)." })
  accessLog(
    @Arg('patientId', () => ID) patientId: string,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Arg('from', () => String, { nullable: true, description: 'YYYY-MM-DD or an ISO 8601 timestamp: entries from then on.' }) from: string | null,
    @Arg('to', () => String, { nullable: true, description: 'YYYY-MM-DD (that day included) or an ISO 8601 timestamp: entries until then.' })
    to: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.audit.accessLog(patientId, limit, offset, { from, to });
  }

  @Query(() => PopulationQueryPage, {
    description: "Admin: the population statistics computed over the tenant's records, newest first; their access-log entries name no patient.",
  })
  populationQueries(
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.audit.populationQueries(limit, offset);
  }
}

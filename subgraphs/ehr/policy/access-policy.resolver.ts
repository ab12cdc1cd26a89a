import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { EhrContext } from '../context';
import { AccessAreaEnum, ConfigurableRoleEnum } from '../common/types';
import { AccessPolicyEntry } from './access-policy.types';

@Resolver(() => AccessPolicyEntry)
export class AccessPolicyResolver {
  @Query(() => [AccessPolicyEntry], { description: "Admin: the tenant's effective role × area permissions." })
  accessPolicy(@Ctx() ctx: EhrContext) {
    return ctx.accessPolicy.entries();
  }

  @Mutation(() => AccessPolicyEntry, { description: 'Admin: sets one role × area permission for the tenant.' })
  setAccessPolicy(
    @Arg('role', () => ConfigurableRoleEnum) role: ConfigurableRoleEnum,
    @Arg('area', () => AccessAreaEnum) area: AccessAreaEnum,
    @Arg('canRead', () => Boolean) canRead: boolean,
    @Arg('canWrite', () => Boolean) canWrite: boolean,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: EhrContext,
  ) {
    return ctx.accessPolicy.set(role, area, canRead, canWrite, reason);
  }
}

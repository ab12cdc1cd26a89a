import { Kind } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import { PLATFORM_SCOPE } from '../../common/auth/principal';
import type { TenantActivity } from '../../common/activity/tenant-activity';
import type { GatewayContext } from '../context';

/**
 * Records the errors a tenant's client calls answer (GraphQL and REST alike:
 * REST runs one operation each) in the tenant's activity record, for the
 * support desk. Calls themselves are recorded where they are counted (the
 * rate-limit plugin). Internal executions (no budget holder) are not clients.
 */
/**
 * The support desk reads these messages, and never a patient's data: a message names the ids and values it is about
 * in quotes ("EHR 'ehr-p-1001' was not found"), so each quoted part is left out and the wording kept.
 */
export function withoutQuotedValues(message: string): string {
  return message.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "'…'");
}

export function tenantActivityPlugin(activity: TenantActivity): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response, operationName, operation }) {
          if (!contextValue.rateLimit || !contextValue.identity || contextValue.identity.tenantId === PLATFORM_SCOPE) return;
          if (response.body.kind !== 'single' || !response.body.singleResult.errors?.length) return;
          const [first] = response.body.singleResult.errors;
          const rootFields = operation?.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : [])).join(',');
          activity.recordError(contextValue.identity.tenantId, {
            at: new Date().toISOString(),
            code: typeof first.extensions?.code === 'string' ? first.extensions.code : 'INTERNAL_ERROR',
            message: withoutQuotedValues(first.message),
            operation: operationName ?? rootFields ?? '(unparsed)',
            sub: contextValue.identity.sub,
            requestId: contextValue.requestId,
          });
        },
      };
    },
  };
}

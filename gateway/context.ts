import type { Identity, Principal } from '../common/auth/principal';
import type { Logger } from '../common/logger';

/** What the gateway knows about one request, for GraphQL resolution and REST adapters alike. */
export interface GatewayContext {
  principal: Principal;
  identity: Identity;
  requestId: string;
  logger: Logger;
  /** Signed identity header for subgraphs, made once per request and reused for every subgraph fetch. */
  identityToken?: Promise<string>;
}

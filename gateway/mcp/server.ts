import { Router, type NextFunction, type Request, type Response, type RequestHandler } from 'express';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ApolloServer } from '@apollo/server';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { AgentContext } from '../../common/auth/principal';
import { AppError, errorBody } from '../../common/errors';
import type { AccessTokenVerifier } from '../../common/auth/tokens';
import { authenticate } from '../auth';
import type { GatewayContext } from '../context';
import { createGraphQLRunner } from '../rest/execute';
import type { PublicBase } from '../public-url';

/** One GraphQL operation on the federated API as this agent, for this tool and purpose. */
export type AgentQuery = <T = any>(agent: Omit<AgentContext, 'client'>, query: string, variables?: Record<string, unknown>) => Promise<T>;

/**
 * A set of tools, resources and prompts. Each set registers itself on the
 * per-request server; adding a set is one more entry in TOOLSETS, with its
 * own file. Every caller sees every tool: the policy points refuse the calls
 * a role may not make.
 */
type Toolset = (server: McpServer, query: AgentQuery) => void;

/**
 * The MCP SDK and the toolsets, loaded on the first call to /mcp: about 0.15 s
 * of module loading (measured in a test process) that a gateway no agent
 * calls never pays, nor does each test file that starts a platform.
 */
const loadMcp = async () => {
  const [{ McpServer }, { StreamableHTTPServerTransport }, { registerClinicalTools }, { registerSupportTools }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('./clinical-tools'),
    import('./support-tools'),
  ]);
  const toolsets: Toolset[] = [registerClinicalTools, registerSupportTools];
  return { McpServer, StreamableHTTPServerTransport, toolsets };
};
let mcpModules: ReturnType<typeof loadMcp> | undefined;

const MCP_PATH = '/mcp';
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface McpOptions {
  config: Config;
  logger: Logger;
  apollo: ApolloServer<GatewayContext>;
  contextFor: (req: Request) => Promise<GatewayContext>;
  verifyToken: AccessTokenVerifier;
  publicBase: PublicBase;
  /** The gateway's JSON body parsers and guards. */
  json: RequestHandler[];
  version: string;
}

/**
 * The MCP server at /mcp (Streamable HTTP, stateless: every POST builds a
 * server and transport for that one request, so any gateway instance answers
 * any request and nothing is kept between them). Authenticated like every
 * other API; a request without a valid token gets 401 with a WWW-Authenticate
 * header naming the protected-resource metadata, which names the issuer.
 */
export function mcpRoutes(options: McpOptions): Router {
  const router = Router();
  const metadataUrl = (req: Request) => `${options.publicBase(req)}${RESOURCE_METADATA_PATH}${MCP_PATH}`;

  const protectedResource = (req: Request, res: Response) => {
    res.json({
      resource: `${options.publicBase(req)}${MCP_PATH}`,
      ...(options.config.AUTH_ISSUER ? { authorization_servers: [options.config.AUTH_ISSUER] } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'CareGraph clinical and support context (MCP)',
      resource_documentation: `${options.publicBase(req)}/docs`,
    });
  };
  router.get(`${RESOURCE_METADATA_PATH}${MCP_PATH}`, protectedResource);
  router.get(RESOURCE_METADATA_PATH, protectedResource);

  const challenge = (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (err instanceof AppError && err.code === 'UNAUTHENTICATED') {
      res.setHeader('WWW-Authenticate', `Bearer resource_metadata="${metadataUrl(req)}"`);
      res.status(401).json(errorBody(err.code, err.message));
      return;
    }
    next(err);
  };

  const handle = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const client = req.principal!.clientId ?? 'unnamed-client';
      const query: AgentQuery = (agent, text, variables) =>
        createGraphQLRunner(options.apollo, async (r) => {
          const context = await options.contextFor(r);
          return { ...context, identity: { ...context.identity, agent: { ...agent, client } } };
        })(req, text, variables);
      const { McpServer, StreamableHTTPServerTransport, toolsets } = await (mcpModules ??= loadMcp());
      const server = new McpServer(
        { name: 'caregraph', version: options.version },
        { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: INSTRUCTIONS },
      );
      for (const register of toolsets) register(server, query);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      next(err);
    }
  };
  const stateless = (_req: Request, res: Response) => {
    // No sessions, so no server-initiated stream to open (GET) or session to end (DELETE).
    res.setHeader('Allow', 'POST');
    res.status(405).json(errorBody('VALIDATION_ERROR', 'This MCP server is stateless: send JSON-RPC messages with POST'));
  };
  // Every method of /mcp answers an unknown or suspended tenant as the other surfaces do, before anything else.
  const admitted = async (req: Request, _res: Response, next: NextFunction) => {
    try {
      await options.contextFor(req);
      next();
    } catch (err) {
      next(err);
    }
  };

  router.post(MCP_PATH, authenticate(options.verifyToken), admitted, ...options.json, handle);
  router.get(MCP_PATH, authenticate(options.verifyToken), admitted, stateless);
  router.delete(MCP_PATH, authenticate(options.verifyToken), admitted, stateless);
  router.use(MCP_PATH, challenge);
  return router;
}

const INSTRUCTIONS = [
  'CareGraph: consent-gated, purpose-bound clinical context.',
  'Every clinical tool needs a declared purpose of use and answers only for patients who gave AI_ASSISTANCE consent (find_patients excepted: it returns minimised demographics).',
  'The support tools (whoami, organization_health) read no patient data and take no purpose.',
  'Every call is written to the access log with your client, the tool and the purpose. maxBytes bounds each answer; lists are newest first and trimmed from the end.',
].join(' ');

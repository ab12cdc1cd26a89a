import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestPlatform } from './harness';

/** The MCP SDK's own client over Streamable HTTP to the platform's /mcp, with a bearer token (and extra headers). */
export async function connectMcp(t: TestPlatform, token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'caregraph-test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

export const callTool = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** A tool's structured answer, failing the test when the tool answered an error. */
export function structured(result: CallToolResult): any {
  expect(result.isError).toBeFalsy();
  return result.structuredContent;
}

/** A tool error's text (`CODE: message`), failing the test when the tool answered. */
export function refusal(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  return (result.content[0] as { text: string }).text;
}

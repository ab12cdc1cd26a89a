import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { registerCommon } from './common';
import { registerEhr } from './ehr';
import { registerMessaging } from './messaging';
import { registerOperations } from './operations';
import { registerWebhooks } from './webhooks';

/** The server URL of the checked-in schema/openapi.json: the development server's. */
export const DEFAULT_SERVER_URL = 'http://localhost:4000';

const DESCRIPTION = `The REST API of CareGraph: messaging (\`/v1\`), the clinical record (\`/api/ehr\`), SMS provider callbacks, and health, readiness and metrics.

Rules every path follows (docs/api.md): a bearer token on every call except the operations paths; the tenant from \`X-Tenant-Id\` or the token's single tenant; errors as \`{"error":{"code","message","details"}}\`; rate limits per tenant and token subject with \`X-RateLimit-*\` headers and \`Retry-After\` on 429.

Not described here:
- **FHIR R4** at \`/fhir/R4\` follows its own published standard, the [HL7 FHIR R4 RESTful API](https://hl7.org/fhir/R4/http.html); its CapabilityStatement is \`GET /fhir/R4/metadata\`.
- **openEHR REST** at \`/openehr/v1\` follows the [openEHR REST API](https://specifications.openehr.org/releases/ITS-REST/latest) with AQL (what CareGraph supports of both: docs/exchange.md).
- **GraphQL** at \`/graphql\` (subscriptions over WebSocket, protocol \`graphql-transport-ws\`): its federated schema describes it (introspection outside production).`;

/** The OpenAPI 3.1 document of the gateway's REST paths, generated from the adapters' zod schemas. */
export function openApiDocument(serverUrl: string = DEFAULT_SERVER_URL) {
  const registry = new OpenAPIRegistry();
  registerCommon(registry);
  registerMessaging(registry);
  registerWebhooks(registry);
  registerEhr(registry);
  registerOperations(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'CareGraph REST API', version: '1.0.0', description: DESCRIPTION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Messaging', description: 'Sends, batches, messages, patients and preferences, templates, appointments, reminders (docs/messaging.md).' },
      { name: 'Webhooks', description: 'Subscriptions, deliveries, alerts, and the events CareGraph posts (docs/webhooks.md).' },
      { name: 'SMS provider callbacks', description: 'Posted by the SMS provider, not by clients.' },
      { name: 'Clinical record', description: 'Patients, compositions and the audit trail (docs/clinical-record.md).' },
      { name: 'Operations', description: 'No token needed.' },
      { name: 'API reference', description: 'This document and its page; no token needed.' },
      {
        name: 'FHIR R4',
        description:
          'Served at `/fhir/R4` (docs/exchange.md); described by the FHIR R4 specification, and IHE MHD for ITI-65 (`POST /fhir/R4`), ITI-66, ITI-67, ITI-68.',
        externalDocs: { url: 'https://hl7.org/fhir/R4/http.html', description: 'FHIR R4 RESTful API' },
      },
      {
        name: 'openEHR',
        description: 'Served at `/openehr/v1` (docs/exchange.md); described by the openEHR REST specification.',
        externalDocs: { url: 'https://specifications.openehr.org/releases/ITS-REST/latest', description: 'openEHR REST API' },
      },
    ],
  });
}

export const openApiJson = (serverUrl?: string) => `${JSON.stringify(openApiDocument(serverUrl), null, 2)}\n`;

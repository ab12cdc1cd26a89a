import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../gateway/openapi/document';

/**
 * Checks a delivered webhook body against the OpenAPI document's event catalogue (its `webhooks` section, one
 * entry per event type): the errors, none when the body is what the catalogue promises for its type.
 */
export function catalogueErrors(body: { type: string }): string[] {
  const document = openApiDocument() as any;
  const type = body.type;
  if (!document.webhooks[type]) return [`no catalogue entry for ${type}`];
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'https://caregraph.invalid/openapi.json');
  const validate = ajv.compile({ $ref: `https://caregraph.invalid/openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema` });
  return validate(body) ? [] : [`${type}: ${ajv.errorsText(validate.errors)}`];
}

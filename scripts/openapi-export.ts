/**
 * Writes the REST API's OpenAPI document to schema/openapi.json:
 *
 *   npm run openapi:export
 *
 * gateway/openapi/document.test.ts fails when the checked-in file differs from what the
 * registry in gateway/openapi generates, so clients built from it stay true.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../common/paths';
import { openApiJson } from '../gateway/openapi/document';

export const OPENAPI_FILE = join(projectRoot(), 'schema', 'openapi.json');

if (require.main === module) {
  writeFileSync(OPENAPI_FILE, openApiJson());
  console.log(`wrote ${OPENAPI_FILE}`);
}

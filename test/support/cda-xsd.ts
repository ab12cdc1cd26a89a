import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** HL7's CDA R2 schema with the SDTC extensions, vendored unmodified (test/fixtures/cda, README there). */
const CDA_SDTC_XSD = join(__dirname, '..', 'fixtures', 'cda', 'schema', 'extensions', 'SDTC', 'infrastructure', 'cda', 'CDA_SDTC.xsd');

/** xmllint's verdict on a CDA document against the published schema: '' when valid, its complaints otherwise. */
export function cdaSchemaErrors(xml: string): string {
  try {
    execFileSync('xmllint', ['--noout', '--nonet', '--schema', CDA_SDTC_XSD, '-'], { input: xml, stdio: ['pipe', 'pipe', 'pipe'] });
    return '';
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}

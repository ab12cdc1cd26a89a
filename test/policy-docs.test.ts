import { readFileSync } from 'node:fs';
import { POLICY_DOC, withPolicyTables } from '../scripts/render-policy';

describe('docs/security.md', () => {
  it('carries the rule tables the policy modules enforce (run npm run docs:policy after changing them)', () => {
    const document = readFileSync(POLICY_DOC, 'utf8');
    expect(document).toBe(withPolicyTables(document));
  });
});

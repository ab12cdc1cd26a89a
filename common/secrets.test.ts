import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config';
import { devSecretsPath, resolveSecrets } from './secrets';

describe('audit key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('comes from AUDIT_HMAC_KEY, else from the dev secrets, added to a file written before it existed', () => {
    const key = Buffer.alloc(32, 9);
    expect(resolveSecrets(loadConfig({ DATA_DIR: dir, AUDIT_HMAC_KEY: key.toString('base64') })).auditKey).toEqual(key);
    writeFileSync(devSecretsPath(dir), JSON.stringify({ jwtSecret: 'j'.repeat(43), encryptionKey: Buffer.alloc(32, 1).toString('base64') }));
    const first = resolveSecrets(loadConfig({ DATA_DIR: dir })).auditKey;
    expect(first).toHaveLength(32);
    expect(JSON.parse(readFileSync(devSecretsPath(dir), 'utf8'))).toMatchObject({ jwtSecret: 'j'.repeat(43), auditKey: first.toString('base64') });
    expect(resolveSecrets(loadConfig({ DATA_DIR: dir })).auditKey).toEqual(first);
  });
});

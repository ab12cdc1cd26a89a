import { ConfigError, loadConfig, parseDuration } from './config';

describe('loadConfig', () => {
  it('has the contract defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(4000);
    expect(config.DATA_DIR).toBe('./data');
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 86_400_000]);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(config.WEBHOOK_RETENTION_DAYS).toBe(30);
    expect(config.WEBHOOK_ALLOW_INSECURE).toBe(false);
    expect(config.SMS_PROVIDER).toEqual(['simulator']);
    expect(config.SIM_SEND_DELAY_MS).toBe(200);
    expect(config.SIM_DELIVER_DELAY_MS).toBe(800);
    expect(config.rateLimits).toEqual({ MESSAGES_SEND: 100, MESSAGES_READ: 1000, PATIENTS: 500, TEMPLATES: 200, WEBHOOKS: 50, EHR: 1000 });
  });

  it('applies rate-limit overrides and parses schedules', () => {
    const config = loadConfig({ RATE_LIMIT_MESSAGES_SEND: '5', WEBHOOK_RETRY_SCHEDULE: '500ms,1s,2m,1h' });
    expect(config.rateLimits.MESSAGES_SEND).toBe(5);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([500, 1000, 120_000, 3_600_000]);
  });

  it('reads WEBHOOK_SECRET_OVERLAP as a duration: 24h by default, 0s for none, a bad value refused by name', () => {
    expect(loadConfig({}).WEBHOOK_SECRET_OVERLAP).toBe(86_400_000);
    expect(loadConfig({ WEBHOOK_SECRET_OVERLAP: '90m' }).WEBHOOK_SECRET_OVERLAP).toBe(5_400_000);
    expect(loadConfig({ WEBHOOK_SECRET_OVERLAP: '0s' }).WEBHOOK_SECRET_OVERLAP).toBe(0);
    expect(() => loadConfig({ WEBHOOK_SECRET_OVERLAP: '1d' })).toThrow(/WEBHOOK_SECRET_OVERLAP/);
  });

  it('names every bad value in one error', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'abc',
        DATABASE_URL: 'mysql://x',
        RATE_LIMIT_MESSAGES_SEND: '0',
        RATE_LIMIT_FOO: '3',
        WEBHOOK_RETRY_SCHEDULE: '1m,soon',
        ENCRYPTION_KEY: 'short',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'RATE_LIMIT_MESSAGES_SEND', 'RATE_LIMIT_FOO', 'WEBHOOK_RETRY_SCHEDULE', 'ENCRYPTION_KEY']) {
      expect(message).toContain(name);
    }
  });

  it('[SEC-017] refuses to run in production on development secrets', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/AUTH_JWT_SECRET or AUTH_JWKS_URL/);
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32) })).toThrow(/ENCRYPTION_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') })).toThrow(
      /AUDIT_HMAC_KEY/,
    );
    expect(
      loadConfig({
        NODE_ENV: 'production',
        AUTH_JWT_SECRET: 'x'.repeat(32),
        ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
        AUDIT_HMAC_KEY: Buffer.alloc(32, 2).toString('base64'),
        TENANTS: 'demo',
      }).production,
    ).toBe(true);
    expect(() => loadConfig({ AUDIT_HMAC_KEY: Buffer.alloc(16, 2).toString('base64') })).toThrow(/AUDIT_HMAC_KEY/);
    expect(() => loadConfig({ AUDIT_CHECKPOINT_INTERVAL: '0ms' })).toThrow(/AUDIT_CHECKPOINT_INTERVAL/);
    expect(loadConfig({ AUDIT_CHECKPOINT_INTERVAL: '2m' }).AUDIT_CHECKPOINT_INTERVAL).toBe(120_000);
  });

  it('knows the tenants: demo and acme by default, TENANTS required in production', () => {
    expect(loadConfig({}).TENANTS).toEqual(['demo', 'acme']);
    expect(loadConfig({ TENANTS: ' north , south.eu ' }).TENANTS).toEqual(['north', 'south.eu']);
    expect(() => loadConfig({ TENANTS: 'demo,*' })).toThrow(/TENANTS.*'\*' is not a valid tenant id/);
    expect(() => loadConfig({ TENANTS: ',' })).toThrow(/TENANTS/);
    const production = {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      AUDIT_HMAC_KEY: Buffer.alloc(32, 2).toString('base64'),
    };
    expect(() => loadConfig(production)).toThrow(/NODE_ENV=production needs TENANTS/);
    expect(loadConfig({ ...production, TENANTS: 'north' }).TENANTS).toEqual(['north']);
  });

  it('reads PUBLIC_URL and TRUST_PROXY', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true', PUBLIC_URL: 'https://care.example.org/' }).TRUST_PROXY).toBe(true);
    expect(() => loadConfig({ PUBLIC_URL: 'https://care.example.org/api?x=1' })).toThrow(/PUBLIC_URL/);
  });

  it('checks the XDS publishing settings: an http(s) URL, the rest only with it, certificate and key together', () => {
    expect(loadConfig({}).XDS_REPOSITORY_URL).toBeUndefined();
    const config = loadConfig({ XDS_REPOSITORY_URL: 'https://xds.example.org/xds/repository', XDS_REPOSITORY_TOKEN: 't' });
    expect([config.XDS_REPOSITORY_URL, config.XDS_REPOSITORY_TIMEOUT_MS, config.XDS_SOURCE_ID]).toEqual([
      'https://xds.example.org/xds/repository',
      20_000,
      '2.999.1.3',
    ]);
    expect(() => loadConfig({ XDS_REPOSITORY_URL: 'ftp://xds.example.org' })).toThrow(/XDS_REPOSITORY_URL: must start with http:\/\/ or https:\/\//);
    expect(() => loadConfig({ XDS_REPOSITORY_TOKEN: 't' })).toThrow(/need XDS_REPOSITORY_URL/);
    expect(() => loadConfig({ XDS_SOURCE_ID: 'not-an-oid' })).toThrow(/XDS_SOURCE_ID: an OID/);
    expect(() => loadConfig({ XDS_REPOSITORY_URL: 'https://x', XDS_REPOSITORY_CERT_FILE: __filename })).toThrow(/set together/);
    expect(() => loadConfig({ XDS_REPOSITORY_URL: 'https://x', XDS_REPOSITORY_CA_FILE: '/nonexistent.pem' })).toThrow(
      /XDS_REPOSITORY_CA_FILE: is not a readable file/,
    );
  });

  it('reads the AI agent clients: every client by default, a list, or none', () => {
    expect(loadConfig({}).AI_AGENT_CLIENTS).toBe('*');
    expect(loadConfig({ AI_AGENT_CLIENTS: ' claude-desktop , ward-copilot ' }).AI_AGENT_CLIENTS).toEqual(['claude-desktop', 'ward-copilot']);
    expect(loadConfig({ AI_AGENT_CLIENTS: '' }).AI_AGENT_CLIENTS).toEqual([]);
    expect(() => loadConfig({ AI_AGENT_CLIENTS: 'claude-desktop,*' })).toThrow(/AI_AGENT_CLIENTS.*stands alone/);
  });

  it('reads SMS_PROVIDER as an ordered list of known providers, and SMTP_URL as one relay or several', () => {
    const twilio = { TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+15550001111' };
    expect(loadConfig({ ...twilio, SMS_PROVIDER: 'twilio' }).SMS_PROVIDER).toEqual(['twilio']);
    expect(loadConfig({ ...twilio, SMS_PROVIDER: ' twilio , simulator ' }).SMS_PROVIDER).toEqual(['twilio', 'simulator']);
    expect(() => loadConfig({ SMS_PROVIDER: 'twilio,twilio' })).toThrow(/SMS_PROVIDER.*each at most once/);
    expect(() => loadConfig({ SMS_PROVIDER: 'simulator,nexmo' })).toThrow(/SMS_PROVIDER/);
    expect(() => loadConfig({ SMS_PROVIDER: 'simulator,vonage' })).toThrow(/VONAGE_SIGNATURE_SECRET: required/);
    expect(loadConfig({ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://a:25, smtps://b' }).SMTP_URL).toEqual(['smtp://a:25', 'smtps://b']);
    expect(() => loadConfig({ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://a:25,http://b' })).toThrow(/SMTP_URL.*smtp:\/\//);
    expect(() => loadConfig({ EMAIL_PROVIDER: 'smtp' })).toThrow(/SMTP_URL: required/);
  });

  it('needs Twilio settings for the twilio provider', () => {
    expect(() => loadConfig({ SMS_PROVIDER: 'twilio' })).toThrow(/TWILIO_ACCOUNT_SID/);
    expect(() => loadConfig({ WEBHOOK_RETENTION_DAYS: '0' })).toThrow(/WEBHOOK_RETENTION_DAYS.*1 to 3650/);
  });
});

describe('AUTH_MAX_TOKEN_LIFETIME', () => {
  it('defaults to 30 days and takes s, m, h or d, in seconds', () => {
    expect(loadConfig({}).AUTH_MAX_TOKEN_LIFETIME).toBe(2_592_000);
    expect(loadConfig({ AUTH_MAX_TOKEN_LIFETIME: '12h' }).AUTH_MAX_TOKEN_LIFETIME).toBe(43_200);
    expect(loadConfig({ AUTH_MAX_TOKEN_LIFETIME: '7d' }).AUTH_MAX_TOKEN_LIFETIME).toBe(604_800);
  });

  it.each(['forever', '30', '0m', '-1d', '366d'])('refuses %s', (value) => {
    expect(() => loadConfig({ AUTH_MAX_TOKEN_LIFETIME: value })).toThrow(/AUTH_MAX_TOKEN_LIFETIME/);
  });
});

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['3s', 3000],
    ['5m', 300_000],
    ['2h', 7_200_000],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it('rejects other units', () => {
    expect(() => parseDuration('1d')).toThrow();
  });
});

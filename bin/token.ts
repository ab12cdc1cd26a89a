import { parseArgs } from 'node:util';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { isReservedSubject, ROLES, TENANT_ID } from '../common/auth/principal';
import { issueAccessToken, parseTokenLifetime, tokenKeyOrigin } from '../common/auth/tokens';

const USAGE = `Usage: npm run --silent token -- --tenant <id> [--tenant <id>…] --role <role> [--role <role>…] [--sub <subject>] [--patient <patientId>] [--client <clientId>] [--scope "<SMART scopes>"] [--act <subject>] [--ttl 12h]
--scope: SMART App Launch scopes, space-separated (patient/Observation.rs user/*.cruds launch/patient): the token is held to them on top of its roles (docs/security.md)
--act: who acts for --sub (an agent or integration acting for that person; the RFC 8693 act claim): the access log names both
--ttl: how long the token lives (s, m, h or d; default 12h, at most AUTH_MAX_TOKEN_LIFETIME, 30d unless set)
Roles: ${ROLES.join(', ')}
--tenant may be left out for a platform_admin-only token: it then acts in the platform scope, managing tenants (docs/tenants.md) and reaching no tenant's data.`;

/** Prints one bearer token the dev server accepts (signed with AUTH_JWT_SECRET or the dev secret in DATA_DIR). */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string', multiple: true },
      role: { type: 'string', multiple: true },
      sub: { type: 'string' },
      patient: { type: 'string' },
      client: { type: 'string' },
      scope: { type: 'string' },
      act: { type: 'string' },
      ttl: { type: 'string', default: '12h' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  // Loaded first: AUTH_MAX_TOKEN_LIFETIME bounds --ttl.
  const config = loadConfig();
  const tenants = values.tenant ?? [];
  const roles = values.role ?? [];
  const problems: string[] = [];
  // A platform administrator manages tenants rather than working in one, so its token may name none.
  if (tenants.length === 0 && !(roles.length > 0 && roles.every((role) => role === 'platform_admin'))) problems.push('--tenant is required');
  if (roles.length === 0) problems.push('--role is required');
  for (const role of roles) if (!(ROLES as readonly string[]).includes(role)) problems.push(`unknown role '${role}'`);
  // The server refuses these in every token: say so here instead of printing a token that cannot work.
  for (const tenant of tenants) if (!TENANT_ID.test(tenant)) problems.push(`'${tenant}' is not a tenant id (letters, digits, _ . -; up to 64)`);
  if (values.sub !== undefined && isReservedSubject(values.sub)) problems.push(`--sub: subjects starting with 'system:' are reserved`);
  if (values.act !== undefined && isReservedSubject(values.act)) problems.push(`--act: subjects starting with 'system:' are reserved`);
  if (roles.includes('patient') && !values.patient) problems.push('--patient <patientId> is required with --role patient');
  let ttlSeconds = 0;
  try {
    ttlSeconds = parseTokenLifetime(values.ttl, config.AUTH_MAX_TOKEN_LIFETIME);
  } catch (err) {
    problems.push(`--ttl: ${(err as Error).message}`);
  }
  if (problems.length > 0) {
    console.error(`${problems.join('\n')}\n\n${USAGE}`);
    process.exit(2);
  }
  const secrets = resolveSecrets(config);
  if (!secrets.jwtSecret) {
    console.error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from this command');
    process.exit(2);
  }
  const token = await issueAccessToken(
    secrets.jwtSecret,
    {
      sub: values.sub ?? `dev-${roles[0]}`,
      tenants,
      roles,
      patientId: values.patient,
      clientId: values.client,
      scope: values.scope,
      actor: values.act,
      ttlSeconds,
    },
    config,
  );
  process.stdout.write(`${token}\n`);
  // Said only to a person at a terminal: TOKEN=$(npm run --silent token …) captures the token alone.
  if (process.stdout.isTTY) console.error(`signed with ${tokenKeyOrigin(config)}: a server using another key refuses it`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

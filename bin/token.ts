import { parseArgs } from 'node:util';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { ROLES } from '../common/auth/principal';
import { issueAccessToken } from '../common/auth/tokens';
import { parseDuration } from '../common/config';

const USAGE = `Usage: npm run --silent token -- --tenant <id> [--tenant <id>…] --role <role> [--role <role>…] [--sub <subject>] [--patient <patientId>] [--ttl 1h]
Roles: ${ROLES.join(', ')}`;

/** Prints one bearer token the dev server accepts (signed with AUTH_JWT_SECRET or the dev secret in DATA_DIR). */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string', multiple: true },
      role: { type: 'string', multiple: true },
      sub: { type: 'string' },
      patient: { type: 'string' },
      ttl: { type: 'string', default: '12h' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const tenants = values.tenant ?? [];
  const roles = values.role ?? [];
  const problems: string[] = [];
  if (tenants.length === 0) problems.push('--tenant is required');
  if (roles.length === 0) problems.push('--role is required');
  for (const role of roles) if (!(ROLES as readonly string[]).includes(role)) problems.push(`unknown role '${role}'`);
  if (roles.includes('patient') && !values.patient) problems.push('--patient <patientId> is required with --role patient');
  let ttlSeconds = 0;
  try {
    ttlSeconds = Math.max(1, Math.floor(parseDuration(values.ttl!) / 1000));
  } catch (err) {
    problems.push(`--ttl: ${(err as Error).message}`);
  }
  if (problems.length > 0) {
    console.error(`${problems.join('\n')}\n\n${USAGE}`);
    process.exit(2);
  }
  const config = loadConfig();
  const secrets = resolveSecrets(config);
  if (!secrets.jwtSecret) {
    console.error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from this command');
    process.exit(2);
  }
  const token = await issueAccessToken(
    secrets.jwtSecret,
    { sub: values.sub ?? `dev-${roles[0]}`, tenants, roles, patientId: values.patient, ttlSeconds },
    config,
  );
  process.stdout.write(`${token}\n`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

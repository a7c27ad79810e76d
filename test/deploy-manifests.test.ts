/**
 * deploy/kubernetes: every manifest validated against the Kubernetes API's schemas (the
 * validators that kubernetes-models generates from them: types, required fields, enums; unknown
 * fields are not caught), then the wiring a schema cannot see: Services select the pods of a
 * workload and target a port it declares, the probes hit serve's /healthz, every secret key exists,
 * the autoscaler scales the Deployment, and the Dockerfile starts the package's own bin.
 * No cluster and no container runtime run here (docs/deployment.md says so).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';

const root = new URL('../', import.meta.url).pathname;
const directory = join(root, 'deploy', 'kubernetes');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; stringData?: Record<string, string> };
interface Validatable {
  validate(): void;
}

const models: Record<string, new (data: any) => Validatable> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

function manifests(): Array<{ file: string; manifest: Manifest }> {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(directory, file), 'utf8')).map((document) => {
        expect(document.errors, file).toEqual([]);
        return { file, manifest: document.toJS() as Manifest };
      }),
    );
}

function validate(manifest: Manifest): void {
  const Model = models[`${manifest.apiVersion}/${manifest.kind}`];
  if (!Model) throw new Error(`no schema here for ${manifest.apiVersion} ${manifest.kind}`);
  new Model(manifest).validate();
}

const all = manifests();
const byKind = (kind: string) => all.map(({ manifest }) => manifest).filter((manifest) => manifest.kind === kind);
const containersOf = (workload: Manifest): any[] => workload.spec.template.spec.containers;

describe('deploy/kubernetes', () => {
  test('every manifest is valid against the schema of its kind', () => {
    expect(new Set(all.map(({ manifest }) => manifest.kind))).toEqual(new Set(['Deployment', 'StatefulSet', 'Service', 'Secret', 'HorizontalPodAutoscaler']));
    for (const { file, manifest } of all) expect(() => validate(manifest), `${file}: ${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
  });

  test('the validator is real: a port given as text and a Deployment without a selector are refused', () => {
    const [serve] = byKind('Deployment');
    const broken = structuredClone(serve);
    containersOf(broken)[0].ports[0].containerPort = 'eighty';
    expect(() => validate(broken)).toThrow(/containerPort must be integer/);
    const unselected = structuredClone(serve);
    delete unselected.spec.selector;
    expect(() => validate(unselected)).toThrow(/must have required property .?selector/);
  });

  test('each Service selects the pods of one workload and targets a port they declare', () => {
    const workloads = [...byKind('Deployment'), ...byKind('StatefulSet')];
    for (const service of byKind('Service')) {
      const selected = workloads.filter((workload) => Object.entries(service.spec.selector as Record<string, string>).every(([key, value]) => workload.spec.template.metadata.labels[key] === value));
      expect(selected.map((workload) => workload.metadata.name), service.metadata.name).toHaveLength(1);
      const ports = containersOf(selected[0]).flatMap((container) => container.ports ?? []);
      for (const port of service.spec.ports) expect(ports.some((declared: any) => declared.name === port.targetPort || declared.containerPort === port.targetPort), `${service.metadata.name} → ${port.targetPort}`).toBe(true);
      expect(Object.entries(selected[0].spec.selector.matchLabels)).toEqual(expect.arrayContaining(Object.entries(service.spec.selector)));
    }
  });

  test('serve is probed on /healthz, keeps its secrets in the Secret, and is what the autoscaler scales', () => {
    const [serve] = byKind('Deployment');
    const [container] = containersOf(serve);
    expect(container.args.slice(0, 3)).toEqual(['serve', '--host', '0.0.0.0']);
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(probe.httpGet.path).toBe('/healthz');
      expect(container.ports.map((port: any) => port.name)).toContain(probe.httpGet.port);
    }
    // Above serve's default --drain-timeout of 60 s, so a replica finishes what it holds.
    expect(serve.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(60);
    const [secret] = byKind('Secret');
    const references = all
      .map(({ manifest }) => manifest)
      .filter((manifest) => manifest.spec?.template)
      .flatMap((workload) => containersOf(workload).flatMap((entry) => (entry.env ?? []).map((variable: any) => variable.valueFrom?.secretKeyRef).filter(Boolean)));
    expect(references.map((reference: any) => reference.key).sort()).toEqual(['judge-key', 'redis-password', 'redis-password', 'token']);
    for (const reference of references) {
      expect(reference.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData!)).toContain(reference.key);
    }
    const [autoscaler] = byKind('HorizontalPodAutoscaler');
    expect(autoscaler.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: serve.metadata.name });
    expect(container.resources.requests.cpu).toBeDefined(); // CPU utilisation is relative to the request
  });

  test('the Dockerfile installs the packed package and starts its bin', () => {
    const dockerfile = readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8');
    const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; files: string[] };
    expect(dockerfile).toMatch(new RegExp(`COPY ${packageJson.name}-\\*\\.tgz`));
    const entry = /ENTRYPOINT \["node", "\/opt\/rubricate\/node_modules\/rubricate\/([^"]+)"\]/.exec(dockerfile);
    expect(entry?.[1]).toBe(packageJson.bin.rubricate.replace(/^\.\//, ''));
    expect(packageJson.files).toContain(entry![1].split('/')[0]);
    expect(readFileSync(join(root, 'deploy', 'Dockerfile.dockerignore'), 'utf8')).toContain(`!${packageJson.name}-*.tgz`);
  });
});

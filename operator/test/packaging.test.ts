/**
 * Packaging: both Helm charts lint and render with a real helm; every
 * rendered manifest and every sample validates against the Kubernetes
 * schemas, and every SvcCluster against the CRD's schema and CEL rules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Secret } from 'kubernetes-models/v1/Secret';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildCrd } from '../src/crd/crd.ts';
import { crdAdmission } from './crd-admission.ts';
import { REPO } from './svc-server.ts';
import { helm, kubectl } from './tools.ts';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [k: string]: unknown };
const admit = crdAdmission(buildCrd() as never);
const MODELS: Record<string, new (d: never) => { validate(): void }> = {
  Deployment,
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  Secret,
  CustomResourceDefinition,
};

function docs(yaml: string): Doc[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as Doc)
    .filter((d) => d && typeof d === 'object');
}

/** Validates every document; returns the kinds seen. */
function validateAll(list: Doc[]): string[] {
  for (const d of list) {
    if (d.kind === 'SvcCluster') {
      expect(admit(d), `${d.metadata.name}`).toEqual([]);
      continue;
    }
    const Model = MODELS[d.kind];
    if (!Model) throw new Error(`no schema check for kind ${d.kind}`);
    new Model(d as never).validate();
  }
  return list.map((d) => d.kind);
}

const clusterValues = ['--set', 'credentials.accessKey=chart-admin', '--set', 'credentials.secretKey=chart-secret-0123'];

describe('Helm charts and samples', () => {
  it('helm lint passes for both charts', () => {
    expect(helm(['lint', '--strict', 'charts/svc-operator']).out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(helm(['lint', '--strict', 'charts/svc-cluster', ...clusterValues]).out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('svc-operator renders RBAC, ServiceAccount and Deployment, and carries the CRD in crds/ (equal to the repository\'s crds/)', () => {
    const out = docs(helm(['template', 'ops', 'charts/svc-operator', '--namespace', 'svc-system', '--include-crds']).out);
    expect(validateAll(out).sort()).toEqual(['ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Role', 'RoleBinding', 'ServiceAccount']);
    const crd = out.find((d) => d.kind === 'CustomResourceDefinition')!;
    const committed = docs(readFileSync(join(REPO, 'crds/svc.io_svcclusters.yaml'), 'utf8'))[0]!;
    expect(crd).toEqual(committed);
    // Only from crds/: a template would make Helm upgrade (and a second release fight over) the CRD.
    expect(docs(helm(['template', 'ops', 'charts/svc-operator', '--namespace', 'svc-system']).out).some((d) => d.kind === 'CustomResourceDefinition')).toBe(false);
    const dep = out.find((d) => d.kind === 'Deployment') as unknown as { spec: { strategy: unknown } };
    expect(dep.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const role = out.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'ops-svc-operator')! as unknown as { rules: { resources: string[]; verbs: string[] }[] };
    // Least privilege: secrets are read, and written only by create/patch (spec.tls.generated: the CA and the
    // certificate), never listed, watched or deleted; the operator never writes SvcCluster spec through update.
    expect(role.rules.find((r) => r.resources.includes('secrets'))!.verbs).toEqual(['get', 'create', 'patch']);
    expect(role.rules.find((r) => r.resources.includes('certificates'))).toMatchObject({ apiGroups: ['cert-manager.io'], verbs: ['create', 'patch'] });
    expect(role.rules.find((r) => r.resources.includes('svcclusters'))!.verbs).not.toContain('update');
    expect(JSON.stringify(role.rules)).not.toContain('"*"');
  });

  it('svc-operator: a watched namespace turns the RBAC into a Role; --skip-crds leaves the CRD out', () => {
    const scoped = docs(helm(['template', 'ops', 'charts/svc-operator', '--namespace', 'svc-system', '--set', 'watchNamespace=storage', '--skip-crds']).out);
    validateAll(scoped);
    expect(scoped.some((d) => d.kind === 'CustomResourceDefinition')).toBe(false);
    expect(scoped.find((d) => d.kind === 'Role' && d.metadata.name === 'ops-svc-operator')?.metadata.namespace).toBe('storage');
    const dep = scoped.find((d) => d.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
    expect(dep.spec.template.spec.containers[0]!.env.find((e) => e.name === 'SVC_OPERATOR_NAMESPACE')?.value).toBe('storage');
  });

  it('svc-cluster renders a SvcCluster the CRD admits (with its Secret), and refuses missing credentials', () => {
    const out = docs(helm(['template', 'demo', 'charts/svc-cluster', '--namespace', 'storage', ...clusterValues]).out);
    expect(validateAll(out).sort()).toEqual(['Secret', 'SvcCluster']);
    const withOptions = docs(
      helm([
        'template', 'demo', 'charts/svc-cluster', '--namespace', 'storage', '--set', 'credentials.existingSecret=mine',
        '--set', 'erasure.standardParity=2', '--set', 'services.console.enabled=false', '--set', 'storage.pvcRetention=Delete',
      ]).out,
    );
    expect(validateAll(withOptions)).toEqual(['SvcCluster']);
    const missing = helm(['template', 'demo', 'charts/svc-cluster'], { allowFailure: true });
    expect(missing.code).not.toBe(0);
    expect(missing.out).toMatch(/credentials.accessKey is required/);
    // A value the CRD refuses is caught by validation (parity above half the set).
    const bad = docs(helm(['template', 'demo', 'charts/svc-cluster', '--set', 'credentials.existingSecret=mine', '--set', 'erasure.standardParity=9']).out);
    expect(admit(bad[0]).length).toBeGreaterThan(0);
  });

  it('chart value tls reaches spec.tls, each mode admitted; two modes at once refused', () => {
    const base = ['template', 'demo', 'charts/svc-cluster', '--set', 'credentials.existingSecret=mine'];
    for (const mode of [['--set', 'tls.secretName=my-tls'], ['--set', 'tls.certManager.issuerRef.name=ca', '--set', 'tls.certManager.issuerRef.kind=ClusterIssuer'], ['--set', 'tls.generated.duration=2160h', '--set', 'tls.extraNames[0]=s3.example.com']]) {
      const c = docs(helm([...base, ...mode]).out).find((d) => d.kind === 'SvcCluster')!;
      expect(c['spec']).toHaveProperty('tls');
      expect(admit(c)).toEqual([]);
    }
    const both = docs(helm([...base, '--set', 'tls.secretName=my-tls', '--set', 'tls.generated.duration=1h']).out).find((d) => d.kind === 'SvcCluster')!;
    expect(admit(both).map((v) => v.message)).toContain('tls takes exactly one of secretName, certManager or generated');
  });

  it('config/samples: cluster.yaml and the GitOps kustomization validate', () => {
    const samples = join(REPO, 'config/samples');
    for (const f of readdirSync(samples).filter((x) => x.endsWith('.yaml'))) validateAll(docs(readFileSync(join(samples, f), 'utf8')));
    const built = docs(kubectl(['kustomize', 'config/samples/gitops']));
    expect(validateAll(built)).toEqual(['SvcCluster']);
    expect(built[0]!.metadata.namespace).toBe('storage');
  });
});

/** Where the generated CRD files live (repository paths). */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export const GENERATED_FILES = {
  crd: join(REPO, 'crds/svc.io_svcclusters.yaml'),
  chartCrd: join(REPO, 'charts/svc-operator/crds/svc.io_svcclusters.yaml'),
} as const;

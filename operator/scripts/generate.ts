/**
 * Writes the generated files: the SvcCluster CRD into `crds/` and into the
 * operator chart. `npm run -w operator generate`; `crd.test.ts` fails when the
 * committed files differ from a fresh render.
 */
import { writeFileSync } from 'node:fs';
import { chartCrdFile, crdYaml } from '../src/crd/crd.ts';
import { GENERATED_FILES } from '../src/crd/generated-files.ts';

writeFileSync(GENERATED_FILES.crd, crdYaml());
writeFileSync(GENERATED_FILES.chartCrd, chartCrdFile());
console.log(`wrote ${GENERATED_FILES.crd} and ${GENERATED_FILES.chartCrd}`);

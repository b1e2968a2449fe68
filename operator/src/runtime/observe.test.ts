/**
 * What the controller reads off pods and StatefulSets for the planner: the
 * fields the planner's failure rows depend on (design §3.2 row 1: an
 * unschedulable new pool; §3.4: an immutable claim template).
 */
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_LAUNCH_HASH, LABEL_POOL } from '../topology/names.ts';
import { podObs, stsObs } from './controller.ts';

const pending = (conditions: NonNullable<V1Pod['status']>['conditions']): V1Pod => ({
  metadata: { name: 'prod-p1-0', labels: { [LABEL_POOL]: 'p1' }, annotations: { [ANNOTATION_LAUNCH_HASH]: 'h1' } },
  status: { phase: 'Pending', conditions },
});

describe('observation of pods and StatefulSets', () => {
  it('marks a pod the scheduler could not place, and only that', () => {
    const unschedulable = podObs(pending([{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' }]), 'http://x:9000');
    expect(unschedulable).toMatchObject({ name: 'prod-p1-0', pool: 'p1', ordinal: 0, launchHash: 'h1', running: false, ready: false, unschedulable: true });
    expect(podObs(pending([{ type: 'PodScheduled', status: 'True' }]), 'http://x:9000').unschedulable).toBe(false);
    expect(podObs(pending(undefined), 'http://x:9000').unschedulable).toBe(false);
  });

  it('reads the drive claim template: size and StorageClass', () => {
    const sts: V1StatefulSet = {
      metadata: { name: 'prod-p0', labels: { [LABEL_POOL]: 'p0' } },
      spec: {
        replicas: 4,
        serviceName: 'prod-hl',
        selector: {},
        template: {},
        volumeClaimTemplates: [{ metadata: { name: 'data-0' }, spec: { storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } } }],
      },
    };
    expect(stsObs(sts)).toMatchObject({ name: 'prod-p0', pool: 'p0', replicas: 4, storage: '10Gi', storageClassName: 'fast' });
    expect(stsObs({ ...sts, spec: { ...sts.spec!, volumeClaimTemplates: [{ spec: { resources: { requests: { storage: '10Gi' } } } }] } }).storageClassName).toBeUndefined();
  });
});

/**
 * Schema building blocks for the SvcCluster CRD: TypeBox helpers that emit
 * Kubernetes *structural* OpenAPI v3 (every node typed, no `const`, no
 * `patternProperties`) while giving TypeScript the matching static type.
 *
 * The CRD YAML, the operator's types and the tests' admission validation all
 * come from these values, so they cannot drift apart.
 */
import { type TSchema, Type, type Static, type ObjectOptions } from '@sinclair/typebox';

export type { Static, TSchema };
export { Type };

/** A CEL validation rule (`x-kubernetes-validations` entry). */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  /** Kubernetes 1.30+: a transition rule may skip when the old object was invalid. */
  readonly optionalOldSelf?: boolean;
}

export function withRules(rules: readonly CelRule[]): ObjectOptions {
  return { 'x-kubernetes-validations': rules };
}

/** A string limited to the given values (structural: `type: string` + `enum`). */
export function StringEnum<const T extends readonly string[]>(values: T, opts: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}

/** `map[string]string` (structural: `additionalProperties`, not `patternProperties`). */
export function StringMap(opts: { description?: string; maxProperties?: number } = {}) {
  return Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' }, ...opts });
}

/** A Kubernetes quantity (`1Ti`, `500m`, `2`). */
export function Quantity(opts: { description?: string } = {}) {
  return Type.Unsafe<string | number>({
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
    ...opts,
  });
}

/** DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const ResourceList = Type.Unsafe<Record<string, string | number>>({
  type: 'object',
  additionalProperties: Quantity(),
});

export const ResourceRequirements = Type.Object({
  limits: Type.Optional(ResourceList),
  requests: Type.Optional(ResourceList),
});

const LabelSelectorRequirement = Type.Object({
  key: Type.String(),
  operator: Type.String(),
  values: Type.Optional(Type.Array(Type.String())),
});

export const LabelSelector = Type.Object(
  {
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirement)),
    matchLabels: Type.Optional(StringMap()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

const NodeSelectorRequirement = Type.Object({
  key: Type.String(),
  operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: Type.Optional(Type.Array(Type.String())),
});

const NodeSelectorTerm = Type.Object(
  {
    matchExpressions: Type.Optional(Type.Array(NodeSelectorRequirement)),
    matchFields: Type.Optional(Type.Array(NodeSelectorRequirement)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

const PodAffinityTerm = Type.Object({
  labelSelector: Type.Optional(LabelSelector),
  namespaceSelector: Type.Optional(LabelSelector),
  namespaces: Type.Optional(Type.Array(Type.String())),
  topologyKey: Type.String(),
  matchLabelKeys: Type.Optional(Type.Array(Type.String())),
  mismatchLabelKeys: Type.Optional(Type.Array(Type.String())),
});

const WeightedPodAffinityTerm = Type.Object({
  weight: Type.Integer({ minimum: 1, maximum: 100 }),
  podAffinityTerm: PodAffinityTerm,
});

const PodAffinityRules = Type.Object({
  requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(Type.Array(PodAffinityTerm)),
  preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(Type.Array(WeightedPodAffinityTerm)),
});

export const Affinity = Type.Object({
  nodeAffinity: Type.Optional(
    Type.Object({
      requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Type.Object({ nodeSelectorTerms: Type.Array(NodeSelectorTerm) }, { 'x-kubernetes-map-type': 'atomic' }),
      ),
      preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Type.Array(Type.Object({ weight: Type.Integer({ minimum: 1, maximum: 100 }), preference: NodeSelectorTerm })),
      ),
    }),
  ),
  podAffinity: Type.Optional(PodAffinityRules),
  podAntiAffinity: Type.Optional(PodAffinityRules),
});

export const Toleration = Type.Object({
  key: Type.Optional(Type.String()),
  operator: Type.Optional(StringEnum(['Exists', 'Equal'])),
  value: Type.Optional(Type.String()),
  effect: Type.Optional(StringEnum(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
  tolerationSeconds: Type.Optional(Type.Integer()),
});

export const TopologySpreadConstraint = Type.Object({
  maxSkew: Type.Integer({ minimum: 1 }),
  topologyKey: Type.String(),
  whenUnsatisfiable: StringEnum(['DoNotSchedule', 'ScheduleAnyway']),
  labelSelector: Type.Optional(LabelSelector),
  minDomains: Type.Optional(Type.Integer({ minimum: 1 })),
  matchLabelKeys: Type.Optional(Type.Array(Type.String())),
  nodeAffinityPolicy: Type.Optional(StringEnum(['Honor', 'Ignore'])),
  nodeTaintsPolicy: Type.Optional(StringEnum(['Honor', 'Ignore'])),
});

export const LocalObjectReference = Type.Object({ name: Type.String({ minLength: 1 }) });

const KeySelector = Type.Object({ name: Type.String(), key: Type.String(), optional: Type.Optional(Type.Boolean()) });

export const EnvVar = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z][-._a-zA-Z0-9]*$' }),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(
    Type.Object({
      secretKeyRef: Type.Optional(KeySelector),
      configMapKeyRef: Type.Optional(KeySelector),
      fieldRef: Type.Optional(Type.Object({ fieldPath: Type.String(), apiVersion: Type.Optional(Type.String()) })),
    }),
  ),
});

/** metav1.Condition, as kstatus and `kubectl wait --for=condition=` read it. */
export const Condition = Type.Object({
  type: Type.String({ maxLength: 316 }),
  status: StringEnum(['True', 'False', 'Unknown']),
  reason: Type.String({ maxLength: 1024 }),
  message: Type.String({ maxLength: 32768 }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
});

/**
 * Plain JSON of a schema: drops TypeBox's symbol keys so the value can be
 * written as YAML or handed to a validator.
 */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

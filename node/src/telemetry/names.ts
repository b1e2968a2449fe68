/**
 * Metric names (SPEC.md "Telemetry" for the `svc_*` ones; OpenTelemetry
 * naming for the request and RPC metrics, which the collector's Prometheus
 * exporter renders as `svc_s3_requests_total`,
 * `svc_s3_request_duration_seconds_bucket`, …; `svc.lifecycle.actions` as
 * `svc_lifecycle_actions_total{outcome}`) and histogram buckets.
 */
export const METRIC = {
  readinessReady: 'svc_runtime_readiness_ready',
  readinessDegraded: 'svc_runtime_readiness_degraded_total',
  scannerObjects: 'svc_scanner_objects_scanned_total',
  scannerCycles: 'svc_scanner_cycles_total',
  scannerCycleDuration: 'svc_scanner_cycle_duration_seconds',
  healRunning: 'svc_heal_task_running',
  healQueueDelay: 'svc_heal_queue_delay_seconds',
  healStarts: 'svc_heal_task_start_total',
  capacityUsed: 'svc_capacity_current_bytes',
  starts: 'svc_start_total',
  s3Requests: 'svc.s3.requests',
  s3Duration: 'svc.s3.request.duration',
  adminRequests: 'svc.admin.requests',
  adminDuration: 'svc.admin.request.duration',
  rpcErrors: 'svc.rpc.client.errors',
  lifecycleActions: 'svc.lifecycle.actions',
  logRecordsDropped: 'svc.log.records.dropped',
  telemetryQueued: 'svc.telemetry.queue.size',
  telemetryDropped: 'svc.telemetry.records.dropped',
  tlsCertificateNotAfter: 'svc_tls_certificate_not_after_seconds',
  peerClockSkew: 'svc_peer_clock_skew_seconds',
  replicationQueued: 'svc_replication_queued_objects',
  replicationQueuedBytes: 'svc_replication_queued_bytes',
  replicationFailed: 'svc_replication_failed_objects',
  replicationFailedBytes: 'svc_replication_failed_bytes',
  replicationCompleted: 'svc_replication_completed_objects',
  replicationCompletedBytes: 'svc_replication_completed_bytes',
  replicationLag: 'svc_replication_lag_seconds',
  replicationTargetOnline: 'svc_replication_target_online',
} as const;

/** The ten metrics of SPEC.md, in its order. */
export const SPEC_METRICS = [
  METRIC.readinessReady,
  METRIC.readinessDegraded,
  METRIC.scannerObjects,
  METRIC.scannerCycles,
  METRIC.scannerCycleDuration,
  METRIC.healRunning,
  METRIC.healQueueDelay,
  METRIC.healStarts,
  METRIC.capacityUsed,
  METRIC.starts,
] as const;

/** Request latency buckets, seconds (OpenTelemetry's HTTP server duration advice). */
export const S3_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Heal queue delay buckets, seconds: a second to an hour. */
export const HEAL_DELAY_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

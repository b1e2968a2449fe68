{{- define "svc-cluster.name" -}}{{ default .Release.Name .Values.nameOverride | trunc 40 | trimSuffix "-" }}{{- end -}}

{{- define "svc-cluster.secretName" -}}{{ default (printf "%s-root" (include "svc-cluster.name" .)) .Values.credentials.existingSecret }}{{- end -}}

{{- define "svc-cluster.labels" -}}
app.kubernetes.io/name: svc
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

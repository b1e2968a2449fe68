{{- define "svc-operator.name" -}}svc-operator{{- end -}}

{{- define "svc-operator.fullname" -}}
{{- if contains "svc-operator" .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-svc-operator" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "svc-operator.labels" -}}
app.kubernetes.io/name: svc-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "svc-operator.selector" -}}
app.kubernetes.io/name: svc-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

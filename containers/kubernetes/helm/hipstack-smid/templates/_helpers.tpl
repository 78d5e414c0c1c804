{{/* Names and labels shared by the templates (the usual helm create layout). */}}

{{- define "hipstack-smid.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: <release>-hipstack-smid, or the release name when it already says hipstack-smid. */}}
{{- define "hipstack-smid.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "hipstack-smid.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hipstack-smid.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hipstack-smid.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "hipstack-smid.labels" -}}
helm.sh/chart: {{ include "hipstack-smid.chart" . }}
{{ include "hipstack-smid.selectorLabels" . }}
app.kubernetes.io/component: exporter
app.kubernetes.io/part-of: hipstack
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "hipstack-smid.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "hipstack-smid.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: the tag defaults to the chart's appVersion, the hipstack release. */}}
{{- define "hipstack-smid.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Where the TLS secret is mounted; the daemon's tls_cert and tls_key point into it. */}}
{{- define "hipstack-smid.tlsDir" -}}
/etc/hipstack/tls
{{- end }}

{{/* Refuses combinations the daemon cannot run with (helm install stops with the message). */}}
{{- define "hipstack-smid.validate" -}}
{{- if and .Values.tls.enabled (not .Values.grpc.enabled) }}
{{- fail "tls.enabled: TLS is for the gRPC listener only (the daemon serves /metrics over plain HTTP); set grpc.enabled=true too" }}
{{- end }}
{{- if .Values.tls.enabled }}
{{- $_ := required "tls.secretName: name the kubernetes.io/tls Secret that holds the certificate and key" .Values.tls.secretName }}
{{- end }}
{{- if and .Values.grpc.enabled (eq (int .Values.grpc.port) (int .Values.daemon.httpPort)) }}
{{- fail "grpc.port: must differ from daemon.httpPort" }}
{{- end }}
{{- end }}

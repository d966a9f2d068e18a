{{/* The objects' name: the release name when it already says tether-hub, else RELEASE-tether-hub. */}}
{{- define "tether-hub.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The headless Service: short, as with setHostnameAsFQDN the pod's DNS name is its host name (at most 64 characters). */}}
{{- define "tether-hub.headless" -}}
{{- printf "%s-pods" (include "tether-hub.fullname" .) -}}
{{- end -}}

{{- define "tether-hub.selectorLabels" -}}
app.kubernetes.io/name: tether-hub
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tether-hub.labels" -}}
{{ include "tether-hub.selectorLabels" . }}
app.kubernetes.io/part-of: tether
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Refuses value combinations the hub would refuse at start, naming the value. */}}
{{- define "tether-hub.validate" -}}
{{- $external := gt (len .Values.etcd.endpoints) 0 -}}
{{- if and (not $external) (ne (int .Values.replicas) 1) -}}
{{- fail "replicas > 1 needs etcd.endpoints: the embedded etcd is a single member" -}}
{{- end -}}
{{- if and .Values.ca.existingSecret .Values.ca.encryptionKeySecret -}}
{{- fail "ca.existingSecret and ca.encryptionKeySecret are exclusive (the hub refuses both as ambiguous)" -}}
{{- end -}}
{{- if and $external (gt (int .Values.replicas) 1) (not (or .Values.ca.existingSecret .Values.ca.encryptionKeySecret)) -}}
{{- fail "several replicas need one CA: set ca.existingSecret or ca.encryptionKeySecret" -}}
{{- end -}}
{{- if and .Values.etcd.tls.existingSecret (not $external) -}}
{{- fail "etcd.tls.existingSecret needs etcd.endpoints" -}}
{{- end -}}
{{- range .Values.etcd.endpoints -}}
{{- if and $.Values.etcd.tls.existingSecret (not (hasPrefix "https://" .)) -}}
{{- fail (printf "etcd.endpoints: %s: etcd.tls needs https:// endpoints" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The objects' name: the release name when it already says tether-agent, else RELEASE-tether-agent. */}}
{{- define "tether-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tether-agent.tokenSecret" -}}
{{- .Values.bootstrapToken.existingSecret | default (printf "%s-bootstrap" (include "tether-agent.fullname" .)) -}}
{{- end -}}

{{- define "tether-agent.selectorLabels" -}}
app.kubernetes.io/name: tether-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tether-agent.labels" -}}
{{ include "tether-agent.selectorLabels" . }}
app.kubernetes.io/part-of: tether
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Refuses what the agent would refuse at start, naming the value. */}}
{{- define "tether-agent.validate" -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" .Values.cluster) -}}
{{- fail "cluster: required, a DNS subdomain (lower-case letters, digits, '-' and '.')" -}}
{{- end -}}
{{- if not .Values.hub -}}
{{- fail "hub: required, the hub's host:port" -}}
{{- end -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" .Values.caHash) -}}
{{- fail "caHash: required, sha256:<64 hex digits> (tetherctl join prints it)" -}}
{{- end -}}
{{- if not (or .Values.bootstrapToken.value .Values.bootstrapToken.existingSecret) -}}
{{- fail "bootstrapToken.value or bootstrapToken.existingSecret: required" -}}
{{- end -}}
{{- if not (has .Values.persistence.type (list "pvc" "emptyDir")) -}}
{{- fail (printf "persistence.type %q: want pvc or emptyDir" .Values.persistence.type) -}}
{{- end -}}
{{- with .Values.interpreter -}}
{{- if not (and (gt (float64 .luaMemoryFraction) 0.0) (le (float64 .luaMemoryFraction) 1.0)) -}}
{{- fail (printf "interpreter.luaMemoryFraction %v: want a share of the memory limit in (0, 1]" .luaMemoryFraction) -}}
{{- end -}}
{{- if lt (int .luaConcurrency) 1 -}}
{{- fail (printf "interpreter.luaConcurrency %v: want 1 or more" .luaConcurrency) -}}
{{- end -}}
{{- if and .webhooks.refuse .webhooks.hosts -}}
{{- fail "interpreter.webhooks.hosts: not with interpreter.webhooks.refuse, which refuses every host" -}}
{{- end -}}
{{- end -}}
{{- end -}}

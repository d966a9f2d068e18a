package work

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrune(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{{
		name: "metadata and status",
		in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"1","generation":2,
			"creationTimestamp":"x","deletionTimestamp":"x","deletionGracePeriodSeconds":30,"selfLink":"/x","finalizers":["f"],
			"managedFields":[{}],"ownerReferences":[{}]},"data":{"k":"v"},"status":{"x":1}}`,
		want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`,
	}, {
		name: "service clusterIP",
		in:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ports":[{"port":80}]}}`,
		want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`,
	}, {
		name: "headless service keeps None",
		in:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
		want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
	}, {
		name: "service account token secrets",
		in: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},
			"secrets":[{"name":"sa-token-a"},{"name":"sa-token-b"},{"name":"other"},{"name":"sa-token-c"}]}`,
		want: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},"secrets":[{"name":"other"}]}`,
	}, {
		name: "service account token secret",
		in: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token","metadata":{"name":"t",
			"annotations":{"kubernetes.io/service-account.uid":"u","kubernetes.io/service-account.name":"sa"}},"data":{"token":"eA=="}}`,
		want: `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/service-account-token","metadata":{"name":"t",
			"annotations":{"kubernetes.io/service-account.name":"sa"}},"data":null}`,
	}, {
		name: "opaque secret untouched",
		in:   `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"t"},"data":{"k":"eA=="}}`,
		want: `{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"t"},"data":{"k":"eA=="}}`,
	}, {
		name: "job selector labels and ttl",
		in: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":10,
			"selector":{"matchLabels":{"controller-uid":"u","batch.kubernetes.io/controller-uid":"u","keep":"me"}},
			"template":{"metadata":{"labels":{"controller-uid":"u","job-name":"j","batch.kubernetes.io/controller-uid":"u",
			"batch.kubernetes.io/job-name":"j","app":"x"}}}}}`,
		want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"selector":{"matchLabels":{"keep":"me"}},
			"template":{"metadata":{"labels":{"app":"x"}}}}}`,
	}, {
		name: "job with manual selector keeps labels",
		in: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":true,"ttlSecondsAfterFinished":10,
			"selector":{"matchLabels":{"controller-uid":"u"}},"template":{"metadata":{"labels":{"controller-uid":"u"}}}}}`,
		want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":true,
			"selector":{"matchLabels":{"controller-uid":"u"}},"template":{"metadata":{"labels":{"controller-uid":"u"}}}}}`,
	}, {
		name: "deployment revision annotations",
		in: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{
			"deployment.kubernetes.io/revision":"2","deployment.kubernetes.io/revision-history":"1"}}}`,
		want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`,
	}, {
		name: "pvc bound by the hub's controller",
		in: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p","annotations":{
			"volume.kubernetes.io/selected-node":"n1","pv.kubernetes.io/bind-completed":"yes","pv.kubernetes.io/bound-by-controller":"yes"}},
			"spec":{"volumeName":"pvc-123","resources":{"requests":{"storage":"1Gi"}}}}`,
		want: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p"},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`,
	}, {
		name: "pvc statically bound by the user",
		in:   `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p"},"spec":{"volumeName":"nfs-1"}}`,
		want: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p"},"spec":{"volumeName":"nfs-1"}}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, want := object(t, tc.in), object(t, tc.want)
			Prune(obj)
			if diff := cmp.Diff(want.Object, obj.Object); diff != "" {
				t.Errorf("Prune(%s) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

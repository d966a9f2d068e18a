package native

import (
	"fmt"
	"reflect"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// aggregateJob replaces the status of an unfinished Job with the members'
// (Karmada's helper.ParsingJobStatus); a finished template is left alone.
func aggregateJob(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	job := &batchv1.Job{}
	if err := fromUnstructured(obj.Object, job); err != nil {
		return nil, err
	}
	if finished, _ := jobFinished(&job.Status); finished {
		return obj, nil
	}
	status, err := jobStatus(job, items)
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(job.Status, *status) {
		return obj, nil
	}
	job.Status = *status
	return toUnstructured(job)
}

// jobTally is what jobStatus counts over the members.
type jobTally struct {
	failed                          []string
	complete, successCriteria       int
	started, completed              int
	earliestStart, latestCompletion *metav1.Time
}

func (t *jobTally) add(item configv1alpha1.AggregatedStatusItem, s *batchv1.JobStatus) {
	switch finished, typ := jobFinished(s); {
	case finished && typ == batchv1.JobComplete:
		t.complete++
	case finished && typ == batchv1.JobFailed:
		t.failed = append(t.failed, item.ClusterName)
	}
	if hasTrueCondition(s, batchv1.JobSuccessCriteriaMet) {
		t.successCriteria++
	}
	if s.StartTime != nil {
		t.started++
	}
	if t.earliestStart == nil || s.StartTime.Before(t.earliestStart) {
		t.earliestStart = s.StartTime
	}
	if s.CompletionTime != nil {
		t.completed++
		if t.latestCompletion == nil || t.latestCompletion.Before(s.CompletionTime) {
			t.latestCompletion = s.CompletionTime
		}
	}
}

func jobStatus(job *batchv1.Job, items []configv1alpha1.AggregatedStatusItem) (*batchv1.JobStatus, error) {
	status, tally := &batchv1.JobStatus{}, &jobTally{}
	err := eachStatus(items, func(item configv1alpha1.AggregatedStatusItem, s *batchv1.JobStatus) {
		status.Active += s.Active
		status.Succeeded += s.Succeeded
		status.Failed += s.Failed
		tally.add(item, s)
	})
	if err != nil {
		return nil, err
	}
	status.Conditions = jobConditions(tally, len(items))
	status.StartTime = job.Status.StartTime
	if job.Status.StartTime == nil && tally.started == len(items) && tally.started > 0 {
		status.StartTime = tally.earliestStart.DeepCopy()
	}
	if tally.latestCompletion != nil && tally.completed == len(items) {
		status.CompletionTime = tally.latestCompletion.DeepCopy()
	}
	return status, nil
}

// jobConditions: Failed when any member failed; Complete when every item
// completed, plus SuccessCriteriaMet when every item met it. Timestamps are
// now, as in Karmada.
func jobConditions(t *jobTally, items int) []batchv1.JobCondition {
	var conds []batchv1.JobCondition
	now := metav1.Now()
	if len(t.failed) > 0 {
		msg := fmt.Sprintf("Job executed failed in member clusters %s", strings.Join(t.failed, ","))
		conds = append(conds, jobCondition(batchv1.JobFailed, "JobFailed", msg, now))
	}
	if t.complete == items && t.complete > 0 {
		conds = append(conds, jobCondition(batchv1.JobComplete, "Completed", "Job completed", now))
		if t.successCriteria == items {
			conds = append(conds, jobCondition(batchv1.JobSuccessCriteriaMet, "CompletionsReached",
				"All member clusters have met success criteria", now))
		}
	}
	return conds
}

func jobCondition(typ batchv1.JobConditionType, reason, msg string, now metav1.Time) batchv1.JobCondition {
	return batchv1.JobCondition{
		Type: typ, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now,
		Reason: reason, Message: msg,
	}
}

// jobFinished reports whether a Complete or Failed condition is True.
func jobFinished(s *batchv1.JobStatus) (bool, batchv1.JobConditionType) {
	for _, c := range s.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func hasTrueCondition(s *batchv1.JobStatus, typ batchv1.JobConditionType) bool {
	for _, c := range s.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// aggregateCronJob concatenates active jobs and keeps the latest schedule
// and success times; only those three fields are written.
func aggregateCronJob(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	cj := &batchv1.CronJob{}
	if err := fromUnstructured(obj.Object, cj); err != nil {
		return nil, err
	}
	status := batchv1.CronJobStatus{}
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *batchv1.CronJobStatus) {
		status.Active = append(status.Active, s.Active...)
		status.LastScheduleTime = laterTime(status.LastScheduleTime, s.LastScheduleTime)
		status.LastSuccessfulTime = laterTime(status.LastSuccessfulTime, s.LastSuccessfulTime)
	})
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(cj.Status, status) {
		return obj, nil
	}
	cj.Status.Active = status.Active
	cj.Status.LastScheduleTime = status.LastScheduleTime
	cj.Status.LastSuccessfulTime = status.LastSuccessfulTime
	return toUnstructured(cj)
}

// laterTime returns the later of two optional times, preferring cur on ties.
func laterTime(cur, next *metav1.Time) *metav1.Time {
	if cur == nil || (next != nil && cur.Before(next)) {
		return next
	}
	return cur
}

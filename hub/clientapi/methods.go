package clientapi

import (
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/roles"
)

// rule is what a method needs before it touches anything: verb on kind,
// a cluster-scoped kind or the hub's own records; or, when perObject, verb
// in some namespace, and then the method decides on each object it
// touches (caller.may), by the object's kind and namespace.
type rule struct {
	verb      roles.Verb
	kind      string
	perObject bool
}

func (r rule) namespace() string {
	if r.perObject {
		return roles.AnyNamespace
	}
	return ""
}

// objectsKind names what a per-object method touches in its first check.
const objectsKind = "objects"

// methodRules holds a rule for every method of the client API, by full
// gRPC method name; authorize refuses a method without one.
// TestEveryMethodHasARule holds it to the generated service descriptors.
var methodRules = map[string]rule{
	hubv1.ObjectService_Apply_FullMethodName:  {verb: roles.Write, kind: objectsKind, perObject: true},
	hubv1.ObjectService_Delete_FullMethodName: {verb: roles.Write, kind: objectsKind, perObject: true},
	hubv1.ObjectService_Get_FullMethodName:    {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.ObjectService_List_FullMethodName:   {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.ObjectService_Watch_FullMethodName:  {verb: roles.Read, kind: objectsKind, perObject: true},

	hubv1.PlacementService_GetPlacement_FullMethodName:    {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.PlacementService_WatchPlacement_FullMethodName:  {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.PlacementService_WatchPlacements_FullMethodName: {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.PlacementService_Simulate_FullMethodName:        {verb: roles.Read, kind: objectsKind, perObject: true},

	hubv1.ClusterService_ListClusters_FullMethodName:      {verb: roles.Read, kind: roles.KindCluster},
	hubv1.ClusterService_GetCluster_FullMethodName:        {verb: roles.Read, kind: roles.KindCluster},
	hubv1.ClusterService_Cordon_FullMethodName:            {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Uncordon_FullMethodName:          {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Taint_FullMethodName:             {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Remove_FullMethodName:            {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Approve_FullMethodName:           {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_RejectKey_FullMethodName:         {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Label_FullMethodName:             {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_Annotate_FullMethodName:          {verb: roles.Write, kind: roles.KindCluster},
	hubv1.ClusterService_SetResourceModels_FullMethodName: {verb: roles.Write, kind: roles.KindCluster},

	// A rollout is read with its template; an editor of the template's
	// namespace steers it (each method checks the template's namespace).
	hubv1.RolloutService_GetRollout_FullMethodName:    {verb: roles.Read, kind: objectsKind, perObject: true},
	hubv1.RolloutService_PauseRollout_FullMethodName:  {verb: roles.Write, kind: objectsKind, perObject: true},
	hubv1.RolloutService_ResumeRollout_FullMethodName: {verb: roles.Write, kind: objectsKind, perObject: true},
	hubv1.RolloutService_UndoRollout_FullMethodName:   {verb: roles.Write, kind: objectsKind, perObject: true},

	// Tokens and users are an admin's, reading them included, as before
	// roles were namespaced.
	hubv1.TokenService_CreateToken_FullMethodName: {verb: roles.Write, kind: roles.KindToken},
	hubv1.TokenService_ListTokens_FullMethodName:  {verb: roles.Write, kind: roles.KindToken},
	hubv1.TokenService_DeleteToken_FullMethodName: {verb: roles.Write, kind: roles.KindToken},

	hubv1.UserService_CreateUser_FullMethodName:       {verb: roles.Write, kind: roles.KindUser},
	hubv1.UserService_SetUserRole_FullMethodName:      {verb: roles.Write, kind: roles.KindUser},
	hubv1.UserService_ListUserRoles_FullMethodName:    {verb: roles.Write, kind: roles.KindUser},
	hubv1.UserService_RevokeUser_FullMethodName:       {verb: roles.Write, kind: roles.KindUser},
	hubv1.UserService_ListRevokedUsers_FullMethodName: {verb: roles.Write, kind: roles.KindUser},
}

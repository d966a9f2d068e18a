// Package thirdparty holds Tether's built-in resource interpreter
// customizations for popular CRDs: ResourceInterpreterCustomization (RIC)
// documents with Lua scripts, embedded in the binary. They rank third in the
// interpreter's precedence chain (hub RICs, then webhooks, then these, then
// the native Go rules), so a hub RIC for the same kind and operation
// overrides them.
//
// The scripts are Tether's own, written from each kind's API documentation;
// they are laid out one kind per file, by project: kruise/ (OpenKruise),
// argo/, flink/, flux/, kubeflow/, kyverno/, ray/, spark/, volcano/. Where
// a script goes beyond Karmada's behaviour (e.g. Retain for CloneSet and
// Advanced StatefulSet), its comment says so. `tetherctl interpret
// --list-builtins` lists every kind with its operations.
//
// The package only ships the documents; it neither decodes nor runs them, so
// it imports nothing of the interpreter. A consumer decodes each file as it
// decodes a hub's RICs:
//
//	files, err := thirdparty.Customizations()
//	for _, f := range files {
//		cs, err := interpreter.DecodeCustomizations(f.Data) // errors name f.Name
//		...
//	}
//
// Adding a kind: add a YAML file under its project's folder (one RIC, named
// thirdparty-<project>-<kind>; every <folder>/*.yaml is embedded), list its
// operations in the project's <project>_test.go (which adds them to
// wantOperations), and write test documents for every operation it
// defines in testdata/<project>/<kind>.yaml (inputs and expected outputs, in
// the layout of Karmada's third-party test documents).
package thirdparty

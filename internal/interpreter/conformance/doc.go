// Package conformance loads the resource interpreter conformance suite and
// compares what an interpreter produced with what Karmada v1.18.2 produced.
//
// The suite lives in internal/interpreter/testdata/conformance/interpreter
// (a verbatim copy of the shared suite; its README.md is the contract). A
// runner loads the cases, calls its interpreter once per case and hands the
// outcome to Compare:
//
//	cases, err := conformance.LoadAll(conformance.Root())
//	for _, c := range cases {
//		if c.Interpreter != conformance.Native { continue }
//		t.Run(c.Name, func(t *testing.T) {
//			if r := c.SkipReason(); r != "" { t.Skip(r) }
//			if err := c.CheckEnabled(ipt.HookEnabled(c.Target, c.Operation)); err != nil { t.Fatal(err) }
//			got, gotErr := run(c) // build got with the Results helpers
//			if err := conformance.Compare(c, got, gotErr); err != nil { t.Fatal(err) }
//		})
//	}
//
// Results are keyed by Karmada's RuleResult names ("replica", "requires",
// "revised", ...) and hold JSON-shaped values. Object results keep the
// int64/float64 distinction of unstructured content, so Compare can check the
// suite's floatPaths; every other value is compared after a JSON round trip.
package conformance

// Package govhost assembles govhost's embedded default: durable evidence
// and policy stores on Pebble in one data directory, the Wasm gate host with
// the three built-in gates and a content-addressed folder of user gate
// modules, and controllers that govern tool managers over them.
//
// It owns only the assembly. The contracts live in governance, evidence,
// policy, abi and controller; the machinery in evidence/pebblestore,
// policy/pebblestore, host and plugins.
//
// A minimal governed tool call:
//
//	eng, err := govhost.Open(ctx, govhost.Options{Dir: "govhost-data"})
//	defer eng.Close(ctx)
//	ctl, err := eng.NewController(controller.Config{})
//	m := controller.NewManager()
//	m.Register(controller.Tool{ID: "bash", Fn: runBash})
//	m.Govern(ctl, controller.PolicyPin{PolicyID: id, Version: "1"})
//	_, err = controller.RunTask(ctx, ctl, controller.TaskOptions{PolicyID: id, Version: "1"}, func(t *controller.Task) error {
//		opctx, _ := t.Context("bash")
//		_, err := m.Invoke(ctx, controller.Call{Tool: "bash", Arguments: args}, &opctx)
//		return err
//	})
package govhost

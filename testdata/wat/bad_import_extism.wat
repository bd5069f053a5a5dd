;; bad_import_extism.wat: imports a function Extism's kernel does not have.
;; Expect gate.bad_import at Load.
(module
  (import "extism:host/env" "steal_host_secrets" (func (result i64)))
  (memory (export "memory") 1)
  (func (export "gate_evaluate") (result i32) (i32.const 0)))

;; missing_export.wat: has no gate_evaluate. Expect gate.missing_export at load.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param i32) (result i32) (i32.const 65536)))

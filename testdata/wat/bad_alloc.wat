;; bad_alloc.wat: gate_alloc returns 0. Expect gate.alloc.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

;; wrong_version.wat: reports ABI version 2. Expect gate.abi_version.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 2))
  (func (export "gate_alloc") (param i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

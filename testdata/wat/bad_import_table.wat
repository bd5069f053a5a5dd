;; bad_import_table.wat: imports a table. Expect gate.bad_import at Load.
(module
  (import "wasi_snapshot_preview1" "t" (table 1 funcref))
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

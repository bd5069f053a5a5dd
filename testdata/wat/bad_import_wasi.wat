;; bad_import_wasi.wat: imports a WASI function that does not exist and one
;; with the wrong signature. Expect gate.bad_import at Load.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

;; table_grow_extern.wat: one table.grow of an externref table by 0xFFFFFFF0
;; entries (wazero alone would allocate ~32 GiB and the Go runtime would die),
;; then answers allow. Expect gate.memory_limit.
(module
  (memory (export "memory") 2)
  (table $t 0 externref)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (drop (table.grow $t (ref.null extern) (i32.const 0xFFFFFFF0)))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45))))

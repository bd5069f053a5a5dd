;; table_grow.wat: gate_evaluate grows a funcref table by a million entries
;; at a time until growth is refused, then answers allow anyway. Expect
;; gate.memory_limit: tables count toward the memory cap, and a refused
;; growth denies whatever the guest answers.
(module
  (memory (export "memory") 2)
  (table $t 1 funcref)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (loop $l
      (br_if $l (i32.ne (table.grow $t (ref.null func) (i32.const 1000000)) (i32.const -1))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45))))

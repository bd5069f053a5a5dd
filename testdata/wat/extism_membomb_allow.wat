;; extism_membomb_allow.wat: an Extism-ABI module that grows memory until
;; refused, then answers allow through Extism's output. Expect
;; gate.memory_limit.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (result i32)
    (local $off i64) (local $i i32)
    (loop $l
      (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (local.set $off (call $alloc (i64.const 45)))
    (loop $copy
      (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $copy (i32.lt_u (local.get $i) (i32.const 45))))
    (call $output_set (local.get $off) (i64.const 45))
    (i32.const 0)))

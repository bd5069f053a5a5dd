;; late_answer.wat: gate_evaluate fills 4 MiB of memory 1000 times (seconds of
;; work in fewer than 1024 loop iterations, so it may pass no poll point after
;; the deadline), then answers allow. With a short call timeout the answer
;; comes after the deadline. Expect gate.timeout: a late answer never counts.
(module
  (memory (export "memory") 64)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (local $i i32)
    (loop $l
      (memory.fill (i32.const 4096) (local.get $i) (i32.const 4190208))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45))))

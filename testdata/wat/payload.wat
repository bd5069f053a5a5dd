;; payload.wat: reads every input byte (a checksum) and always allows. Used by
;; benchmarks as the bare-wazero baseline: the same payload, no JSON.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32)
    ;; one buffer at 64 KiB; grow memory when asked for more than fits
    (if (i32.gt_u (i32.add (i32.const 65536) (local.get $n)) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.shr_u (local.get $n) (i32.const 16)) (i32.const 1))))))
    (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"echo.ok\"}")
  (func (export "gate_evaluate") (param $p i32) (param $n i32) (result i64)
    ;; touch every input byte (sum) so the call depends on the payload
    (local $i i32) (local $s i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $s (i32.add (local.get $s) (i32.load8_u (i32.add (local.get $p) (local.get $i)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 44))))

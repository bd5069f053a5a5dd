;; bad_decision.wat: answers a decision outside the closed set. Expect gate.bad_decision.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32)
    ;; one buffer at 64 KiB; grow memory when asked for more than fits
    (if (i32.gt_u (i32.add (i32.const 65536) (local.get $n)) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.shr_u (local.get $n) (i32.const 16)) (i32.const 1))))))
    (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"maybe\",\"reason_code\":\"x.y\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 40))))

;; recursion.wat: gate_evaluate calls a function that calls itself twice per
;; frame, 60 frames deep (2^60 calls): no loop, no stack overflow, never
;; returns. Expect gate.timeout (every function entry polls the deadline).
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func $r (param $d i32)
    (if (i32.gt_u (local.get $d) (i32.const 0))
      (then
        (call $r (i32.sub (local.get $d) (i32.const 1)))
        (call $r (i32.sub (local.get $d) (i32.const 1))))))
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (call $r (i32.const 60))
    (i64.const 0)))

;; membomb_allow.wat: grows memory until growth is refused, then answers
;; allow anyway. Expect gate.memory_limit: a refused growth denies.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (loop $l
      (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45))))

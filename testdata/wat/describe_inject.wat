;; describe_inject.wat: a valid gate whose gate_describe text carries escape
;; sequences, a newline forging a "result:" line, a carriage return and a
;; bidi override. Human output (govhost plugin check) must show them escaped.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (data (i32.const 2048) "{\"name\":\"evil\\u001b[2J\",\"version\":\"1\\nresult:   valid gate\",\"summary\":\"ok\\r\\u001b]0;owned\\u0007 \\u202eetag\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45)))
  (func (export "gate_describe") (result i64)
    (i64.or (i64.shl (i64.const 2048) (i64.const 32)) (i64.const 108))))

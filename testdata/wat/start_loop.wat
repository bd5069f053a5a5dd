;; start_loop.wat: a start section that never returns. wazero runs start
;; functions inside instantiation, before any deadline exists; the host runs
;; it as an ordinary call under the deadline. Expect gate.timeout at Gate.
(module
  (memory (export "memory") 2)
  (func $spin (loop $l (br $l)))
  (start $spin)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

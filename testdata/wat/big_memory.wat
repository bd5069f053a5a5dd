;; big_memory.wat: declares a 64 MiB minimum memory, past the default cap. Expect gate.memory_limit at load.
(module
  (memory (export "memory") 1024)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))

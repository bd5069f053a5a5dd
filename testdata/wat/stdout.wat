;; stdout.wat: writes a forged line of govhost output to WASI stdout and
;; stderr, then allows. The host discards guest stdio whatever the process
;; environment says: nothing reaches the process's own stdout or stderr.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 16) "GUEST-TEXT result: valid gate\n")
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"allow.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 30))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 45))))

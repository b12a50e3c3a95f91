# Warning and sanitizer settings as INTERFACE targets, linked PRIVATE by our own targets only.
add_library(oxport_warnings INTERFACE)
target_compile_options(oxport_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)

# OXPORT_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on our own code (libtorch, ONNX
# and protobuf are not instrumented). UB is fatal (-fno-sanitize-recover) so a test fails on it.
# Every executable links the runtime (add_link_options), also those that link only oxport::core,
# because the ASan runtime must be the first library loaded. Run the tests with
#   ASAN_OPTIONS=detect_leaks=0 (libtorch keeps global allocations until exit)
# as tools/sanitize.sh does.
add_library(oxport_sanitizers INTERFACE)
if(OXPORT_SANITIZE)
  set(OXPORT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  target_compile_options(oxport_sanitizers INTERFACE ${OXPORT_SANITIZE_FLAGS} -fno-omit-frame-pointer)
  target_link_options(oxport_sanitizers INTERFACE ${OXPORT_SANITIZE_FLAGS})
  add_link_options(${OXPORT_SANITIZE_FLAGS})
endif()

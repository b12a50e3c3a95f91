# Warning and sanitizer settings as INTERFACE targets, linked PRIVATE by our own targets only.
add_library(oxport_warnings INTERFACE)
target_compile_options(oxport_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)

add_library(oxport_sanitizers INTERFACE)
if(OXPORT_SANITIZE)
  target_compile_options(oxport_sanitizers INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(oxport_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

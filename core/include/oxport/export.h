// The public API's visibility. liboxport-core.so is compiled with hidden visibility: only what a
// public header declares between OXPORT_API_BEGIN and OXPORT_API_END (or marks OXPORT_API) is
// exported; the stages' own functions stay inside the library.
#pragma once

#if defined(__GNUC__)
#define OXPORT_API __attribute__((visibility("default")))
#define OXPORT_API_BEGIN _Pragma("GCC visibility push(default)")
#define OXPORT_API_END _Pragma("GCC visibility pop")
#else
#define OXPORT_API
#define OXPORT_API_BEGIN
#define OXPORT_API_END
#endif

# CPack settings: one Debian package, `oxport`, with the CLI, the studio (when built), the core
# library, its headers and CMake package, the runner script, the man page and desktop files.
#   cpack -G DEB --config build/CPackConfig.cmake      (or: cmake --build build --target package)
# Runtime dependencies are the Debian runtime packages that own the shared libraries the
# binaries link (found with `dpkg -S` on each NEEDED entry; the test package_depends checks it).
set(CPACK_PACKAGE_NAME oxport)
set(CPACK_PACKAGE_VENDOR "oxport")
set(CPACK_PACKAGE_CONTACT "oxport maintainers <oxport@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "TorchScript to ONNX exporter (CLI, studio and C++ library)")
set(CPACK_PACKAGE_DESCRIPTION "oxport converts TorchScript models (.pt files saved with torch.jit.save) \
to ONNX without Python, checks every exported model with the ONNX checker and can compare its \
outputs in ONNX Runtime with libtorch's. It ships the oxport command, the oxport-studio desktop \
application and the liboxport-core C++ library with its CMake package (find_package(Oxport)).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_INSTALL_DIRECTORY oxport)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/build[^/]*/" "/node_modules/" "/\\\\.git/" "__pycache__")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/oxport")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# libc6/libstdc++6/libgcc-s1 are needed too; they are listed so the package says it plainly.
set(OXPORT_DEB_DEPENDS
  "libtorch1.13 (>= 1.13.1)"
  "libonnx1 (>= 1.12.0)"
  "libprotobuf32 (>= 3.21)"
  "libstdc++6 (>= 12)"
  "libgcc-s1 (>= 3.0)"
  "libc6 (>= 2.34)")
if(OXPORT_WITH_GUI)
  # (QtConcurrent is header-only as the studio uses it: libQt6Concurrent is not NEEDED.)
  list(APPEND OXPORT_DEB_DEPENDS "libqt6widgets6 (>= 6.2)" "libqt6gui6 (>= 6.2)" "libqt6core6 (>= 6.2)")
endif()
list(JOIN OXPORT_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Verification (--verify, the studio's Verify) runs ONNX Runtime in node; onnxruntime-node itself
# comes from npm (see README "Install").
# The Python module (python/) runs under the system Python with its torch (the same libtorch).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "nodejs (>= 18), python3-torch (>= 1.13.1)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "npm")

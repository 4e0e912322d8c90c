# What `cmake --install` puts under the prefix, laid out as the driver looks
# for it beside its own executable (<prefix>/bin/cleave):
#   bin/      cleave, cleave-bundle-info, cleave-calibrate
#   lib/      libcleave_rt.so (programs that cleave builds get an rpath to
#             it), CleavePasses.so (opt -load-pass-plugin), cmake/Cleave/
#   include/  the runtime's public headers (cleave_rt.h, cleave/)
#   share/cleave/compat    the CUDA compatibility headers
#   share/cleave/profiles  the measured device profiles
# The directories are fixed names, not GNUInstallDirs' (lib/<multiarch> on
# Debian), because the driver finds them relative to itself. CMake users get
# imported targets through find_package(Cleave) (CleaveConfig.cmake.in), and
# CPack makes a Debian package of the same tree.
include(CMakePackageConfigHelpers)

set(CLEAVE_INSTALL_CMAKE_DIR lib/cmake/Cleave)

if(TARGET cleave)
  install(TARGETS cleave EXPORT CleaveTargets RUNTIME DESTINATION bin)
  install(TARGETS cleave-bundle-info EXPORT CleaveTargets
    RUNTIME DESTINATION bin)
  # opt loads the plugin by path: no soname, no rpath of its own beyond
  # libLLVM's directory.
  install(TARGETS CleavePasses EXPORT CleaveTargets LIBRARY DESTINATION lib)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/compat/cuda
    ${PROJECT_SOURCE_DIR}/compat/host DESTINATION share/cleave/compat)
  # The declarations of the calls CUDA 13 removed, which the frontend
  # force-includes, beside the compatibility headers (as in the build tree).
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/cleave/cuda_removed_api.h
    DESTINATION share/cleave/compat/cuda/cleave)
endif()
if(TARGET cleave-calibrate)
  install(TARGETS cleave-calibrate EXPORT CleaveTargets RUNTIME DESTINATION bin)
endif()
if(TARGET cleave-rt-shared)
  set_target_properties(cleave-rt-shared PROPERTIES EXPORT_NAME cleave_rt)
  install(TARGETS cleave-rt-shared EXPORT CleaveTargets
    LIBRARY DESTINATION lib INCLUDES DESTINATION include)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/cleave_rt.h
  DESTINATION include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/cleave
  DESTINATION include)
# The facts the compiler and the runtime share, when the tree has them.
if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/include/cleave/ABI)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cleave/ABI
    DESTINATION include/cleave)
endif()
# `cleave analyze` reads its default profile here; CLEAVE_PROFILE can name
# any of them for the runtime's model policy.
file(GLOB CLEAVE_PROFILES ${PROJECT_SOURCE_DIR}/profiles/*.json)
install(FILES ${CLEAVE_PROFILES} DESTINATION share/cleave/profiles)

install(EXPORT CleaveTargets NAMESPACE Cleave::
  DESTINATION ${CLEAVE_INSTALL_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/CleaveConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/CleaveConfig.cmake
  INSTALL_DESTINATION ${CLEAVE_INSTALL_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/CleaveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/CleaveConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/CleaveConfigVersion.cmake
  DESTINATION ${CLEAVE_INSTALL_CMAKE_DIR})

# cpack -G DEB (in the build directory): the same tree under /usr.
set(CPACK_PACKAGE_NAME cleave)
set(CPACK_PACKAGE_VENDOR "Cleave")
set(CPACK_PACKAGE_CONTACT "Cleave maintainers <cleave@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "CUDA source-to-source compiler and runtime for the CPU and every GPU")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Named rather than left to dpkg-shlibdeps, which on Debian 12 lists
# libllvm19 in some runs and not in others. The driver needs LLVM and Clang
# 19's libraries, clang-19's resource headers and a host C++ compiler; the
# runtime needs oneTBB. CUDA's headers (/usr/local/cuda) come from NVIDIA.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libllvm19, libclang-cpp19, clang-19, libtbb12, libstdc++6, libc6, g++ | clang-19")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "llvm-19")
include(CPack)

# Cleave's lit suite. Substitutions:
#   %opt            opt-19 from the LLVM Cleave was built against
#   %cleave_plugin  the pass plugin (CleavePasses.so)
#   %cleave         the driver
#   %cuda_to_ir     device code of a .cu file to optimized nvptx64 IR (clang 19)
#   %cl_to_ir       an OpenCL C file to optimized nvptx64 IR linked with libclc
#   %llc_ptx        LLVM IR to PTX for sm_90
#   %ptxas          CUDA's ptxas, when present (feature "ptxas")
#   %strip_comments a source's copy without comments (test/utils), which
#                   source-to-source tests rewrite so that no CHECK line
#                   reaches the output they check
import os
import shutil
import sys
import lit.formats

config.name = "Cleave"
config.test_format = lit.formats.ShTest(not lit_config.quiet)
config.suffixes = [".ll", ".cu", ".cl", ".test"]
config.excludes = ["Inputs", "utils"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cleave_obj_root, "test")

tools = config.llvm_tools_dir
# The runtime's headers include cleave/ABI/ (the build links it there alone).
abi_include = os.path.join(config.cleave_obj_root, "runtime", "abi-include")
config.environment["PATH"] = os.pathsep.join(
    [tools, config.environment.get("PATH", os.environ.get("PATH", ""))])
# The model policy (the default) persists its performance tables; tests
# leave the user's cache alone (a test of the cache names its own).
config.environment["CLEAVE_CACHE_DIR"] = "off"

compat = os.path.join(config.cleave_src_root, "compat", "cuda")
cuda_flags = ("-x cuda --cuda-device-only --cuda-gpu-arch=sm_90 "
              "--cuda-path=%s -Wno-unknown-cuda-version -isystem %s "
              "-isystem %s/include/cccl "
              "-O2 -S -emit-llvm" % (config.cuda_path, compat, config.cuda_path))
clc = os.path.join(config.libclc_dir, "nvptx64--nvidiacl.bc")
cl_flags = ("-x cl -cl-std=CL1.2 -target nvptx64--nvidiacl -O2 -S -emit-llvm "
            "-Xclang -finclude-default-header "
            "-Xclang -mlink-builtin-bitcode -Xclang %s" % clc)

config.substitutions.append(("%opt", os.path.join(tools, "opt")))
config.substitutions.append(("%cleave_plugin", config.cleave_plugin))
config.substitutions.append(("%cleave_serve", os.path.join(config.cleave_obj_root, "bin", "cleave-serve")))
config.substitutions.append(("%cleave", config.cleave_tool))
config.substitutions.append(("%cuda_to_ir", "%s %s" % (os.path.join(tools, "clang++"), cuda_flags)))
config.substitutions.append(("%cl_to_ir", "%s %s" % (os.path.join(tools, "clang"), cl_flags)))
config.substitutions.append(("%llc_ptx", "%s -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90" % os.path.join(tools, "llc")))
config.substitutions.append(("%strip_comments", "%s %s" % (sys.executable, os.path.join(config.test_source_root, "utils", "strip-comments.py"))))
config.substitutions.append(("%runtime_unittests", os.path.join(config.cleave_obj_root, "unittests", "CleaveRuntimeTests")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# cleave-bundle-info prints a bundle through the runtime's reader.
config.substitutions.append(("%bundle_info", os.path.join(config.cleave_obj_root, "bin", "cleave-bundle-info")))

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas + " -arch=sm_90"))
# CPU variants (test/CPU): device IR -> object, and the C++ side of the
# differential tests (driver compile, then link with the CPU runtime).
config.substitutions.append(("%cpu_compile", os.path.join(config.cleave_obj_root, "bin", "cleave-cpu-test")))
config.substitutions.append(("%cpu_cxx", "%s -std=c++17 -O1 -DCLEAVE_HOST_DRIVER -I%s -I%s -I%s -x c++ -c" % (os.path.join(tools, "clang++"), os.path.join(config.cleave_src_root, "runtime", "include"), abi_include, os.path.join(config.cleave_src_root, "test", "CPU", "Inputs"))))
config.substitutions.append(("%cpu_ld", "%s -o" % os.path.join(tools, "clang++")))
config.substitutions.append(("%rt_footprint", os.path.join(config.cleave_obj_root, "runtime", "libcleave-rt-footprint.a")))
config.substitutions.append(("%cpu_rt", "%s -ltbb -lpthread" % os.path.join(config.cleave_obj_root, "runtime", "libcleave-rt-cpu.a")))
# The launch engine (test/Runtime/Engine): a C++ harness compiled against the
# runtime's headers and linked with its libraries and a CPU-variant object.
config.substitutions.append(("%rt_cxx", "%s -std=c++17 -O1 -I%s -I%s -x c++ -c" % (os.path.join(tools, "clang++"), os.path.join(config.cleave_src_root, "runtime", "include"), abi_include)))
config.substitutions.append(("%rt_libs", " ".join(os.path.join(config.cleave_obj_root, "runtime", l) for l in ["libcleave-rt.a", "libcleave-rt-bundle.a", "libcleave-rt-footprint.a", "libcleave-rt-cpu.a", "libcleave-rt-profile.a"]) + " -ltbb -ldl -lpthread"))
# The CUDA-runtime subset (test/Runtime/Api): a C++ program compiled against
# CUDA's and the runtime's headers, linked with libcleave_rt.so alone.
config.substitutions.append(("%api_cxx", "%s -std=c++17 -O1 -I%s -I%s -isystem %s/include -x c++ -c" % (os.path.join(tools, "clang++"), os.path.join(config.cleave_src_root, "runtime", "include"), abi_include, config.cuda_path)))
config.substitutions.append(("%api_libs", "-L{0} -lcleave_rt -Wl,-rpath,{0}".format(os.path.join(config.cleave_obj_root, "lib"))))
if os.path.exists(os.path.join(config.cleave_obj_root, "lib", "libcleave_rt.so")):
    config.available_features.add("cleave-rt-api")
# Programs that `cleave compile` builds link libcleave_rt.so (test/Driver
# needs feature "cleave-rt-api" for them); %libcleave_rt names the library.
config.substitutions.append(("%libcleave_rt", os.path.join(config.cleave_obj_root, "lib", "libcleave_rt.so")))
# test/Install: the installed tree (cmake --install) and the Debian package
# (cpack -G DEB) of the build, used as a user would.
config.substitutions.append(("%build_root", config.cleave_obj_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%src_root", config.cleave_src_root))
if shutil.which("cmake") and shutil.which("ninja"):
    config.available_features.add("cmake")
if shutil.which("cpack") and shutil.which("dpkg-deb"):
    config.available_features.add("cpack-deb")

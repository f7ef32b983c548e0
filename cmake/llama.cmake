# Included by llama.cpp's own project() when tauray builds llama-cpp-python
# (`make test`, `make llamacpp`: CMAKE_PROJECT_llama.cpp_INCLUDE). Two concerns:
#
# 1. Only what the bindings load. The Python bindings load libllama and the ggml
#    libraries only; llama.cpp's "common" helper library (argument parsing,
#    downloads, chat templates for its CLI tools) is about half of the build and
#    nothing tauray imports uses it, so it is switched off. llama-cpp-python forces
#    it on before llama.cpp's project() runs; this runs after, and wins.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama.cpp: build common utils library (off: tauray needs libllama only)" FORCE)

# 2. A portable CPU build (issue 33). llama.cpp's default is GGML_NATIVE=ON, i.e.
#    -march=native: the library is tuned to the machine that compiled it. On an
#    AMX CPU (Intel Sapphire Rapids and later) that turns on ggml's AMX matmul
#    kernel, and llama-cpp-python 0.3.36's build of it segfaults in
#    ggml_backend_amx_mul_mat on the first generation; a library built on one
#    machine may also use instructions the next machine lacks. So: no native
#    tuning, a fixed instruction set every x86-64 machine of this kind has
#    (x86-64-v3: AVX2, FMA, F16C, BMI2; the ~4x faster path over SSE-only), no
#    AVX-512, no AMX, and no runtime CPU-variant loading (GGML_BACKEND_DL /
#    GGML_CPU_ALL_VARIANTS would build and pick a Sapphire Rapids variant with
#    AMX on such a CPU). tests/serve/test_portable_build.py checks the built
#    library for any AMX code path.
#
#    These are cache defaults without FORCE: a -D in the user's own CMAKE_ARGS
#    (say -DGGML_NATIVE=ON on a machine that never moves) still wins, and so do
#    GPU options such as -DGGML_CUDA=on, which this file does not touch. On a
#    non-x86 CPU ggml ignores the x86 options.
set(GGML_NATIVE OFF CACHE BOOL "ggml: -march=native (off: tauray's build must run on any machine of its kind)")
set(GGML_BACKEND_DL OFF CACHE BOOL "ggml: backends as loadable libraries (off: no runtime CPU-variant selection)")
set(GGML_CPU_ALL_VARIANTS OFF CACHE BOOL "ggml: every CPU variant (off: one portable variant)")
foreach(_isa SSE42 AVX AVX2 FMA F16C BMI2)
    set(GGML_${_isa} ON CACHE BOOL "ggml: ${_isa} (on: part of x86-64-v3, on every machine of tauray's kind)")
endforeach()
foreach(_isa AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 AVX_VNNI AMX_TILE AMX_INT8 AMX_BF16)
    set(GGML_${_isa} OFF CACHE BOOL "ggml: ${_isa} (off: not on every machine; AMX crashes, see above)")
endforeach()

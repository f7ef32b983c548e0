# Included by llama.cpp's own project() when `make test` builds llama-cpp-python
# (CMAKE_PROJECT_llama.cpp_INCLUDE). The Python bindings load libllama and the
# ggml libraries only; llama.cpp's "common" helper library (argument parsing,
# downloads, chat templates for its CLI tools) is about half of the build and
# nothing tauray imports uses it, so it is switched off here. llama-cpp-python
# forces it on before llama.cpp's project() runs; this runs after, and wins.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama.cpp: build common utils library (off: tauray needs libllama only)" FORCE)

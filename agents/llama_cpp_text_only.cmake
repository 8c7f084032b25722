# Read by llama.cpp's CMake right after its project() call (the Makefile passes it to the llama-cpp-python build as
# CMAKE_PROJECT_llama.cpp_INCLUDE). llama-cpp-python forces llama.cpp's `common` library on for its image library
# (libmtmd); with that off (LLAVA_BUILD=OFF) nothing links `common`, which is two thirds of the compile (the chat
# templates, argument parsing, JSON schemas): 304 s -> 108 s on two cores. The Python package loads only libllama
# and ggml for text.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)

//===- cleave-serve.cpp - The per-machine device server ------------------===//
//
// Part of Cleave. Programs built by `cleave compile` and run with
// CLEAVE_SERVER=PATH send their CUDA calls to this server, which runs them
// on its devices through one runtime (docs/serve.md). The server is in
// libcleave_rt.so, the runtime the programs use, so that the CPU images
// they pass it resolve against the same runtime.
//
//===----------------------------------------------------------------------===//

extern "C" int cleave_serve_main(int argc, char **argv);

int main(int argc, char **argv) { return cleave_serve_main(argc, argv); }

// gpubench: bandwidth and roofline microbenchmarks for NVIDIA GPUs. See README.md.
#include "harness/app.h"

int main(int argc, char** argv) { return gpubench::run_app(argc, argv); }

#include "harness/cli/commands.h"

int main(int argc, char** argv) { return harness::Main(argc, argv); }

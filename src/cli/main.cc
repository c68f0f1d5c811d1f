#include "cli/commands.h"

int main(int argc, char** argv) { return trainplan::cli::Main(argc, argv); }

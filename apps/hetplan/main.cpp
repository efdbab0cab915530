// The hetplan command: plan, simulate, compare, list (apps/hetplan/commands.hpp).
#include <string>
#include <vector>

#include "commands.hpp"

int main(int argc, char** argv) { return hetplan::app::run(std::vector<std::string>(argv + 1, argv + argc)); }
